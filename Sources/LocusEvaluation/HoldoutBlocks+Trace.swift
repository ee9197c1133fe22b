import Locus
import LocusIO

extension HoldoutBlocks {
    /// The blocks of `blockSeconds` over `trace`'s rows.
    init(trace: RangeTrace, blockSeconds: Double) {
        self.init(times: trace.rows.lazy.map(\.timeSeconds), blockSeconds: blockSeconds)
    }

    /// `trace`'s rows of even blocks (the fit set) and of odd blocks (the held-out set).
    func split(_ trace: RangeTrace) -> (fit: RangeTrace, heldOut: RangeTrace) {
        (trace.subset { !isHeldOut(trace.rows[$0].timeSeconds) }, trace.subset { isHeldOut(trace.rows[$0].timeSeconds) })
    }
}
