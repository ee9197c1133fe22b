@testable import LocusIO
import Testing

/// The field cache only short-cuts lookups: indices are the order of first appearance, whatever the
/// ids' lengths, slot collisions, or the pieces the input arrives in.
@Suite("CSV field interner")
struct CSVFieldInternerTests {
    /// Interns `ids` written as one comma-separated piece, field by field (`padded`: with 8 bytes
    /// after the last, so that every short field is read as one word; else the last few byte by byte).
    static func intern(_ ids: [String], padded: Bool, into interner: inout CSVFieldInterner) -> [Int32] {
        let text = Array(ids.joined(separator: ",").utf8) + (padded ? Array("        ".utf8) : [])
        var out: [Int32] = []
        text.withUnsafeBufferPointer { bytes in
            var start = 0
            for id in ids {
                let end = start + id.utf8.count
                let field = CSVScanner.Field(start: start, end: end, isQuoted: false)
                out.append(interner.index(bytes, field, text: id).index)
                start = end + 1
            }
        }
        return out
    }

    @Test("the word lookup answers only what the cache knows, the same index, whatever bytes follow the id")
    func cachedIndexByWord() {
        var rng = SeededGenerator(seed: 16)
        let names = (0..<6_000).map { k in "T\(k)" } + ["1F", "B", "ABCDEFGH"]
        var interner = CSVFieldInterner()
        var known: [String: Int32] = [:]
        var answered = 0
        for _ in 0..<30_000 {
            let id = names[Int.random(in: 0..<names.count, using: &rng)]
            let bytes = Array(id.utf8)
            // The word: the id's bytes, then arbitrary ones.
            var word = rng.next()
            for (k, b) in bytes.enumerated() {
                word = word & ~(UInt64(0xFF) << UInt64(8 * k)) | UInt64(b) << UInt64(8 * k)
            }
            if let cached = interner.cachedIndex(word: word, length: bytes.count) {
                answered += 1
                #expect(cached == known[id], "\(id)")
            } else {
                let index = Self.intern([id], padded: true, into: &interner)[0]
                if let k = known[id] { #expect(index == k) } else { #expect(index == Int32(known.count)); known[id] = index }
            }
        }
        // First sightings (about 6,000) miss, and so do ids whose slot another took (4,096 slots).
        #expect(answered > 10_000)
        #expect(interner.names.count == known.count)
    }

    @Test("ids of 1 to 12 bytes, 10,000 of them (more than the 4,096 slots), get their first-appearance index in every piece")
    func indicesFollowFirstAppearance() {
        var rng = SeededGenerator(seed: 15)
        let names = (0..<10_000).map { k in "T\(k)" } + ["1F", "B", "ABCDEFGH", "ABCDEFGHI", "tag-0000001"]
        let order = (0..<40_000).map { _ in names[Int.random(in: 0..<names.count, using: &rng)] }
        var expected: [String: Int32] = [:]
        for id in order where expected[id] == nil { expected[id] = Int32(expected.count) }
        var interner = CSVFieldInterner()
        var got: [Int32] = []
        for piece in stride(from: 0, to: order.count, by: 7_000) {
            interner.forgetBytes()
            got += Self.intern(Array(order[piece..<min(piece + 7_000, order.count)]), padded: piece % 14_000 == 0, into: &interner)
        }
        #expect(got == order.map { expected[$0] ?? -1 })
        #expect(interner.names.count == expected.count)
    }
}

/// A small seeded generator (SplitMix64) for the test's random order.
private struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
