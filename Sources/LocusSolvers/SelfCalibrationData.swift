import LocusCore
import LocusNumerics

/// The ranges of one floor arranged for a calibration without truth (`SelfCalibration`): tag ranges
/// grouped into epochs (one tag, one round of ranging), and ranges measured between locators.
///
/// An epoch is a run of one tag's ranges, in time order, that names each locator at most once and
/// spans at most `epochSpanSeconds`: a round of two-way ranging. Ranges to the same locator again,
/// or a gap, start the next epoch. A tag that ranges one locator at a time (a round robin: rounds of
/// one range) gets its polling cycles as epochs instead, each range carried to one time
/// (`SelfCalibrationData+Cycles.swift`).
package struct SelfCalibrationData: Sendable {
    /// Per range, grouped by epoch: the locator (slot in the floor's `locators`), range, time.
    private(set) var slots: [Int] = []
    private(set) var rangesMeters: [Double] = []
    private(set) var timesSeconds: [Double] = []
    /// The first range of each epoch, then the end (`epochCount + 1` entries).
    private(set) var epochStarts: [Int] = [0]
    /// The tag of each epoch (an index the caller chose; epochs of one tag are consecutive).
    private(set) var epochTags: [Int] = []
    /// Ranges measured between two locators (slots), metres.
    private(set) var pairs: [(a: Int, b: Int, rangeMeters: Double)] = []
    /// The floor's range differences (TDoA), arranged for `DifferenceSelfCalibration`; nil when there were none.
    private(set) var differences: DifferenceSelfCalibrationData?

    /// No ranges.
    init() {}

    /// Number of epochs.
    var epochCount: Int { epochTags.count }
    /// Number of tag ranges.
    package var rangeCount: Int { slots.count }
    /// Number of range-difference rows arranged (`DifferenceSelfCalibrationData.differenceCount`).
    package var differenceCount: Int { differences?.differenceCount ?? 0 }

    /// Adds one tag's ranges, in time order, split into epochs: its rounds, or, when the rounds are a
    /// round robin of one range each (`isRoundRobin`), its polling cycles (`cycles(of:cycleSpanSeconds:)`).
    /// - Parameters:
    ///   - ranges: (slot, range, time) in non-decreasing time.
    ///   - tag: the tag's index (distinct per call).
    ///   - epochSpanSeconds: the longest epoch.
    ///   - cycleSpanSeconds: in a round robin, the longest gap between two ranges of a locator that
    ///     an interpolation bridges.
    mutating func appendTag(_ ranges: [(slot: Int, rangeMeters: Double, timeSeconds: Double)], tag: Int,
                            epochSpanSeconds: Double = 0.1, cycleSpanSeconds: Double = 1.5) {
        for r in ranges {
            precondition(r.slot >= 0 && r.rangeMeters.isFinite && r.timeSeconds.isFinite,
                         "SelfCalibrationData.appendTag: slots ≥ 0, finite values")
        }
        let rounds = Self.rounds(of: ranges, epochSpanSeconds: epochSpanSeconds)
        if Self.isRoundRobin(roundSizes: rounds.map(\.count), locatorCount: Set(ranges.map(\.slot)).count) {
            for cycle in Self.cycles(of: ranges, cycleSpanSeconds: cycleSpanSeconds) {
                for r in cycle.ranges { append(slot: r.slot, rangeMeters: r.rangeMeters, timeSeconds: cycle.timeSeconds) }
                closeEpoch(tag: tag)
            }
        } else {
            for round in rounds {
                for r in ranges[round] { append(slot: r.slot, rangeMeters: r.rangeMeters, timeSeconds: r.timeSeconds) }
                closeEpoch(tag: tag)
            }
        }
    }

    /// Adds one range to the open epoch.
    private mutating func append(slot: Int, rangeMeters: Double, timeSeconds: Double) {
        slots.append(slot)
        rangesMeters.append(rangeMeters)
        timesSeconds.append(timeSeconds)
    }

    /// A tag's ranges split into rounds (index ranges into `ranges`): a range to a locator the round
    /// already holds, or more than `epochSpanSeconds` after the round's first range, starts the next.
    static func rounds(of ranges: [(slot: Int, rangeMeters: Double, timeSeconds: Double)],
                       epochSpanSeconds: Double) -> [Range<Int>] {
        var starts: [Int] = []
        var seen = Set<Int>()
        var start = -Double.infinity
        for (k, r) in ranges.enumerated() {
            if seen.contains(r.slot) || r.timeSeconds - start > epochSpanSeconds {
                starts.append(k)
                seen.removeAll(keepingCapacity: true)
                start = r.timeSeconds
            }
            seen.insert(r.slot)
        }
        return zip(starts, starts.dropFirst() + [ranges.count]).map { $0..<$1 }
    }

    /// Adds a range measured from locator `a` to locator `b` (slots), metres.
    mutating func appendPair(_ a: Int, _ b: Int, rangeMeters: Double) {
        precondition(a >= 0 && b >= 0 && a != b && rangeMeters.isFinite, "SelfCalibrationData.appendPair: two slots, a finite range")
        pairs.append((a, b, rangeMeters))
    }

    /// Ends the open epoch (when it holds ranges).
    private mutating func closeEpoch(tag: Int) {
        guard slots.count > epochStarts[epochStarts.count - 1] else { return }
        epochStarts.append(slots.count)
        epochTags.append(tag)
    }
}

