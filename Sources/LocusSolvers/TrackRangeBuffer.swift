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

        /// Overwrites everything but the address, in place.
        @inline(__always)
        mutating func set(anchor: Point3, rangeMeters: Double, timeSeconds: Double) {
            anchorX = Float(anchor.x); anchorY = Float(anchor.y); anchorZ = Float(anchor.z)
            self.rangeMeters = rangeMeters
            self.timeSeconds = timeSeconds
        }
    }

    static let capacity = 16
    /// The entries, in the order their locators were first heard. Heap storage grown to the number of
    /// locators heard and then reused (steady-state inserts never allocate): a tag among 8 locators
    /// pays for 8 entries, not 16 (memory per tracked tag).
    private var storage: ContiguousArray<Entry> = []
    /// Number of entries kept.
    var count: Int { storage.count }
    /// Where the next range's locator probably is: one past the last one written (a ranging round
    /// visits the locators in the same order each time, so this is usually a hit without a search).
    private var hint = 0

    /// Empty.
    init() {}

    mutating func removeAll() {
        storage.removeAll(keepingCapacity: true)
        hint = 0
    }

    /// Keeps this range as the latest of its locator. Inlined (the common case, a ranging round in
    /// its usual order, is one compare and four stores), and written field by field: an `Entry` built on
    /// the stack with narrow stores and copied with wide loads waited for the stores each time (a
    /// load spanning several stores cannot be forwarded from them).
    @inline(__always)
    mutating func insert(address: LocatorAddress, anchor: Point3, rangeMeters: Double, timeSeconds: Double) {
        let n = count
        if hint < n, storage[hint].address == address {
            storage[hint].set(anchor: anchor, rangeMeters: rangeMeters, timeSeconds: timeSeconds)
            hint = hint + 1 == n ? 0 : hint + 1
            return
        }
        insertSlowly(Entry(address: address, anchor: anchor, rangeMeters: rangeMeters, timeSeconds: timeSeconds))
    }

    /// `insert` when the hint misses: a search, an append, or the oldest entry replaced.
    @inline(never)
    private mutating func insertSlowly(_ entry: Entry) {
        let n = count
        for i in 0..<n where storage[i].address == entry.address {
            storage[i] = entry
            hint = i + 1 == n ? 0 : i + 1
            return
        }
        if n < Self.capacity {
            storage.append(entry)
            hint = 0
        } else {
            var oldest = 0
            for i in 0..<n where storage[i].timeSeconds < storage[oldest].timeSeconds { oldest = i }
            storage[oldest] = entry
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
        for i in 0..<count where newestSeconds - storage[i].timeSeconds <= windowSeconds {
            let e = storage[i]
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
