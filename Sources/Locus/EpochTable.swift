import LocusCore
import LocusNumerics

/// The open epochs of every tag in flat storage: the engine's form of `EpochAssembler` (the
/// epoch rules are documented there and live here, once).
///
/// One array of 8-byte words, `width` per row (a tag). A row is, in order:
/// - 5 header words: the open epoch's start time (its first range's), its time (its latest range's),
///   the tag's latest admitted time (kept across epochs: the tag's clock, see
///   `PositioningEngine.ingest`), then the count of present slots and the round model's slot word
///   (`RoundModel.slots`) as two 32-bit halves, and the round model's recent sizes (`RoundModel.sizes`)
///   and the row's generation (incremented by each `reset`: the schedule's queue entries of a closed
///   epoch are recognised as stale by it) as two more;
/// - `stride` range words: slot j's range in the open epoch (−1 when absent; ranges are ≥ 0);
/// - with `keepsRangeTimes`, `stride` time words: slot j's range time (meaningful while present): the
///   tightly coupled filter takes an epoch's ranges when it closes, each at its own time
///   (`PositioningEngine.applyPendingRanges`);
/// - the order of first appearance: the k-th present slot as a 16-bit number, four to a word.
///
/// A row costs 8·(5 + stride + ⌈stride/4⌉) bytes, 8·stride more with range times: 120 or 184 bytes at
/// 8 locators (it was 176 or 240 with a 16-byte cell per slot holding its range and a 32-bit order
/// entry, and the times two to a cell after them). Adding a range writes one array (one uniqueness
/// check, the cache lines of one row), reading a row retains nothing, and nothing allocates.
///
/// Rounds close when complete: the header also holds the tag's `RoundModel`, and `isComplete`
/// tells the engine it can solve a round without waiting for the pause. A range that comes after such
/// a close, within the pause, from a locator the round did not hold is a straggler of that round
/// (`takesStraggler(row:…)`, asked by `add`): late, never an epoch of its own.
struct EpochTable: Sendable {
    /// Cut period, seconds (1/rate).
    let periodSeconds: Double
    /// A gap longer than this closes the epoch, seconds.
    let pauseSeconds: Double
    /// Slots per row: the most locators of any floor (≤ 65,536, as many as there are locator addresses: the order
    /// entries, slot numbers, are 16-bit).
    let stride: Int

    /// Header words: start, epoch time, latest admitted time, count | round slots, round sizes | generation.
    private enum Header {
        static let start = 0, epochTime = 1, latestAdmitted = 2, countAndSlots = 3, sizesAndGeneration = 4
        static let words = 5
    }
    /// Words per row.
    private let width: Int
    /// Where a row's time words start (`Header.words + stride`; meaningful with `keepsRangeTimes`).
    private let timesOffset: Int
    /// Where a row's order words start.
    private let orderOffset: Int
    private var words: [UInt64] = []
    private var rows = 0
    /// Whether each slot's range time is kept (in the row's time words: meaningful for the slots
    /// present in the open epoch).
    let keepsRangeTimes: Bool

    /// How an epoch ended, for the round model.
    enum Ending: Sendable {
        /// A gap of `pauseSeconds` passed after its latest range, or it was complete: a round.
        case round
        /// Cut by the period rule while ranges kept coming: a continuous stream, no rounds.
        case period
    }

    /// What `add` did with a range.
    enum Added: Sendable {
        /// It joined the open epoch.
        case joined
        /// It opened an epoch (none was open).
        case opened
        /// It is a straggler of the row's last round (`takesStraggler(row:…)`): no epoch took it; the caller
        /// skips it as `late_range`.
        case late
    }

    /// - Parameters:
    ///   - stride: slots per row (the widest floor's locator count, ≤ 65,536).
    ///   - rateHertz: output rate; the period is 1/rate.
    ///   - pauseSeconds: the gap that separates bursts; default half the period.
    ///   - keepsRangeTimes: keep each slot's range time (for `gatherRanges`).
    init(stride: Int, rateHertz: Double, pauseSeconds: Double? = nil, keepsRangeTimes: Bool = false) {
        precondition(rateHertz > 0 && rateHertz.isFinite, "EpochTable: rate must be positive")
        precondition(stride >= 0 && stride <= 1 << 16, "EpochTable: stride must be in 0...65536")
        periodSeconds = 1 / rateHertz
        self.pauseSeconds = pauseSeconds ?? 0.5 / rateHertz
        self.stride = stride
        timesOffset = Header.words + stride
        orderOffset = timesOffset + (keepsRangeTimes ? stride : 0)
        width = orderOffset + (stride + 3) / 4
        self.keepsRangeTimes = keepsRangeTimes
    }

