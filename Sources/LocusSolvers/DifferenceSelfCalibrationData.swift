import LocusCore

/// The range differences (TDoA) of one floor arranged for a calibration without truth
/// (`DifferenceSelfCalibration`): per blink, the arrivals of one tag's transmission as
/// pseudo-ranges.
///
/// A blink is a run of one tag's difference rows with the same time and the same reference A,
/// naming each other locator B at most once (a repeated B, another time or another reference start
/// the next). Its arrivals are the pseudo-ranges yᵢ, metres: y_A = 0 for the reference and
/// y_B = z_AB = d(tag, B) − d(tag, A) (+ biases, noise) for the others, so that
///   yᵢ = ‖p − aᵢ‖ + bᵢ + τ + εᵢ,  εᵢ independent, σ² per arrival,
/// with τ the blink's unknown offset (−d(tag, A) − b_A − ε_A). Eliminating τ gives back the
/// differences with their covariance σ²(I + 11ᵀ) (`DifferenceModel`): the nuisance offset per blink
/// is the pseudo-range form of the group's correlation.
struct DifferenceSelfCalibrationData: Sendable {
    /// Per arrival, grouped by blink: the locator (slot in the floor's `locators`) and its pseudo-range.
    private(set) var slots: [Int] = []
    private(set) var pseudoRangesMeters: [Double] = []
    /// The first arrival of each blink, then the end (`blinkCount + 1` entries).
    private(set) var blinkStarts: [Int] = [0]
    /// Per blink: the tag's index (blinks of one tag consecutive), the time (s) and the reference's slot.
    private(set) var blinkTags: [Int] = []
    private(set) var blinkTimes: [Double] = []
    private(set) var blinkReferences: [Int] = []
    /// Difference rows used.
    private(set) var differenceCount = 0

    /// No blinks.
    init() {}

    /// Number of blinks.
    var blinkCount: Int { blinkTags.count }
    /// Number of arrivals (differences plus one reference per blink).
    var arrivalCount: Int { slots.count }

    /// The differences of one floor arranged: each tag's rows in time order (ties in the given
    /// order), tags in order of first appearance, grouped into blinks. Rows naming a locator the
    /// floor does not have are left out (the caller counts them).
    init(differences: [RangeDifference], floor: Floor) {
        self.init()
        var slotOf: [UInt16: Int] = [:]
        for (slot, locator) in floor.locators.enumerated() { slotOf[locator.address.rawValue] = slot }
        var order: [TagID] = []
        var rowsOf: [TagID: [Int]] = [:]
        for (k, d) in differences.enumerated()
        where slotOf[d.reference.rawValue] != nil && slotOf[d.locator.rawValue] != nil && d.differenceMeters.isFinite {
            if rowsOf[d.tag] == nil { order.append(d.tag) }
            rowsOf[d.tag, default: []].append(k)
        }
        for (tagIndex, tag) in order.enumerated() {
            let rows = rowsOf[tag, default: []].enumerated()
                .sorted { a, b in
                    let ta = differences[a.element].timeSeconds, tb = differences[b.element].timeSeconds
                    return ta < tb || (ta == tb && a.offset < b.offset)
                }
                .map(\.element)
            var seen = Set<Int>()
            var open: (time: Double, reference: Int)?
            for k in rows {
                let d = differences[k]
                let a = slotOf[d.reference.rawValue]!, b = slotOf[d.locator.rawValue]!
                if open == nil || open!.time != d.timeSeconds || open!.reference != a || seen.contains(b) {
                    closeBlink()
                    seen = [a]
                    open = (d.timeSeconds, a)
                    slots.append(a)
                    pseudoRangesMeters.append(0)
                    blinkTags.append(tagIndex)
                    blinkTimes.append(d.timeSeconds)
                    blinkReferences.append(a)
                }
                seen.insert(b)
                slots.append(b)
                pseudoRangesMeters.append(d.differenceMeters)
                differenceCount += 1
            }
            closeBlink()
        }
    }

    /// Ends the open blink (when one is open).
    private mutating func closeBlink() {
        if blinkStarts.count <= blinkTags.count { blinkStarts.append(slots.count) }
    }
}
