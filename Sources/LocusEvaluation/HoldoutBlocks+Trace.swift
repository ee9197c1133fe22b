import Locus
import LocusIO
import LocusSolvers

extension HoldoutBlocks {
    /// The blocks of `blockSeconds` over `trace`'s rows.
    init(trace: RangeTrace, blockSeconds: Double) {
        self.init(times: trace.rows.lazy.map(\.timeSeconds), blockSeconds: blockSeconds)
    }

    /// `trace`'s rows of even blocks (the fit set) and of odd blocks (the held-out set).
    func split(_ trace: RangeTrace) -> (fit: RangeTrace, heldOut: RangeTrace) {
        (trace.subset { !isHeldOut(trace.rows[$0].timeSeconds) }, trace.subset { isHeldOut(trace.rows[$0].timeSeconds) })
    }

    /// The truth-free validation's halves of `trace` (`SiteCalibration.Halves`): blocks of
    /// `blockSeconds`, each floor's `data` of the fit rows and of the held-out rows, and their counts.
    static func halves(of trace: RangeTrace, blockSeconds: Double,
                       data: (RangeTrace) -> [SelfCalibrationData]) -> SiteCalibration.Halves {
        let blocks = HoldoutBlocks(trace: trace, blockSeconds: blockSeconds)
        let (fit, heldOut) = blocks.split(trace)
        return (blocks, data(fit), data(heldOut), fit.rows.count, heldOut.rows.count)
    }
}
