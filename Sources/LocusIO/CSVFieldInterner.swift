import LocusCore

/// Interns the text of CSV fields (tag and floor ids) without building a `String` for bytes it has
/// seen before.
///
/// A field's id is a pure function of its raw bytes (`CSVScanner.text`: trimmed, quotes unescaped),
/// so an unquoted field whose bytes equal an earlier unquoted field's has that field's index. The
/// previous field and a 4096-slot table indexed by the `FNV1a` hash of the bytes remember where such
/// bytes were seen; on a miss the text is built and looked up by name. Quoted fields always go by name.
/// A slot holds the piece (`generation`) it was seen in: forgetting the offsets of a piece is O(1),
/// so a stream of small pieces (a live stream's datagrams) costs nothing per piece.
struct CSVFieldInterner: Sendable {
    private struct Slot {
        var start: Int
        var end: Int
        var index: Int32
        var generation: UInt32 = 0
    }
    /// The current piece's number; slots of earlier pieces are stale.
    private var generation: UInt32 = 0
    private static let slotMask = 4095
    private var slots: [Slot] = []
    private var previous = Slot(start: 0, end: 0, index: -1)
    private var indexByName: [String: Int32] = [:]
    /// Interned names in order of first appearance.
    private(set) var names: [String] = []

    /// The index of the field `f` of `bytes` whose text is `text` (evaluated only on a cache miss),
    /// and whether it is new.
    mutating func index(_ bytes: UnsafeBufferPointer<UInt8>, _ f: CSVScanner.Field,
                        text: @autoclosure () -> String) -> (index: Int32, isNew: Bool) {
        if f.isQuoted { return index(named: text()) }
        if previous.index >= 0, Self.same(bytes, f.start, f.end, previous.start, previous.end) { return (previous.index, false) }
        var h = FNV1a()
        var i = f.start
        while i < f.end { h.combine(bytes[i]); i += 1 }
        let slot = Int(truncatingIfNeeded: h.value) & Self.slotMask
        if slots.isEmpty { slots = Array(repeating: Slot(start: 0, end: 0, index: -1), count: Self.slotMask + 1) }
        let cached = slots[slot]
        if cached.index >= 0, cached.generation == generation, Self.same(bytes, f.start, f.end, cached.start, cached.end) {
            previous = cached
            return (cached.index, false)
        }
        let result = index(named: text())
        slots[slot] = Slot(start: f.start, end: f.end, index: result.index, generation: generation)
        previous = slots[slot]
        return result
    }

    /// Forgets where fields were seen (their offsets point into bytes about to be replaced: the next
    /// chunk of a streamed input); the names and their indices stay.
    mutating func forgetBytes() {
        previous = Slot(start: 0, end: 0, index: -1)
        generation &+= 1
        // After 2³² pieces the numbers come round: clear the table once.
        if generation == 0 { for k in slots.indices { slots[k].index = -1 } }
    }

    /// The index of `name`, and whether it is new.
    mutating func index(named name: String) -> (index: Int32, isNew: Bool) {
        if let known = indexByName[name] { return (known, false) }
        let index = Int32(names.count)
        indexByName[name] = index
        names.append(name)
        return (index, true)
    }

    private static func same(_ bytes: UnsafeBufferPointer<UInt8>, _ s1: Int, _ e1: Int, _ s2: Int, _ e2: Int) -> Bool {
        guard e1 - s1 == e2 - s2 else { return false }
        var k = 0
        while k < e1 - s1 { if bytes[s1 + k] != bytes[s2 + k] { return false }; k += 1 }
        return true
    }
}