    /// The number of rows.
    var count: Int { rows }

    /// Adds a row with no open epoch; returns its index. Amortised O(stride).
    @discardableResult
    mutating func appendRow() -> Int {
        words.append((0.0).bitPattern)                      // start
        words.append((-Double.infinity).bitPattern)         // epoch time
        words.append((-Double.infinity).bitPattern)         // latest admitted time
        words.append(0)                                     // count | round slots
        words.append(0)                                     // round sizes | generation
        words.append(contentsOf: repeatElement((-1.0).bitPattern, count: stride))  // ranges: absent
        words.append(contentsOf: repeatElement(0, count: width - timesOffset))     // times, order
        rows += 1
        return rows - 1
    }

    /// Prefetches row r's words (`CachePrefetch`): its epoch is about to take ranges.
    @inline(__always) func prefetchRow(_ r: Int) {
        guard r < rows else { return }
        CachePrefetch.elements(from: r &* width, count: width, of: words)
    }

    /// Header word k of row r: one check that the row exists, then the word addressed with wrapping
    /// arithmetic (`words[r * width + k]` checked the multiplication, the addition and the index, on
    /// every read of the per-range path).
    @inline(__always) private func header(_ r: Int, _ k: Int) -> UInt64 {
        precondition(UInt(bitPattern: r) < UInt(bitPattern: rows), "EpochTable: no such row")
        return words.withUnsafeBufferPointer { $0.baseAddress![r &* width &+ k] }
    }

    /// Header word k of row r as a time (a Double's bits).
    @inline(__always) private func headerTime(_ r: Int, _ k: Int) -> Double { Double(bitPattern: header(r, k)) }

    /// The count of present slots in a count-and-slots word (its low half).
    @inline(__always) private static func presentCount(_ countAndSlots: UInt64) -> Int { Int(UInt32(truncatingIfNeeded: countAndSlots)) }

    /// True when row r has an open epoch.
    @inline(__always) func isOpen(_ r: Int) -> Bool { Self.presentCount(header(r, Header.countAndSlots)) > 0 }

    /// The tag's latest admitted time (−∞ before its first): the time of its latest range (`add`)
    /// or of a fix taken as it is (`admit(_:atSeconds:)`), whether or not an epoch is open.
    @inline(__always) func latestAdmittedSeconds(_ r: Int) -> Double { headerTime(r, Header.latestAdmitted) }

    /// Records a time admitted without a range (a ready fix): the tag's latest admitted time.
    mutating func admit(_ r: Int, atSeconds t: Double) { words[r * width + Header.latestAdmitted] = t.bitPattern }

    /// The open epoch's start: its first range's time.
    @inline(__always) func startSeconds(_ r: Int) -> Double { headerTime(r, Header.start) }

    /// The open epoch's time: its latest range's time.
    @inline(__always) func epochTimeSeconds(_ r: Int) -> Double { headerTime(r, Header.epochTime) }

    /// The earliest clock time at which row r's open epoch is due if no range joins it:
    /// min(last + pause, start + period).
    @inline(__always) func dueSeconds(_ r: Int) -> Double {
        min(headerTime(r, Header.epochTime) + pauseSeconds, headerTime(r, Header.start) + periodSeconds)
    }

    /// True when a range at `t` would close row r's open epoch first: a gap of `pauseSeconds` or
    /// more since its latest range, or `periodSeconds` or more since its first. Decided by comparing
    /// with `dueSeconds` itself, so that a clock standing exactly on the due time (the key of the
    /// engine's due heap) always closes the epoch — never an endless re-queue.
    @inline(__always) func closes(_ r: Int, at t: Double) -> Bool {
        isOpen(r) && t >= dueSeconds(r)
    }

    /// True when, with the clock at `now`, no range can still join row r's open epoch.
    @inline(__always) func isDue(_ r: Int, at now: Double) -> Bool { closes(r, at: now) }

