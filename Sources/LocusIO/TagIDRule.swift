/// What a tag id may be (SPEC §2; issue #41 item 2): at most `maximumBytes` (128) bytes of valid
/// UTF-8 holding no control character — neither C0 (U+0000…U+001F: NUL, tab, newline…) nor DEL
/// (U+007F). A row whose id breaks the rule is skipped as `invalid_tag` by every reader (the trace
/// CSV of `locus replay` and `locus stream`, the live JSON rows), so one rule holds everywhere.
///
/// Why: an id travels into outputs (CSV cells, JSON strings, MQTT topic levels, log lines). Bytes
/// that are not UTF-8 would be decoded as U+FFFD, so two different ids could merge into one tag;
/// control characters forge lines in logs and CSV; an unbounded id (70,000 bytes) costs memory per
/// tag and overflows topics. 128 bytes leaves an encoded topic level (`TopicEncoding`, ≤ 3 bytes
/// an input byte: 384) far inside MQTT's 65,535-byte topic limit. Only LocusIO's readers apply it.
enum TagIDRule {
    /// The longest id, in UTF-8 bytes.
    static let maximumBytes = 128

    /// True when `bytes` (an id's raw bytes, already trimmed) follow the rule. UTF-8 is checked
    /// strictly (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF). No allocation.
    static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        isValid(bytes.span, 0, bytes.count)
    }

    /// `isValid(_:)` over `bytes[start..<end]`, with a length limit of `limit` bytes (a reader whose
    /// raw bytes are longer than the id — a quoted CSV field's `""` — checks the length itself).
    /// The loop reads through the span's buffer pointer.
    static func isValid(_ span: Span<UInt8>, _ start: Int, _ end: Int,
                                maximumBytes limit: Int = maximumBytes) -> Bool {
        guard end - start <= limit else { return false }
        precondition(start >= 0 && start <= end && end <= span.count, "id bytes out of the span")
        return span.withUnsafeBufferPointer { isValid($0, start, end) }
    }

    /// The rule over `bytes[start..<end]` (in bounds: checked by the caller).
    private static func isValid(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Bool {
        var i = start
        while i < end {
            let b = bytes[i]
            if b < 0x80 {
                if b < 0x20 || b == 0x7F { return false }
                i += 1
                continue
            }
            // A lead byte: how many continuation bytes follow, and the range of the first (Unicode
            // Table 3-7, which rules out overlong forms and surrogates).
            var low: UInt8 = 0x80, high: UInt8 = 0xBF
            let continuations: Int
            switch b {
            case 0xC2...0xDF: continuations = 1
            case 0xE0: continuations = 2; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: continuations = 2
            case 0xED: continuations = 2; high = 0x9F
            case 0xF0: continuations = 3; low = 0x90
            case 0xF1...0xF3: continuations = 3
            case 0xF4: continuations = 3; high = 0x8F
            default: return false
            }
            guard i + continuations < end, bytes[i + 1] >= low, bytes[i + 1] <= high else { return false }
            var k = 2
            while k <= continuations {
                guard bytes[i + k] & 0xC0 == 0x80 else { return false }
                k += 1
            }
            i += continuations + 1
        }
        return true
    }

    /// True when `id` (already valid UTF-8: a Swift string) follows the rule: length and controls.
    static func isValid(_ id: String) -> Bool {
        id.utf8.count <= maximumBytes && !id.utf8.contains { $0 < 0x20 || $0 == 0x7F }
    }
}
