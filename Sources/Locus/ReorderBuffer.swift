import LocusCore
import LocusZones
import LocusNumerics

/// Fixes waiting for release in (time, tag index, arrival) order: an epoch closes when its tag's
/// next round starts or the clock passes it, so fixes of different tags are made out of time order,
/// and wait here until no open epoch can still produce an earlier one.
///
/// A parked fix stays in a slot of `parked` (slots are reused); the heap orders 32-byte entries
/// that name the slot, so heap moves never copy a whole `PositionFix`, and a released fix is swapped
/// out of its slot, not copied. Steady state allocates nothing. A fix parked while nothing else
/// waits — nearly every fix once rounds close complete (`RoundModel`) — is `held` on its own and
/// swapped out of there, with no heap entry or slot at all.
///
/// **Storage after a burst.** A stream's first rounds park many fixes at once: the first round of
/// every tag closes a pause after its last range (its round size is not known yet), while the next
/// rounds close complete, at their last range, so they wait for the slower first rounds of the other
/// tags (≈ 37 % of 100,000 tags' fixes at 4 Hz, ≈ 250 bytes each with their heap entries). Slots are
/// kept for reuse, so that storage would stay resident for good, though from then on nearly every
/// fix is `held`. So when the heap empties with at least `releaseSlots` slots, the storage is
/// released. A stream whose heap keeps filling that far and emptying again pays one regrowth per such
/// spell: O(log n) allocations for n ≥ 4,096 fixes parked, not per fix.
struct ReorderBuffer: Sendable {
    private struct Entry: Sendable, Comparable {
        var timeSeconds: Double
        var tag: Int
        var sequence: Int
        var slot: Int
        static func < (a: Entry, b: Entry) -> Bool {
            if a.timeSeconds != b.timeSeconds { return a.timeSeconds < b.timeSeconds }
            if a.tag != b.tag { return a.tag < b.tag }
            return a.sequence < b.sequence
        }
    }
    private var heap = MinHeap<Entry>()
    /// Parked fixes (by slot) and their floor index; `freeSlots` lists reusable slots.
    private var parked: [PositionFix] = []
    private var parkedFloor: [Int] = []
    private var freeSlots: [Int] = []
    private var sequence = 0
    /// Storage below this many slots is always kept.
    static let releaseSlots = 4_096
    /// The one waiting fix while the heap is empty (`hasHeld`): the usual case, a complete round's
    /// fix at the clock's time, released at the next row — kept out of the heap and the slots. It
    /// joins the heap first (keeping its arrival order) when a second fix comes.
    private var held = ReorderBuffer.vacantFix
    private var hasHeld = false
    private var heldTag = 0, heldFloor = 0

    /// A released fix's tag and floor indices and what the zone judge needs of it.
    struct Released {
        var tag: Int
        var floor: Int
        var zoneFix: ZoneFix
    }

    /// The earliest waiting fix's time, or nil when none waits.
    @inline(__always) var earliestSeconds: Double? { hasHeld ? held.timeSeconds : heap.top?.timeSeconds }
    /// True when no fix waits.
    @inline(__always) var isEmpty: Bool { !hasHeld && heap.isEmpty }
    /// Fixes waiting.
    var count: Int { heap.count + (hasHeld ? 1 : 0) }
    /// Parking slots ever used (for tests of bounded state).
    var slotCount: Int { parked.count }

    /// Parks a fix (taken: held, or moved into its slot, uncopied).
    mutating func park(_ fix: consuming PositionFix, tag: Int, floor: Int) {
        if heap.isEmpty {
            if !hasHeld {
                held = fix
                hasHeld = true
                heldTag = tag
                heldFloor = floor
                return
            }
            // A second fix: the held one goes into the heap first.
            var first = Self.vacantFix
            swap(&first, &held)
            hasHeld = false
            parkInHeap(first, tag: heldTag, floor: heldFloor)
        }
        parkInHeap(fix, tag: tag, floor: floor)
    }

    /// Parks a fix in a slot, its entry in the heap.
    private mutating func parkInHeap(_ fix: consuming PositionFix, tag: Int, floor: Int) {
        let slot: Int
        let time = fix.timeSeconds
        if let free = freeSlots.popLast() {
            slot = free
            parked[slot] = consume fix
            parkedFloor[slot] = floor
        } else {
            slot = parked.count
            parked.append(consume fix)
            parkedFloor.append(floor)
        }
        sequence += 1
        heap.push(Entry(timeSeconds: time, tag: tag, sequence: sequence, slot: slot))
    }

    /// The heap just emptied after a burst of at least `releaseSlots` fixes: releases the storage
    /// (see the type's notes).
    @inline(never)
    private mutating func releaseStorage() {
        parked = []
        parkedFloor = []
        freeSlots = []
        heap = MinHeap()
        MemoryHints.releaseFreeHeap()
    }

    /// Moves the earliest fix to the end of `fixes` when its time is before `watermark` (or always,
    /// with `all`), and says what was released; nil when nothing may go.
    @inline(__always)
    mutating func releaseEarliest(before watermark: Double, all: Bool, into fixes: inout [PositionFix]) -> Released? {
        // One exit with a result (two made the caller's loop build its optional in memory).
        let tag: Int, floor: Int, zoneFix: ZoneFix
        if hasHeld {
            guard all || held.timeSeconds < watermark else { return nil }
            hasHeld = false
            tag = heldTag
            floor = heldFloor
            zoneFix = Self.moveOut(&held, into: &fixes)
        } else {
            guard let top = heap.top, all || top.timeSeconds < watermark else { return nil }
            heap.pop()
            freeSlots.append(top.slot)
            tag = top.tag
            floor = parkedFloor[top.slot]
            zoneFix = Self.moveOut(&parked[top.slot], into: &fixes)
            if heap.isEmpty && parked.count >= Self.releaseSlots { releaseStorage() }
        }
        return Released(tag: tag, floor: floor, zoneFix: zoneFix)
    }

    /// Moves `fix` to the end of `fixes`, leaving a vacant fix in its place, and returns what the
    /// zone judge needs of it. Swapped, not copied: no copy of the fix and no reference count (a
    /// copy in and out of the slot was ~3 % of the pipeline).
    @inline(__always)
    private static func moveOut(_ fix: inout PositionFix, into fixes: inout [PositionFix]) -> ZoneFix {
        let zoneFix = ZoneFix(timeSeconds: fix.timeSeconds, tag: fix.tag, point: fix.position.horizontal)
        fixes.append(vacantFix)
        swap(&fixes[fixes.count - 1], &fix)
        return zoneFix
    }

    /// What a released slot holds until it is reused (plain values: nothing to count).
    private static let vacantFix = PositionFix(timeSeconds: 0, tag: TagID(""), floor: FloorID(""),
                                               position: Point3(x: 0, y: 0, z: 0),
                                               covariance: SymmetricMatrix3(xx: 0, xy: 0, xz: 0, yy: 0, yz: 0, zz: 0),
                                               quality: FixQuality(hdop: 0, pdop: 0, residualRMSMeters: 0, locatorsUsed: 0))
}