    /// Adds a range (≥ 0) of `slot` (< stride) at `t` to row r's epoch, opening one if none is open —
    /// unless it is a straggler of the row's last round (`takesStraggler(row:…)`, asked only when no epoch is
    /// open and the last round closed complete: one bit test per opening range, none per other range).
    @inline(__always) @discardableResult
    mutating func add(_ r: Int, slot: Int, rangeMeters range: Double, timeSeconds t: Double) -> Added {
        precondition(range >= 0 && slot >= 0 && slot < stride && r >= 0 && r < rows,
                     "EpochTable: ranges are ≥ 0, slots < stride, rows exist")
        // r < rows and slot < stride (just checked), and the count of present slots is < stride: every
        // word below is in row r, addressed with wrapping arithmetic (no overflow branches).
        let base = r &* width
        let (rangesAt, timesAt, orderAt, keepsTimes) = (Header.words, timesOffset, orderOffset, keepsRangeTimes)
        return words.withUnsafeMutableBufferPointer { w -> Added in
            let row = w.baseAddress! + base
            let count = Self.presentCount(row[Header.countAndSlots])
            var model = Self.roundModel(row)
            if count == 0 {
                if model.endedComplete,
                   Self.takesStraggler(row: row, order: row + orderAt, capacity: stride, slot: slot, at: t, pauseSeconds: pauseSeconds) {
                    return .late
                }
                row[Header.start] = t.bitPattern
                model.opened(sinceLatestSeconds: t - Double(bitPattern: row[Header.latestAdmitted]), pauseSeconds: pauseSeconds, slot: slot)
            }
            let isRepeat = Double(bitPattern: row[rangesAt &+ slot]) >= 0
            let present = isRepeat ? count : count &+ 1
            if !isRepeat { Self.setOrder(slot, at: count, order: row + orderAt) }
            model.added(slot: slot, count: present, isRepeat: isRepeat)
            row[Header.countAndSlots] = UInt64(UInt32(truncatingIfNeeded: present)) | UInt64(model.slots) << 32
            Self.store(sizes: model.sizes, row)
            row[rangesAt &+ slot] = range.bitPattern
            row[Header.epochTime] = t.bitPattern
            row[Header.latestAdmitted] = t.bitPattern
            if keepsTimes { row[timesAt &+ slot] = t.bitPattern }
            return count == 0 ? .opened : .joined
        }
    }

    /// True when row r's open epoch is a complete round (`RoundModel`): no range is expected to
    /// join it, so it can be solved now.
    @inline(__always) func isComplete(_ r: Int) -> Bool {
        RoundModel(slots: UInt32(truncatingIfNeeded: header(r, Header.countAndSlots) >> 32),
                   sizes: UInt32(truncatingIfNeeded: header(r, Header.sizesAndGeneration))).isComplete
    }

    /// The straggler rule, once (issue #41 item 5), asked by `add` for a range that would open an
    /// epoch. Takes a range of `slot` at `t` as a straggler of the row's last round when it is one: that
    /// round closed complete (`RoundModel.endedComplete`, `add`'s bit test) and no epoch is open, the
    /// range comes less than `pauseSeconds` after the round's latest range (the epoch time, left by
    /// `reset`), and its locator is not among the round's. The round model then learns that the round
    /// held this locator too, last (`RoundModel.straggled`), and the slot joins the round's order list;
    /// returns true: `add` returns `.late` and the caller skips the range as `late_range` — it opens
    /// no epoch, so a round never becomes two fixes. A straggler's duplicate (a locator already taken
    /// as one) is late too and teaches nothing more. A locator the round held is a new round: false,
    /// nothing changed. So is any range when the round's size or its straggler count is saturated
    /// (255, `RoundModel.maximumStragglers`: the list can no longer be told apart), as before this rule.
    ///
    /// `row`: the row's first word; `order`: its order words, room for `capacity` (the stride) slots.
    /// Reads the closed round's order list (its present slots in order of arrival, left in the row by
    /// `reset`; the newest round size is their count, stragglers included): O(round size), only for a
    /// range that would open an epoch right after a complete round — never on the per-range path.
    @inline(never)
    private static func takesStraggler(row: UnsafeMutablePointer<UInt64>, order: UnsafeMutablePointer<UInt64>, capacity: Int,
                                       slot: Int, at t: Double, pauseSeconds: Double) -> Bool {
        var model = roundModel(row)
        guard model.endedComplete, presentCount(row[Header.countAndSlots]) == 0,
              t - Double(bitPattern: row[Header.epochTime]) < pauseSeconds,
              case let listed = model.latestSize, listed < 255, listed < capacity,
              model.stragglers < RoundModel.maximumStragglers
        else { return false }
        // The list holds the round's own locators, then its stragglers (their count known): the round's
        // own locator again is a new round; a straggler's again is late.
        let own = listed - model.stragglers
        for k in 0..<listed where Self.order(k, order: order) == slot { return k >= own }
        // A locator new to the round: listed after the others (listed < capacity, checked; it is so
        // anyway, the list holding distinct slots, none of them this one), and the model learns.
        setOrder(slot, at: listed, order: order)
        model.straggled(slot: slot)
        row[Header.countAndSlots] = UInt64(model.slots) << 32  // (the count stays 0: no epoch open)
        store(sizes: model.sizes, row)
        return true
    }

