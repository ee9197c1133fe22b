import LocusCore

/// Interns the text of CSV fields (tag and floor ids) without building a `String` for bytes it has
/// seen before.
///
/// A field's id is a pure function of its raw bytes (`CSVScanner.text`: trimmed, quotes unescaped),
/// so an unquoted field whose bytes equal an earlier unquoted field's has that field's index. On a
/// miss the text is built and looked up by name; quoted fields always go by name.
///
/// - Fields of 1…8 bytes (ids such as `T123`, `1F`) are keyed by their bytes packed into one
///   `UInt64` k (little-endian, with the length n): the previous field and a 4096-slot table at
///   slot ⌊((k + n)·φ·2⁶⁴ mod 2⁶⁴) / 2⁵²⌋ (Fibonacci hashing, one multiplication) remember k's
///   index. The key is the bytes themselves, so the table stays valid from one piece of the input
///   to the next.
/// - Longer fields: the previous field and a 4096-slot table indexed by the `FNV1a` hash of the
///   bytes remember where in the current piece such bytes were seen (forgotten with the piece in
///   O(1): a slot holds the piece's number, `generation`, so a stream of small pieces — a live
///   stream's datagrams — costs nothing per piece).
struct CSVFieldInterner: Sendable {
    /// A short field's bytes, its length and its index (−1: empty slot).
    private struct ShortSlot {
        var key: UInt64
        var length: Int
        var index: Int32
    }
    private var shortSlots: [ShortSlot] = []
    private var previousShort = ShortSlot(key: 0, length: 0, index: -1)
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
        let length = f.end - f.start
        if length >= 1 && length <= 8 {
            let key = Self.packed(bytes, f.start, length)
            if let known = cachedIndex(word: key, length: length) { return (known, false) }
            if shortSlots.isEmpty { shortSlots = Array(repeating: ShortSlot(key: 0, length: 0, index: -1), count: Self.slotMask + 1) }
            let result = index(named: text())
            previousShort = ShortSlot(key: key, length: length, index: result.index)
            shortSlots[Self.shortSlot(key, length)] = previousShort
            return result
        }
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

    /// The index of the unquoted field of `length` (1…8) bytes held in the low bytes of `word` (the
    /// bytes after them are ignored) when the short-field cache knows it; nil otherwise (then ask
    /// `index(_:_:text:)`, which also learns it). The cache's answer, without building a field.
    @inline(__always)
    mutating func cachedIndex(word: UInt64, length: Int) -> Int32? {
        let key = word & (UInt64.max &>> UInt64(truncatingIfNeeded: 64 &- 8 &* length))
        if previousShort.index >= 0, previousShort.key == key, previousShort.length == length { return previousShort.index }
        guard !shortSlots.isEmpty else { return nil }
        let cached = shortSlots[Self.shortSlot(key, length)]
        guard cached.index >= 0, cached.key == key, cached.length == length else { return nil }
        previousShort = cached
        return cached.index
    }

    /// The table slot of a short field's key (Fibonacci hashing: see the type's description).
    @inline(__always)
    private static func shortSlot(_ key: UInt64, _ length: Int) -> Int {
        Int(truncatingIfNeeded: ((key &+ UInt64(length)) &* 0x9E37_79B9_7F4A_7C15) >> 52)
    }

    /// Forgets where long fields were seen (their offsets point into bytes about to be replaced: the
    /// next chunk of a streamed input); the names, their indices and the short fields' keys stay.
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

    /// The `length` (1…8) bytes at `start` as one little-endian word, the bytes above them zero.
    @inline(__always)
    private static func packed(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ length: Int) -> UInt64 {
        if start + 8 <= bytes.count, let base = bytes.baseAddress {
            let word = UInt64(littleEndian: UnsafeRawPointer(base + start).loadUnaligned(as: UInt64.self))
            return length == 8 ? word : word & ((1 << UInt64(8 * length)) &- 1)
        }
        var key: UInt64 = 0
        for k in 0..<length { key |= UInt64(bytes[start + k]) << UInt64(8 * k) }
        return key
    }

    private static func same(_ bytes: UnsafeBufferPointer<UInt8>, _ s1: Int, _ e1: Int, _ s2: Int, _ e2: Int) -> Bool {
        guard e1 - s1 == e2 - s2 else { return false }
        var k = 0
        while k < e1 - s1 { if bytes[s1 + k] != bytes[s2 + k] { return false }; k += 1 }
        return true
    }
}
