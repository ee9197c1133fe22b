import LocusCore

/// The latest range to each recently heard locator, for (re-)initialising a tightly coupled track.
///
/// At most `capacity` locators are kept (the oldest entry is replaced when full); storage grows to the
/// number of locators heard and is then reused, so steady-state inserts never allocate.
struct TrackRangeBuffer: Sendable {
    /// One range. The anchor is kept in single precision (32 bytes an entry instead of 48: memory
    /// per tracked tag); it only seeds (re)initialisation, where 1e-7 relative is far below σ.
    struct Entry: Sendable {
        var address: LocatorAddress
        private var anchorX: Float, anchorY: Float, anchorZ: Float
        var rangeMeters: Double
        var timeSeconds: Double

        init(address: LocatorAddress, anchor: Point3, rangeMeters: Double, timeSeconds: Double) {
            self.address = address
            anchorX = Float(anchor.x); anchorY = Float(anchor.y); anchorZ = Float(anchor.z)
            self.rangeMeters = rangeMeters
            self.timeSeconds = timeSeconds
        }

        var anchor: Point3 { Point3(x: Double(anchorX), y: Double(anchorY), z: Double(anchorZ)) }
    }

    static let capacity = 16
    private(set) var entries: ContiguousArray<Entry>
    /// Where the next range's locator probably is: one past the last one written (a ranging round
    /// visits the locators in the same order each time, so this is usually a hit without a search).
    private var hint = 0

    /// Empty; storage grows with the locators heard (to at most `capacity` entries) and is then
    /// reused, so steady-state inserts never allocate — and a tag among 8 locators pays for 8.
    init() {
        entries = []
    }

    mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
        hint = 0
    }

    /// Keeps this range as the latest of its locator.
    mutating func insert(_ entry: Entry) {
        let n = entries.count
        if hint < n, entries[hint].address == entry.address {
            entries[hint] = entry
            hint = hint + 1 == n ? 0 : hint + 1
        } else if let i = entries.firstIndex(where: { $0.address == entry.address }) {
            entries[i] = entry
            hint = i + 1 == n ? 0 : i + 1
        } else if n < Self.capacity {
            entries.append(entry)
            hint = 0
        } else {
            var oldest = 0
            for i in entries.indices where entries[i].timeSeconds < entries[oldest].timeSeconds { oldest = i }
            entries[oldest] = entry
            hint = oldest + 1 == n ? 0 : oldest + 1
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
