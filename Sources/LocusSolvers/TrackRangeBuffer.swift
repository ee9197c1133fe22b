import LocusCore

/// The latest range to each recently heard locator, for (re-)initialising a tightly coupled track.
///
/// At most `capacity` locators are kept (the oldest entry is replaced when full): the first 8 inline,
/// the rest in heap storage grown to the number of locators heard and then reused, so steady-state
/// inserts never allocate.
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
    /// How many entries are kept inline (a tag among up to 8 locators needs no heap storage at all).
    static let inlineCapacity = 8
    /// Entries 0..<8 (in the order their locators were first heard), inline: the common insert is a
    /// compare and four stores, with no copy-on-write check.
    private var near = InlineArray<8, Entry>(repeating: Entry(address: LocatorAddress(0), anchor: Point3(x: 0, y: 0, z: 0),
                                                              rangeMeters: 0, timeSeconds: -Double.infinity))
    /// Entries 8..<16, on the heap (floors with more than 8 locators in earshot).
    private var far: ContiguousArray<Entry> = []
    /// Number of entries kept (≤ `capacity`), and where the next range's locator probably is: one past
    /// the last one written (a ranging round visits the locators in the same order each time, so this
    /// is usually a hit without a search). 32 bits each, one word for both.
    private var storedCount: Int32 = 0, storedHint: Int32 = 0
    /// Number of entries kept.
    private(set) var count: Int {
        get { Int(storedCount) }
        set { storedCount = Int32(truncatingIfNeeded: newValue) }
    }
    private var hint: Int {
        get { Int(storedHint) }
        set { storedHint = Int32(truncatingIfNeeded: newValue) }
    }

    /// Empty.
    init() {}

    mutating func removeAll() {
        count = 0
        far.removeAll(keepingCapacity: true)
        hint = 0
    }

    /// Entry i (< count), for tests.
    func entryForTesting(_ i: Int) -> Entry { entry(i) }

    /// Entry i (< count).
    @inline(__always)
    private func entry(_ i: Int) -> Entry { i < Self.inlineCapacity ? near[i] : far[i - Self.inlineCapacity] }

    /// Overwrites entry i (< count), or appends it (i == count).
    @inline(__always)
    private mutating func store(_ e: Entry, at i: Int) {
        if i < Self.inlineCapacity {
            near[i] = e
        } else if i - Self.inlineCapacity < far.count {
            far[i - Self.inlineCapacity] = e
        } else {
            far.append(e)
        }
    }

    /// Points the hint at the entry after i of n (wrapping): where the next range of a round in its
    /// usual order finds its locator.
    @inline(__always)
    private mutating func pointHint(past i: Int, count n: Int) { hint = i + 1 == n ? 0 : i + 1 }

    /// Whether at least `minimum` locators have their latest range at `seconds` or later. Stops at the
    /// `minimum`-th; `mutating` only to read the entries in place (as `insertSlowly` does: a non-mutating read
    /// copies all the inline entries at every step); nothing is changed, nothing allocated.
    mutating func hasLocators(_ minimum: Int, since seconds: Double) -> Bool {
        guard minimum > 0 else { return true }
        let inline = min(count, Self.inlineCapacity)
        var n = 0
        for i in 0..<inline where near[i].timeSeconds >= seconds {
            n += 1
            if n >= minimum { return true }
        }
        for k in far.indices where far[k].timeSeconds >= seconds {
            n += 1
            if n >= minimum { return true }
        }
        return false
    }

    /// One round-robin cycle for the tag's range offset (`TagRangeOffsetEstimator`, "Round robin"): the
    /// latest range of each locator heard within `cycleSeconds` before `newestSeconds`, at most
    /// `locators.count` of them (the most recent first), each carried to `newestSeconds` along its line
    /// of sight by the tag's velocity v (m/s) from its position p (m) at that time:
    /// rᵢ + uᵢ·v·(t − tᵢ), uᵢ = (p − aᵢ)/ρᵢ horizontally, ρᵢ = ‖(p, h) − aᵢ‖ (first order in the motion:
    /// 0.3 m/s over a 0.5 s cycle moves a range by up to 15 cm, which the offset would otherwise
    /// absorb). Written to `locators` and `ranges` from index 0; returns the count. `mutating` only to
    /// read the entries in place; nothing allocated.
    mutating func gatherCycle(newestSeconds t: Double, cycleSeconds: Double, position p: Point2, velocity v: Point2,
                              tagHeightMeters h: Double, locators: inout MutableSpan<Point3>,
                              ranges: inout MutableSpan<Double>) -> Int {
        let room = min(locators.count, ranges.count)
        var n = 0
        // Newest first: pick, up to `room` times, the newest entry in the window not picked yet (≤ 16).
        var picked: UInt32 = 0
        while n < room {
            var best = -1, bestTime = -Double.infinity
            for i in 0..<count where picked & (1 << UInt32(i)) == 0 {
                let ti = i < Self.inlineCapacity ? near[i].timeSeconds : far[i - Self.inlineCapacity].timeSeconds
                if ti <= t, t - ti <= cycleSeconds, ti > bestTime { best = i; bestTime = ti }
            }
            guard best >= 0 else { break }
            picked |= 1 << UInt32(best)
            let e = best < Self.inlineCapacity ? near[best] : far[best - Self.inlineCapacity]
            let a = e.anchor
            let dx = p.x - a.x, dy = p.y - a.y, dz = h - a.z
            let rho = (dx * dx + dy * dy + dz * dz).squareRoot()
            let rate = rho > 1e-6 ? (dx * v.x + dy * v.y) / rho : 0
            locators[n] = a
            ranges[n] = e.rangeMeters + rate * (t - e.timeSeconds)
            n += 1
        }
        return n
    }

    /// Keeps this range as the latest of its locator. Inlined (the common case, a ranging round in
    /// its usual order, is one compare and four stores), and written field by field: an `Entry` built on
    /// the stack with narrow stores and copied with wide loads waited for the stores each time (a
    /// load spanning several stores cannot be forwarded from them).
    @inline(__always)
    mutating func insert(address: LocatorAddress, anchor: Point3, rangeMeters: Double, timeSeconds: Double) {
        let n = count, h = hint
        if h < n {
            if h < Self.inlineCapacity {
                if near[h].address == address {
                    near[h].set(anchor: anchor, rangeMeters: rangeMeters, timeSeconds: timeSeconds)
                    pointHint(past: h, count: n)
                    return
                }
            } else if far[h - Self.inlineCapacity].address == address {
                far[h - Self.inlineCapacity].set(anchor: anchor, rangeMeters: rangeMeters, timeSeconds: timeSeconds)
                pointHint(past: h, count: n)
                return
            }
        }
        insertSlowly(Entry(address: address, anchor: anchor, rangeMeters: rangeMeters, timeSeconds: timeSeconds))
    }

    /// `insert` when the hint misses: a search, an append, or the oldest entry replaced. The entries
    /// are read in place (`near[i]`, `far[k]`), not through `entry(_:)`: a non-mutating read of the
    /// inline entries copied all 256 bytes of them at every step (with more than 16 locators in earshot
    /// every range comes here, and those copies were ≈ 60 % of a 32-locator fix).
    @inline(never)
    private mutating func insertSlowly(_ e: Entry) {
        let n = count
        let inline = min(n, Self.inlineCapacity)
        var found = -1
        for i in 0..<inline where near[i].address == e.address { found = i; break }
        if found < 0 {
            for k in far.indices where far[k].address == e.address { found = Self.inlineCapacity + k; break }
        }
        if found >= 0 {
            store(e, at: found)
            pointHint(past: found, count: n)
            return
        }
        if n < Self.capacity {
            store(e, at: n)
            count = n + 1
            hint = 0
            return
        }
        // Full: the oldest entry (the first of equal times) gives way.
        var oldest = 0
        var oldestSeconds = near[0].timeSeconds
        for i in 1..<inline where near[i].timeSeconds < oldestSeconds { oldest = i; oldestSeconds = near[i].timeSeconds }
        for k in far.indices where far[k].timeSeconds < oldestSeconds {
            oldest = Self.inlineCapacity + k
            oldestSeconds = far[k].timeSeconds
        }
        store(e, at: oldest)
        pointHint(past: oldest, count: n)
    }

    /// The solver a track starts with and judges its first rounds by: the robust `Trilaterator`, planar at
    /// the tag height h (m), range σ (m), the standard settings otherwise.
    static func solver(tagHeightMeters h: Double, sigmaMeters: Double) -> Trilaterator {
        Trilaterator(configuration: TrilaterationConfiguration(mode: .planar, tagHeightMeters: h, sigmaMeters: sigmaMeters))
    }

    /// Planar least-squares position from the ranges no older than `windowSeconds` before `newestSeconds`,
    /// solved by the `Trilaterator` (robust weighted least squares, planar at the tag height h).
    /// When fewer than `minimumLocators` locators were heard in that window but enough in the longer
    /// `cycleSeconds` (hardware that ranges to one locator at a time, in turn: a round-robin cycle),
    /// the newest range of each of the `minimumLocators` most recently heard locators is used instead,
    /// and the position is that of their mean time t̄ = Σ tᵢ / n: for a tag moving at v over the
    /// cycle, the ranges' errors vᵀ(tᵢ − t̄)·uᵢ average out to first order, and the filter predicts
    /// from t̄ with its velocity prior. Returns the position, its covariance (m²) and its time (s),
    /// or nil when too few ranges are usable or the solver refuses them (degenerate geometry,
    /// divergence). Allocates (it runs once per (re-)initialisation, not per measurement).
    func solve(newestSeconds: Double, windowSeconds: Double, cycleSeconds: Double = 0, tagHeightMeters h: Double,
               minimumLocators: Int, sigmaMeters: Double)
        -> (x: Double, y: Double, cxx: Double, cxy: Double, cyy: Double, timeSeconds: Double)? {
        let needed = max(3, minimumLocators)
        var anchors: [Point3] = []
        var ranges: [Double] = []
        var timeSeconds = newestSeconds
        for i in 0..<count where newestSeconds - entry(i).timeSeconds <= windowSeconds {
            let e = entry(i)
            anchors.append(e.anchor)
            ranges.append(e.rangeMeters)
        }
        if anchors.count < needed, cycleSeconds > windowSeconds {
            // One cycle of a round robin: the newest range of the `needed` most recently heard locators.
            var cycle: [Entry] = []
            for i in 0..<count where newestSeconds - entry(i).timeSeconds <= cycleSeconds { cycle.append(entry(i)) }
            guard cycle.count >= needed else { return nil }
            cycle.sort { $0.timeSeconds > $1.timeSeconds }
            let used = cycle.prefix(needed)
            anchors = used.map(\.anchor)
            ranges = used.map(\.rangeMeters)
            timeSeconds = used.reduce(0) { $0 + $1.timeSeconds } / Double(needed)
        }
        guard anchors.count >= needed else { return nil }
        let solver = Self.solver(tagHeightMeters: h, sigmaMeters: sigmaMeters)
        do {
            let s = try solver.solve(locators: anchors, rangesMeters: ranges)
            let c = s.covariance
            guard s.position.isFinite, c.isFinite, c.xx > 0, c.yy > 0, timeSeconds.isFinite else { return nil }
            return (s.position.x, s.position.y, c.xx, c.xy, c.yy, timeSeconds)
        } catch {
            return nil
        }
    }
}