    /// The way row r's open epoch would end if closed with the clock at `now`: complete or past its
    /// pause — a round —, or cut by the period rule.
    @inline(__always) func ending(_ r: Int, at now: Double) -> Ending {
        isComplete(r) || now >= headerTime(r, Header.epochTime) + pauseSeconds ? .round : .period
    }

    /// Forgets row r's round model (the tag moved to another floor: other locators).
    mutating func forgetRounds(_ r: Int) {
        words[r * width + Header.countAndSlots] &= 0xFFFF_FFFF
        words[r * width + Header.sizesAndGeneration] &= 0xFFFF_FFFF_0000_0000
    }

    /// The k-th present slot from a row's order words (`order`: its first), 16 bits each.
    @inline(__always)
    private static func order(_ k: Int, order: UnsafePointer<UInt64>) -> Int {
        Int(UnsafeRawPointer(order).load(fromByteOffset: k &* 2, as: UInt16.self))
    }

    @inline(__always)
    private static func setOrder(_ slot: Int, at k: Int, order: UnsafeMutablePointer<UInt64>) {
        UnsafeMutableRawPointer(order).storeBytes(of: UInt16(truncatingIfNeeded: slot), toByteOffset: k &* 2, as: UInt16.self)
    }

    /// The round model in a row's header (`row`: its first word).
    @inline(__always)
    private static func roundModel(_ row: UnsafeMutablePointer<UInt64>) -> RoundModel {
        RoundModel(slots: UInt32(truncatingIfNeeded: row[Header.countAndSlots] >> 32),
                   sizes: UInt32(truncatingIfNeeded: row[Header.sizesAndGeneration]))
    }

    /// Stores the round model's sizes in a row's header (`row`: its first word), keeping its generation.
    @inline(__always)
    private static func store(sizes: UInt32, _ row: UnsafeMutablePointer<UInt64>) {
        row[Header.sizesAndGeneration] = row[Header.sizesAndGeneration] & 0xFFFF_FFFF_0000_0000 | UInt64(sizes)
    }

    /// Row r's generation: how many times its epoch was reset (mod 2³²). A queue entry pushed when
    /// the epoch opened names the epoch still open while the generation is the same.
    @inline(__always) func generation(_ r: Int) -> UInt32 {
        UInt32(truncatingIfNeeded: header(r, Header.sizesAndGeneration) >> 32)
    }

    /// The number of slots in row r's open epoch.
    @inline(__always) func presentCount(_ r: Int) -> Int { Self.presentCount(header(r, Header.countAndSlots)) }

    /// The k-th present slot of row r (order of first appearance).
    @inline(__always) func presentSlot(_ r: Int, _ k: Int) -> Int {
        precondition(UInt(bitPattern: r) < UInt(bitPattern: rows) && UInt(bitPattern: k) < UInt(bitPattern: stride),
                     "EpochTable: no such row or slot")
        let at = orderOffset
        return words.withUnsafeBufferPointer { Self.order(k, order: $0.baseAddress! + (r &* width &+ at)) }
    }

    /// Row r's latest range of `slot` in the open epoch, metres (−1 when absent).
    @inline(__always) func rangeMeters(_ r: Int, slot: Int) -> Double {
        precondition(UInt(bitPattern: slot) < UInt(bitPattern: stride), "EpochTable: no such slot")
        return Double(bitPattern: header(r, Header.words &+ slot))
    }