extension SelfCalibrationData {
    /// The measurements of one floor arranged: each tag's ranges in time order (ties in the given
    /// order) split into epochs, tags in order of first appearance; a "tag" whose id is the address
    /// of one of the floor's locators (`0x9DD8` or `40408`) and that ranges every locator it reaches
    /// from one place (their ranges vary by less than 0.2 m, 1.4826·MAD, at least two locators) is
    /// that locator ranging the others: its rows become ranges between locators. Measurements to a
    /// locator the floor does not have are left out (the caller counts them). `differences`, the
    /// floor's range differences, are arranged by `DifferenceSelfCalibrationData(differences:floor:)`.
    package init(measurements: [RangeMeasurement], differences: [RangeDifference] = [], floor: Floor, epochSpanSeconds: Double = 0.1) {
        self.init()
        if !differences.isEmpty { self.differences = DifferenceSelfCalibrationData(differences: differences, floor: floor) }
        var slotOf: [UInt16: Int] = [:]
        for (slot, locator) in floor.locators.enumerated() { slotOf[locator.address.rawValue] = slot }
        var order: [TagID] = []
        var rowsOf: [TagID: [Int]] = [:]
        for (k, m) in measurements.enumerated() where slotOf[m.locator.rawValue] != nil {
            if rowsOf[m.tag] == nil { order.append(m.tag) }
            rowsOf[m.tag, default: []].append(k)
        }
        for (tagIndex, tag) in order.enumerated() {
            let rows = rowsOf[tag, default: []].enumerated()
                .sorted { a, b in
                    let ta = measurements[a.element].timeSeconds, tb = measurements[b.element].timeSeconds
                    return ta < tb || (ta == tb && a.offset < b.offset)
                }
                .map(\.element)
            if let source = LocatorAddress(parsing: tag.rawValue).flatMap({ slotOf[$0.rawValue] }),
               Self.rangesFromOnePlace(rows.map { (measurements[$0].locator.rawValue, measurements[$0].rangeMeters) }) {
                for k in rows {
                    let slot = slotOf[measurements[k].locator.rawValue]!
                    if slot != source { appendPair(source, slot, rangeMeters: measurements[k].rangeMeters) }
                }
                continue
            }
            appendTag(rows.map { (slotOf[measurements[$0].locator.rawValue]!, measurements[$0].rangeMeters, measurements[$0].timeSeconds) },
                      tag: tagIndex, epochSpanSeconds: epochSpanSeconds)
        }
    }

    /// Whether ranges (locator, metres) come from one place: at least two locators, and the ranges
    /// to each vary by less than 0.2 m (1.4826·MAD, both medians by the upper-median convention).
    static func rangesFromOnePlace(_ ranges: [(UInt16, Double)]) -> Bool {
        var byLocator: [UInt16: [Double]] = [:]
        for (locator, range) in ranges { byLocator[locator, default: []].append(range) }
        guard byLocator.count >= 2 else { return false }
        for values in byLocator.values {
            let spread = RobustStatistics.upperMedianAbsoluteDeviation(sorted: values.sorted())
            if RobustStatistics.madToSigma * spread > 0.2 { return false }
        }
        return true
    }
}
