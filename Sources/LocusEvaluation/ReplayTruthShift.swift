import LocusCore
import LocusIO
import LocusSolvers

/// `locus replay --truth-shift SECONDS|auto`: the shift δ used to compare a fix at t with the truth
/// at t + δ, and where it came from.
struct ReplayTruthShift: Equatable {
    /// Where δ came from.
    enum Source: String {
        /// `--truth-shift SECONDS`.
        case given
        /// `--truth-shift auto`: estimated from the range residuals (`TruthClockAlignment`).
        case auto
    }

    /// δ, seconds.
    var seconds: Double
    var source: Source

    /// The summary line, e.g. `truth shift: +0.087 s (auto, from range residuals)`.
    var text: String {
        let sign = seconds < 0 ? "-" : "+"
        let detail = source == .auto ? "auto, from range residuals" : "given"
        return "truth shift: \(sign)\(DecimalText.string(abs(seconds), decimals: 3)) s (\(detail))"
    }

    /// δ̂ from the trace and the truth alone (never from fixes): every row on a known floor and
    /// locator whose tag has truth gives dₖ = `Locator.correctedRange(r)` against the locator's
    /// position, with the tag at the floor's `tagHeightM` on floors `solver` treats as planar (the
    /// rule of `calibrate --height auto`) and at the truth's z otherwise.
    /// - Parameter defaultFloor: index of the floor for rows without a floor column.
    static func estimate(trace: RangeTrace, truth: GroundTruth, site: Site, defaultFloor: Int,
                         solver: TrilaterationConfiguration,
                         configuration: TruthClockAlignmentConfiguration = .standard) -> TruthClockAlignment {
        let traceFloors: [Int?] = trace.floors.map { id in site.floors.firstIndex { $0.id == id } }
        let slotMaps: [[UInt16: Int]] = site.floors.map { floor in
            var map: [UInt16: Int] = [:]
            for (slot, locator) in floor.locators.enumerated() { map[locator.address.rawValue] = slot }
            return map
        }
        let slotBase: [Int] = site.floors.indices.map { f in site.floors[..<f].reduce(0) { $0 + $1.locators.count } }
        let planarHeight: [Double?] = site.floors.map { floor in
            solver.resolvedMode(for: floor.locators.map(\.position)) == .planar ? floor.tagHeightMeters : nil
        }
        var tracks: [TruthClockAlignment.Track] = []
        let trackOfTag: [Int?] = trace.tags.map { tag in
            guard let track = truth.samples(of: tag) else { return nil }
            tracks.append(TruthClockAlignment.Track(timeSeconds: track.timeSeconds, points: track.points))
            return tracks.count - 1
        }
        var rows: [TruthClockAlignment.Row] = []
        rows.reserveCapacity(trace.rows.count)
        // The shift is fitted on ranges (a difference row's time would serve as well; ranges suffice).
        for row in trace.rows where !row.isDifference {
            guard let track = trackOfTag[Int(row.tagIndex)] else { continue }
            var f = defaultFloor
            if row.floorIndex >= 0 {
                guard let known = traceFloors[Int(row.floorIndex)] else { continue }
                f = known
            }
            guard let slot = slotMaps[f][row.locator] else { continue }
            let locator = site.floors[f].locators[slot]
            rows.append(TruthClockAlignment.Row(timeSeconds: row.timeSeconds, trackIndex: track, locatorIndex: slotBase[f] + slot,
                                                correctedRangeMeters: locator.correctedRange(row.rangeMeters),
                                                locator: locator.position, tagHeightMeters: planarHeight[f]))
        }
        return TruthClockAlignment.estimate(rows: rows, tracks: tracks, configuration: configuration)
    }

    /// The stderr warning for an estimate that fell back to 0 (`TruthClockAlignment.fallbackReason`), or nil.
    static func warning(for alignment: TruthClockAlignment, configuration: TruthClockAlignmentConfiguration = .standard) -> String? {
        alignment.fallbackReason(configuration: configuration).map { "locus replay: warning: --truth-shift auto: \($0): using 0 s\n" }
    }
}
