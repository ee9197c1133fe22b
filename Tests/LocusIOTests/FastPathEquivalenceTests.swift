@testable import LocusCore
@testable import LocusIO
import Testing

/// The fast paths of the trace reader and the output writers against their exact references, on
/// seeded random inputs and on edge cases: same bytes, same rows.
@Suite("Fast paths give the exact paths' results")
struct FastPathEquivalenceTests {
    // MARK: Numbers

    /// `ScratchRow.appendFixed` bytes, or nil when it declines.
    func scratchFixed(_ x: Double, _ decimals: Int) -> [UInt8]? {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { scratch -> [UInt8]? in
            guard let base = scratch.baseAddress else { return nil }
            var row = ScratchRow(base: base, capacity: scratch.count)
            return row.appendFixed(x, decimals: decimals) ? Array(row.written) : nil
        }
    }

    func exactFixed(_ x: Double, _ decimals: Int) -> [UInt8] {
        var out: [UInt8] = []
        JSONNumberFormat.appendFixedExact(x, decimals: decimals, to: &out)
        return out
    }

    @Test("scratch fixed decimals equal the exact digit-string rounding on 200,000 seeded values, ties included")
    func fixedRandom() {
        var rng = SeededGenerator(seed: 6_001)
        var decided = 0
        var mismatches = 0
        for i in 0..<200_000 {
            let decimals = Int(rng.next() % 8)
            let magnitude = [1e-6, 1e-3, 0.5, 1, 100, 1e5, 1e8, 1e11][i % 8]
            var x = rng.uniform(-magnitude, magnitude)
            switch i % 4 {
            case 0:  // exactly on a decimal tie (k + ½)·10⁻ⁿ, as near as a Double gets
                let step = 1 / [1.0, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7][decimals]
                x = ((x / step).rounded(.down) + 0.5) * step
            case 1:  // one or two ulps either side of such a tie
                let step = 1 / [1.0, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7][decimals]
                x = ((x / step).rounded(.down) + 0.5) * step
                x = rng.next() % 2 == 0 ? x.nextUp : x.nextDown.nextDown
            default: break
            }
            let exact = exactFixed(x, decimals)
            if let fast = scratchFixed(x, decimals) {
                decided += 1
                if fast != exact {
                    mismatches += 1
                    if mismatches < 5 { Issue.record("x = \(x), decimals = \(decimals): \(String(decoding: fast, as: UTF8.self)) ≠ \(String(decoding: exact, as: UTF8.self))") }
                }
            }
            // The public spelling is the exact one whether or not its own fast path decides.
            var viaFormat: [UInt8] = []
            _ = JSONNumberFormat.fixed(decimals).append(x, to: &viaFormat)
            #expect(viaFormat == exact || mismatches > 0)
        }
        #expect(mismatches == 0)
        // Half the values sit on or next to ties and large ones exceed 10¹² at many decimals: those
        // are declined by design.
        #expect(decided > 60_000)
    }

    @Test("scratch fixed decimals on edge values: signed zeros, ties, limits, huge, tiny and non-finite", arguments: 0...12)
    func fixedEdges(decimals: Int) {
        let scale = [1.0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12][decimals]
        var values: [Double] = [0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 0.125, 0.375, 1.0 / 3, -1.0 / 3, 0.1 + 0.2,
                                0.0005, -0.0005, 0.00049999999999999, 9.9995, 99.995, 0.9999999, -0.9999999,
                                1e-300, -1e-300, .leastNonzeroMagnitude, .leastNormalMagnitude, 1e300, -1e300, .greatestFiniteMagnitude,
                                1e12 / scale, (1e12 / scale).nextDown, (1e12 / scale).nextUp, 4503599627370495.5 / scale,
                                .nan, .infinity, -.infinity]
        for k in 0..<40 { values.append((Double(k) + 0.5) / scale); values.append(-(Double(k) + 0.5) / scale) }
        for x in values {
            let fast = scratchFixed(x, decimals)
            guard x.isFinite else {
                #expect(fast == nil, "non-finite \(x) must be declined")
                continue
            }
            if let fast { #expect(fast == exactFixed(x, decimals), "x = \(x), decimals = \(decimals)") }
        }
        // Negative zero and values rounding to zero are written without a sign.
        #expect(scratchFixed(-0.0, decimals).map { String(decoding: $0, as: UTF8.self) }
                == (decimals == 0 ? "0" : "0." + String(repeating: "0", count: decimals)))
    }

