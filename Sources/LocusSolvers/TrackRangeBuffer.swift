import LocusCore

/// The latest range to each recently heard locator, for (re-)initialising a tightly coupled track.
///
/// At most `capacity` locators are kept (the oldest entry is replaced when full); storage is reserved
/// once, so inserting never allocates.
struct TrackRangeBuffer: Sendable {
    struct Entry: Sendable {
        var address: LocatorAddress
        var anchor: Point3
        var rangeMeters: Double
        var timeSeconds: Double
    }

    static let capacity = 16
    private(set) var entries: ContiguousArray<Entry>

    init() {
        entries = []
        entries.reserveCapacity(Self.capacity)
    }

    mutating func removeAll() { entries.removeAll(keepingCapacity: true) }

    /// Keeps this range as the latest of its locator.
    mutating func insert(_ entry: Entry) {
        if let i = entries.firstIndex(where: { $0.address == entry.address }) {
            entries[i] = entry
        } else if entries.count < Self.capacity {
            entries.append(entry)
        } else {
            var oldest = 0
            for i in entries.indices where entries[i].timeSeconds < entries[oldest].timeSeconds { oldest = i }
            entries[oldest] = entry
        }
    }

    /// Planar least-squares position from the ranges no older than `windowSeconds` before `newestSeconds`,
    /// solved by the `Trilaterator` (robust weighted least squares, planar at the tag height h).
    /// Returns the position and its covariance (m²), or nil when fewer than `minimumLocators` ranges
    /// are usable or the solver refuses them (degenerate geometry, divergence). Allocates (it runs
    /// once per (re-)initialisation, not per measurement).
    func solve(newestSeconds: Double, windowSeconds: Double, tagHeightMeters h: Double, minimumLocators: Int,
               sigmaMeters: Double) -> (x: Double, y: Double, cxx: Double, cxy: Double, cyy: Double)? {
        var anchors: [Point3] = []
        var ranges: [Double] = []
        for e in entries where newestSeconds - e.timeSeconds <= windowSeconds {
            anchors.append(e.anchor)
            ranges.append(e.rangeMeters)
        }
        guard anchors.count >= max(3, minimumLocators) else { return nil }
        let solver = Trilaterator(configuration: TrilaterationConfiguration(mode: .planar, tagHeightMeters: h,
                                                                            sigmaMeters: sigmaMeters))
        do {
            let s = try solver.solve(locators: anchors, rangesMeters: ranges)
            let c = s.covariance
            guard s.position.isFinite, c.isFinite, c.xx > 0, c.yy > 0 else { return nil }
            return (s.position.x, s.position.y, c.xx, c.xy, c.yy)
        } catch {
            return nil
        }
    }
}
