@testable import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

@Suite("Fuzzing: random inputs never crash")
struct JSONFuzzTests {
    private static let tokens: [[UInt8]] = ["{", "}", "[", "]", ",", ":", "\"", "\\", "\\u", "\\uD800", "-", "0", "1e999",
                                            "null", "true", "\n", " ", "\u{0}", "é", "\"polygon\"", "\"address\"",
                                            "\"floors\"", "0x", "1.5", "-1"].map { Array($0.utf8) }

    /// One random edit: flip, replace, delete or duplicate a byte, insert a JSON token, or truncate.
    private static func mutate(_ bytes: inout [UInt8], using rng: inout SeededGenerator) {
        guard !bytes.isEmpty else {
            bytes = tokens[Int(rng.next() % UInt64(tokens.count))]
            return
        }
        let at = Int(rng.next() % UInt64(bytes.count))
        switch rng.next() % 6 {
        case 0: bytes[at] ^= UInt8(truncatingIfNeeded: 1 << (rng.next() % 8))
        case 1: bytes[at] = UInt8(truncatingIfNeeded: rng.next())
        case 2: bytes.remove(at: at)
        case 3: bytes.insert(bytes[at], at: at)
        case 4: bytes.insert(contentsOf: tokens[Int(rng.next() % UInt64(tokens.count))], at: at)
        default: bytes.removeSubrange(at...)
        }
    }

    @Test("random mutations of the site fixtures give a site or a LocusError, never a crash",
          arguments: ["hall.json", "corridor.json", "invalid/duplicate-address.json", "invalid/polygon-self-intersecting.json"])
    func mutatedSites(name: String) {
        let original = TestPaths.bytes(TestPaths.fixture("sites/" + name))
        #expect(!original.isEmpty)
        var rng = SeededGenerator(seed: 0x5EED_0001 &+ UInt64(name.utf8.count))
        var decoded = 0
        var failed: [LocusErrorCode: Int] = [:]
        for _ in 0..<1_500 {
            var bytes = original
            for _ in 0...(rng.next() % 4) { Self.mutate(&bytes, using: &rng) }
            // The collecting walk and the throwing decode agree: the same site, or the first error.
            let validation = SiteDecoder.validate(bytes, file: name)
            do {
                let site = try SiteDecoder.decode(bytes, file: name)
                #expect(validation.site == site && validation.errors.isEmpty)
                // Whatever decodes must satisfy the invariants the decoder promises.
                #expect(!site.floors.isEmpty)
                for floor in site.floors {
                    for zone in floor.zones { #expect(PolygonValidation.validate(zone.polygon) == nil) }
                    #expect(floor.locators.allSatisfy { $0.position.isFinite && $0.biasMeters.isFinite })
                }
                decoded += 1
            } catch {
                failed[error.code, default: 0] += 1
                #expect(validation.site == nil && validation.errors.first == error)
                #expect(validation.errors.allSatisfy { $0.context.file == name && $0.context.line != nil })
                #expect(error.context.file == name)
                #expect(error.context.line != nil)
            }
        }
        // The fuzzer must exercise both outcomes, or it tests nothing.
        #expect(failed[.malformedJSON, default: 0] > 0)
        #expect(failed.keys.contains { $0 != .malformedJSON })
        #expect(decoded + failed.values.reduce(0, +) == 1_500)
    }

    @Test("random byte strings never crash the parser")
    func randomBytes() {
        var rng = SeededGenerator(seed: 42)
        for _ in 0..<3_000 {
            let count = Int(rng.next() % 64)
            var bytes: [UInt8] = []
            for _ in 0..<count {
                if rng.next() % 3 == 0 {
                    bytes.append(contentsOf: Self.tokens[Int(rng.next() % UInt64(Self.tokens.count))])
                } else {
                    bytes.append(UInt8(truncatingIfNeeded: rng.next()))
                }
            }
            do {
                _ = try JSONParser.parse(bytes)
            } catch {
                #expect(error.code == .malformedJSON)
                #expect((error.context.line ?? 0) >= 1 && (error.context.column ?? 0) >= 1)
            }
        }
    }

    /// A random JSON tree of bounded depth.
    private static func randomValue(depth: Int, using rng: inout SeededGenerator) -> JSONValue {
        let pick = depth >= 4 ? rng.next() % 5 : rng.next() % 7
        switch pick {
        case 0: return .null
        case 1: return .bool(rng.next() % 2 == 0)
        case 2: return .integer(Int(truncatingIfNeeded: rng.next()) >> Int(rng.next() % 63))
        case 3: return .number(rng.uniform(-1e6, 1e6), rng.next() % 2 == 0 ? .shortest : .fixed(Int(rng.next() % 7)))
        case 4:
            var scalars = String.UnicodeScalarView()
            for _ in 0..<(rng.next() % 8) {
                let choices: [UInt32] = [0x22, 0x5C, 0x0A, 0x01, 0x41, 0xE9, 0x1F600, 0x2028, 0x7F]
                if let scalar = Unicode.Scalar(choices[Int(rng.next() % UInt64(choices.count))]) { scalars.append(scalar) }
            }
            return .string(String(scalars))
        case 5:
            return .array((0..<(rng.next() % 4)).map { _ in randomValue(depth: depth + 1, using: &rng) })
        default:
            return .object((0..<(rng.next() % 4)).map { i in ("k\(i)\u{E9}", randomValue(depth: depth + 1, using: &rng)) })
        }
    }

    @Test("random trees written in every style parse back equal")
    func writeParseProperty() throws {
        var rng = SeededGenerator(seed: 7)
        for _ in 0..<500 {
            let value = Self.randomValue(depth: 0, using: &rng)
            for style in [JSONWriter.Style.compact, .line, .pretty] {
                let parsed = try JSONParser.parse(JSONWriter(style: style).bytes(value))
                #expect(parsed == value)
            }
        }
    }
}