    @Test("scratch integers and locator addresses equal DecimalText and LocatorAddress.description")
    func integersAndAddresses() {
        var rng = SeededGenerator(seed: 6_002)
        var ints: [Int] = [0, 1, -1, 9, 10, 99, 100, Int.max, Int.min, Int.min + 1, 999_999_999_999_999_999, 1_000_000_000_000_000_000]
        for _ in 0..<2_000 { ints.append(Int(truncatingIfNeeded: rng.next()) >> Int(rng.next() % 63)) }
        var power = 1
        for _ in 0...18 {
            ints += [power - 1, power, power + 1, -power, -(power - 1)]
            if power <= Int.max / 10 { power *= 10 }
        }
        for n in ints {
            var reference: [UInt8] = []
            DecimalText.append(n, to: &reference)
            let fast = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { scratch -> [UInt8] in
                guard let base = scratch.baseAddress else { return [] }
                var row = ScratchRow(base: base, capacity: scratch.count)
                return row.appendInteger(n) ? Array(row.written) : []
            }
            #expect(fast == reference, "n = \(n)")
        }
        for a in [UInt16(0), 1, 0x9DD7, 0xFFFF, 0x00A0, 0x0ABC] + (0..<200).map({ _ in UInt16(truncatingIfNeeded: rng.next()) }) {
            let fast = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 8) { scratch -> String in
                guard let base = scratch.baseAddress else { return "" }
                var row = ScratchRow(base: base, capacity: scratch.count)
                return row.appendAddress(a) ? String(decoding: row.written, as: UTF8.self) : ""
            }
            #expect(fast == LocatorAddress(a).description)
        }
    }

    @Test("a full scratch row declines instead of writing past its end")
    func scratchBounds() {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 4) { scratch in
            guard let base = scratch.baseAddress else { return }
            var row = ScratchRow(base: base, capacity: scratch.count)
            let tooLong = row.appendFixed(12.5, decimals: 3)
            let emptyAfterRefusal = row.count
            let fits = row.appendFixed(1.24, decimals: 1)
            let staticTooLong = row.append("abc")
            let plainTooLong = row.appendPlain("xyz", forbidding: 0x2C, 0x22)
            let lastByte = row.append(UInt8(ascii: "!"))
            let beyond = row.append(UInt8(ascii: "?"))
            #expect(!tooLong && emptyAfterRefusal == 0 && fits && !staticTooLong && !plainTooLong && lastByte && !beyond)
            #expect(String(decoding: row.written, as: UTF8.self) == "1.2!")
        }
    }

    // MARK: Writers

    static let awkwardIDs = ["T1", "tag, one", "say \"hi\"", "back\\slash", "tab\there", "line\nbreak", "ünï", "",
                             String(repeating: "long", count: 200), "1F", "z/1"]

    func randomID(_ rng: inout SeededGenerator) -> String {
        rng.next() % 4 == 0 ? Self.awkwardIDs[Int(rng.next() % UInt64(Self.awkwardIDs.count))] : "T\(rng.next() % 1000)"
    }

    func randomValue(_ rng: inout SeededGenerator, _ magnitude: Double) -> Double {
        switch rng.next() % 10 {
        case 0: return 0
        case 1: return -0.0
        case 2: return rng.uniform(-1e14, 1e14)  // beyond the fast path
        case 3: return (Double(Int(rng.uniform(-1e4, 1e4))) + 0.5) / 1e3  // ties at 3 decimals
        default: return rng.uniform(-magnitude, magnitude)
        }
    }

    @Test("positions rows from the scratch writer equal the exact writer's on 20,000 seeded fixes")
    func positionsRows() {
        var rng = SeededGenerator(seed: 6_003)
        var fast = PositionsWriter()
        var exactBytes = PositionsWriter().bytes
        for i in 0..<20_000 {
            var rejected = LocatorList()
            for _ in 0..<Int(rng.next() % 11) { rejected.append(LocatorAddress(UInt16(truncatingIfNeeded: rng.next()))) }
            let velocity: Vector3? = rng.next() % 4 == 0 ? nil
                : Vector3(x: randomValue(&rng, 2), y: rng.next() % 5 == 0 ? 0.01 : randomValue(&rng, 2), z: 0)
            let fix = PositionFix(timeSeconds: randomValue(&rng, 1e5), tag: TagID(randomID(&rng)), floor: FloorID(randomID(&rng)),
                                  position: Point3(x: randomValue(&rng, 50), y: randomValue(&rng, 50), z: randomValue(&rng, 3)),
                                  velocity: velocity,
                                  covariance: SymmetricMatrix3(xx: abs(randomValue(&rng, 0.1)), xy: rng.uniform(-0.001, 0.001),
                                                               yy: abs(randomValue(&rng, 0.1)), zz: 0),
                                  quality: FixQuality(hdop: abs(randomValue(&rng, 5)), pdop: 1, residualRMSMeters: 0.1,
                                                      locatorsUsed: Int(rng.next() % 40) - (i % 97 == 0 ? 100 : 0), rejected: rejected))
            let mark = fast.bytes.count
            fast.append(fix)
            PositionsWriter.appendExact(fix, to: &exactBytes)
            // Only the new line is compared (the buffers are equal up to it).
            if !fast.bytes[mark...].elementsEqual(exactBytes[mark...]) {
                Issue.record("row \(i) differs:\n\(String(decoding: fast.bytes.suffix(300), as: UTF8.self))\n\(String(decoding: exactBytes.suffix(300), as: UTF8.self))")
                return
            }
        }
        #expect(fast.bytes.count > 1_000_000)
    }

    @Test("event lines from the scratch writer equal the JSON tree writer's on 20,000 seeded events")
    func eventLines() {
        var rng = SeededGenerator(seed: 6_004)
        var fast = ZoneEventWriter()
        var exact = ZoneEventWriter()
        for i in 0..<20_000 {
            let kind = ZoneEvent.Kind.allCases[Int(rng.next() % 3)]
            var dwell: Double? = nil
            if kind == .dwell {
                switch rng.next() % 6 {
                case 0: dwell = Double(rng.next() % 100)
                case 1: dwell = rng.uniform(0, 1e-5)
                case 2: dwell = 1e16
                case 3: dwell = -0.0
                case 4: dwell = .nan
                default: dwell = rng.uniform(0, 600)
                }
            }
            let time = i % 500 == 0 ? Double.infinity : randomValue(&rng, 1e5)
            let event = ZoneEvent(timeSeconds: time, tag: TagID(randomID(&rng)), floor: FloorID(randomID(&rng)),
                                  zone: ZoneID(randomID(&rng)), kind: kind, dwellSeconds: dwell)
            let mark = fast.bytes.count
            fast.append(event)
            exact.appendExact(event)
            // Only the new line is compared (the buffers are equal up to it).
            if !fast.bytes[mark...].elementsEqual(exact.bytes[mark...]) {
                Issue.record("event \(i) differs:\n\(String(decoding: fast.bytes.suffix(300), as: UTF8.self))\n\(String(decoding: exact.bytes.suffix(300), as: UTF8.self))")
                return
            }
        }
        #expect(fast.bytes.count > 500_000)
    }

    // MARK: Trace reader

    func parse(_ bytes: [UInt8], fastRows: Bool) -> Result<RangeTrace, LocusError> {
        bytes.withUnsafeBufferPointer { buffer in
            Result { () throws(LocusError) -> RangeTrace in try TraceReader.parse(buffer, file: "t.csv", fastRows: fastRows) }
        }
    }

    func expectSameTrace(_ bytes: [UInt8], _ note: String) -> Bool {
        let fast = parse(bytes, fastRows: true), slow = parse(bytes, fastRows: false)
        switch (fast, slow) {
        case (.success(let a), .success(let b)):
            let same = a.rows.count == b.rows.count
                && zip(a.rows, b.rows).allSatisfy { r, s in
                    r == s && r.timeSeconds.bitPattern == s.timeSeconds.bitPattern && r.rangeMeters.bitPattern == s.rangeMeters.bitPattern
                }
                && a.tags == b.tags && a.floors == b.floors && a.skipped == b.skipped
            #expect(same, "\(note): fast and scanner paths differ")
            // Replay walks an ordered trace without the index array: the two must agree.
            #expect(a.isTimeOrdered == (a.timeOrder() == Array(a.rows.indices)), "\(note): isTimeOrdered")
            return same
        case (.failure(let a), .failure(let b)):
            #expect(a == b, "\(note)")
            return a == b
        default:
            Issue.record("\(note): one path threw, the other did not")
            return false
        }
    }

    /// A seeded trace with the awkward spellings a recording may hold.
    func randomTrace(_ rng: inout SeededGenerator, rows: Int) -> [UInt8] {
        let headers = ["t,tag,anchor,range_m", "t,anchor,range_m", "range_m,extra,anchor,t,tag,floor", "T,Tag,Anchor,Range_m,Floor",
                       "tag,t,anchor,range_m,floor"]
        let header = headers[Int(rng.next() % UInt64(headers.count))]
        let columns = header.lowercased().split(separator: ",").map(String.init)
        var text = rng.next() % 8 == 0 ? "\u{FEFF}" : ""
        let crlf = rng.next() % 4 == 0
        text += header + (crlf ? "\r\n" : "\n")
        var t = 0.0
        for _ in 0..<rows {
            let noise = rng.next() % 40
            if noise == 0 { text += "# comment, \"quoted\"\n"; continue }
            if noise == 1 { text += (rng.next() % 2 == 0 ? "\n" : "   \n"); continue }
            t += rng.uniform(-0.01, 0.05)
            var cells: [String] = []
            for c in columns {
                let bad = rng.next() % 60
                switch c {
                case "t":
                    let spellings = [DecimalText.string(t, decimals: Int(rng.next() % 10)), " \(t) ", "\(t)e0", "\(t)", "", "nan", "x1",
                                     "+\(DecimalText.string(t, decimals: 3))", "12345678901234567890.5", "0.1234567890123456789012345"]
                    cells.append(bad < 50 ? spellings[0] : spellings[Int(rng.next() % UInt64(spellings.count))])
                case "range_m":
                    let r = rng.uniform(-0.5, 30)
                    let spellings = [DecimalText.string(r, decimals: 4), "-0.0", "-1.5", "inf", "1e999", ".5", "5.", "-", "", "\"2.5\"", "3.0\r"]
                    cells.append(bad < 50 ? spellings[0] : spellings[Int(rng.next() % UInt64(spellings.count))])
                case "anchor":
                    let spellings = ["\(rng.next() % 8 + 256)", "0x9DD7", "70000", "0x", "", " 7 ", "-1", "000256", "+3", "65535", "65536", "7\r"]
                    cells.append(bad < 50 ? spellings[0] : spellings[Int(rng.next() % UInt64(spellings.count))])
                case "tag":
                    // (Long ids make lines of about 64 bytes, where the word-at-a-time reader hands over.)
                    let spellings = ["T\(rng.next() % 12)", "", " T1 ", "\"T1\"", "\"tag, \"\"one\"\"\"", "ü", "T1\r", "A\"B",
                                     "tag-" + String(repeating: "x", count: 30 + Int(rng.next() % 40)), "T+1"]
                    cells.append(bad < 45 ? spellings[0] : spellings[Int(rng.next() % UInt64(spellings.count))])
                case "floor":
                    let spellings = ["1F", "", "2F", "\"1F\"", " 3F"]
                    cells.append(spellings[Int(rng.next() % UInt64(spellings.count))])
                default:
                    cells.append(rng.next() % 10 == 0 ? "\"multi\nline\"" : "x")
                }
            }
            if rng.next() % 50 == 0 { cells.removeLast() }
            if rng.next() % 50 == 0 { cells.append("extra") }
            text += cells.joined(separator: ",") + (crlf ? "\r\n" : "\n")
        }
        var bytes = Array(text.utf8)
        if rng.next() % 3 == 0, bytes.last == 0x0A { bytes.removeLast() }
        if crlf, rng.next() % 3 == 0, bytes.last == 0x0A { bytes.removeLast(); bytes.removeLast() }
        return bytes
    }

    @Test("the one-pass row reader and the scanner read 400 seeded awkward traces identically")
    func traceRandom() {
        var rng = SeededGenerator(seed: 6_005)
        for k in 0..<400 {
            if !expectSameTrace(randomTrace(&rng, rows: 200), "trace \(k)") { return }
        }
    }

    @Test("fast and scanner paths agree with 6,000 interleaved tags (the byte cache overflows and collides)")
    func manyTags() {
        var text = "t,tag,anchor,range_m\n"
        for round in 0..<3 {
            for j in 0..<6_000 { text += "\(round).\(j),tag\(j),\(j % 8),\(Double(j % 97) / 4)\n" }
        }
        let bytes = Array(text.utf8)
        #expect(expectSameTrace(bytes, "many tags"))
        if case .success(let trace) = parse(bytes, fastRows: true) {
            #expect(trace.tags.count == 6_000)
            #expect(trace.rows.count == 18_000)
            #expect(trace.rows[6_000 + 4_321].tagIndex == 4_321)
        } else {
            Issue.record("the trace did not parse")
        }
    }

    @Test("the word-at-a-time plain-decimal parser answers exactly as the byte loop, whatever follows the field")
    func plainDecimalWide() {
        var rng = SeededGenerator(seed: 6_007)
        var inputs = ["0", "-0", "+0", "5.", ".5", ".", "-", "+", "", "-.5", "+.5", "--5", "5..5", "1.2.3", "12345678", "123456789",
                      "12345678.5", "1.12345678", "1.123456789", "12345678.12345678", "99999999.99999999", "9007199254740993",
                      "0.0040", "10.2157", "00000000.00000001", "1e5", " 1", "1 ", "1,", "0x10", "١٢"]
        for _ in 0..<50_000 {
            let x = rng.uniform(-1e6, 1e6) * pow10(-Int(rng.next() % 12))
            inputs.append(DecimalText.string(x, decimals: Int(rng.next() % 12)))
        }
        let tails = [",T1,40407", "\n", "", "..........", "0123456789abcdef", "\u{0}\u{0}\u{0}"]
        for (k, text) in inputs.enumerated() {
            let field = Array(text.utf8)
            // Whatever follows the field (read by the wide loads, never part of the answer), and
            // at least 17 bytes of it.
            let bytes = field + Array(tails[k % tails.count].utf8) + [UInt8](repeating: UInt8(ascii: "7"), count: 24)
            let (wide, plain) = bytes.withUnsafeBufferPointer { b -> (Double?, Double?) in
                guard let base = b.baseAddress else { return (nil, nil) }
                return (CSVNumberParser.parsePlainDecimalWide(base, b, 0, field.count), CSVNumberParser.parsePlainDecimal(b, 0, field.count))
            }
            #expect(wide?.bitPattern == plain?.bitPattern, "\(text)")
        }
    }

    @Test("eight bytes at a time: the byte tests and the digit conversion equal their one-byte definitions")
    func byteWords() {
        var rng = SeededGenerator(seed: 6_008)
        let interesting: [UInt8] = [0, 0x09, 0x0A, 0x0D, 0x20, 0x22, 0x23, 0x2B, 0x2C, 0x2D, 0x2E, 0x2F, 0x30, 0x35, 0x39, 0x3A, 0x7F, 0x80, 0xAC, 0xFF]
        for i in 0..<20_000 {
            var bytes = (0..<8).map { _ in interesting[Int(rng.next() % UInt64(interesting.count))] }
            if i % 3 == 0 { bytes = (0..<8).map { _ in UInt8(truncatingIfNeeded: rng.next()) } }
            if i % 5 == 0 { bytes = (0..<8).map { _ in UInt8(ascii: "0") + UInt8(rng.next() % 10) } }
            let word = bytes.enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << UInt64(8 * $1.offset) }
            for limit in [UInt8(0x2D), 1, 0x30, 128] {
                let expected = bytes.enumerated().reduce(UInt64(0)) { $0 | ($1.element < limit ? UInt64(0x80) << UInt64(8 * $1.offset) : 0) }
                #expect(ByteWords.below(word, limit) == expected, "\(bytes) below \(limit)")
            }
            for b in [UInt8(0x2C), 0x0A, 0x2E, 0, 0xFF] {
                let expected = bytes.enumerated().reduce(UInt64(0)) { $0 | ($1.element == b ? UInt64(0x80) << UInt64(8 * $1.offset) : 0) }
                #expect(ByteWords.equal(word, b) == expected, "\(bytes) equal \(b)")
            }
            for n in 0...8 {
                let prefix = bytes.prefix(n)
                let expected: UInt64? = prefix.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
                    ? prefix.reduce(UInt64(0)) { $0 * 10 + UInt64($1 - 0x30) } : nil
                #expect(ByteWords.digits(word, count: n) == expected, "\(bytes) first \(n)")
            }
        }
    }

    @Test("eight digits in one word: every n below 10⁸ in steps, and seeded ones")
    func eightDigits() {
        var rng = SeededGenerator(seed: 6_009)
        var values: [UInt64] = [0, 1, 9, 10, 99, 100, 9_999, 10_000, 99_999_999]
        for n in stride(from: UInt64(0), to: 100_000_000, by: 997) { values.append(n) }
        for _ in 0..<50_000 { values.append(rng.next() % 100_000_000) }
        for n in values {
            let word = ScratchRow.eightDigits(n)
            let text = String(decoding: (0..<8).map { UInt8(truncatingIfNeeded: word >> UInt64(8 * $0)) + 0x30 }, as: UTF8.self)
            let reference = String(n)
            #expect(text == String(repeating: "0", count: 8 - reference.count) + reference, "n = \(n)")
        }
    }

    @Test("the plain-decimal parser agrees bit for bit with parseDouble whenever it answers")
    func plainDecimal() {
        var rng = SeededGenerator(seed: 6_006)
        var answered = 0
        var inputs = ["0", "-0", "+0", "5.", ".5", ".", "-", "+", "", "1e5", " 1", "1 ", "0.000000000000000000001",
                      "123456789012345678", "1234567890123456789", "9007199254740993", "9007199254740992", "00000000000000000001.5"]
        for _ in 0..<50_000 {
            let x = rng.uniform(-1e6, 1e6) * pow10(-Int(rng.next() % 12))
            inputs.append(DecimalText.string(x, decimals: Int(rng.next() % 19)))
        }
        for text in inputs {
            let bytes = Array(text.utf8)
            let (plain, full) = bytes.withUnsafeBufferPointer { b in
                (CSVNumberParser.parsePlainDecimal(b, 0, b.count), CSVNumberParser.parseDouble(b, 0, b.count))
            }
            if let plain {
                answered += 1
                #expect(plain.bitPattern == full?.bitPattern, "\(text)")
            }
        }
        #expect(answered > 40_000)
    }

    func pow10(_ n: Int) -> Double { n >= 0 ? (0..<n).reduce(1.0) { p, _ in p * 10 } : 1 / pow10(-n) }
}