    /// Copies row r's open epoch into `locators` and `ranges` (k-th present slot: its position from
    /// `positions`, by slot, and its range) and returns the count. Both arrays must hold at least
    /// `presentCount(r)` elements. No allocation; one uniqueness check per array, not per element.
    func gather(_ r: Int, positions: [Point3], locators: inout [Point3], ranges: inout [Double]) -> Int {
        let base = r &* width, n = presentCount(r), orderAt = orderOffset
        precondition(n <= locators.count && n <= ranges.count, "EpochTable.gather: scratch too small")
        // Slots are < stride (checked when added): the words are addressed from the row's first with
        // wrapping arithmetic (no overflow branch per range).
        locators.withUnsafeMutableBufferPointer { lp in
            ranges.withUnsafeMutableBufferPointer { rp in
                words.withUnsafeBufferPointer { w in
                    let row = w.baseAddress! + base
                    for k in 0..<n {
                        let slot = Self.order(k, order: row + orderAt)
                        lp[k] = positions[slot]
                        rp[k] = Double(bitPattern: row[Header.words &+ slot])
                    }
                }
            }
        }
        return n
    }

    /// Row r's open epoch from its k = `first`-th present slot on, in order of first appearance: the
    /// locator positions (from `positions`, by slot), addresses (`addresses`, by slot), ranges and range
    /// times, written to the four buffers from index 0 (each with room for `presentCount(r) − first`);
    /// returns the count. Needs `keepsRangeTimes`. No allocation.
    func gatherRanges(_ r: Int, from first: Int, positions: [Point3], addresses: [LocatorAddress],
                              locators: UnsafeMutableBufferPointer<Point3>, addressesOut: UnsafeMutableBufferPointer<LocatorAddress>,
                              ranges: UnsafeMutableBufferPointer<Double>, times: UnsafeMutableBufferPointer<Double>) -> Int {
        precondition(keepsRangeTimes, "EpochTable.gatherRanges: range times are not kept")
        let base = r &* width, n = presentCount(r) - first, timesAt = timesOffset, orderAt = orderOffset
        guard n > 0 else { return 0 }
        precondition(n <= locators.count && n <= addressesOut.count && n <= ranges.count && n <= times.count,
                     "EpochTable.gatherRanges: scratch too small")
        // Slots are < stride (checked when added) and, the row's ranges being of one floor, < that
        // floor's locator count (the sizes of `positions` and `addresses`): the indices below stay in
        // bounds, so they are formed with wrapping arithmetic (no overflow branch per range).
        words.withUnsafeBufferPointer { w in
            positions.withUnsafeBufferPointer { pp in
                addresses.withUnsafeBufferPointer { ap in
                    let row = w.baseAddress! + base
                    for k in 0..<n {
                        let slot = Self.order(first &+ k, order: row + orderAt)
                        assert(slot < pp.count && slot < ap.count, "EpochTable.gatherRanges: a slot beyond its floor")
                        locators[k] = pp[slot]
                        addressesOut[k] = ap[slot]
                        ranges[k] = Double(bitPattern: row[Header.words &+ slot])
                        times[k] = Double(bitPattern: row[timesAt &+ slot])
                    }
                }
            }
        }
        return n
    }

    /// Empties row r's open epoch (after it was solved), learning from how it ended (`ending(_:at:)`
    /// with the clock at its closing; nil: neither, e.g. the end of the stream — nothing learnt), and
    /// starts the row's next generation.
    @inline(__always)
    mutating func reset(_ r: Int, ending: Ending? = nil) {
        precondition(r >= 0 && r < rows, "EpochTable.reset: no such row")
        let base = r &* width, orderAt = orderOffset
        words.withUnsafeMutableBufferPointer { w in
            // The row exists (just checked): its words are addressed from its first with wrapping
            // arithmetic, and its present slots and count are < stride, so the range words are in it
            // too (no overflow branch per slot).
            let row = w.baseAddress! + base
            var model = Self.roundModel(row)
            let count = Self.presentCount(row[Header.countAndSlots])
            if let ending {
                switch ending {
                case .round: model.closedRound(count: count)
                case .period: model.forget()
                }
                Self.store(sizes: model.sizes, row)
            }
            // The present slots' ranges back to −1 (absent); the count to 0.
            for k in 0..<count { row[Header.words &+ Self.order(k, order: row + orderAt)] = (-1.0).bitPattern }
            row[Header.countAndSlots] = UInt64(model.slots) << 32
            row[Header.sizesAndGeneration] &+= 1 << 32  // the next generation (wrapping: mod 2³²)
        }
    }
}
