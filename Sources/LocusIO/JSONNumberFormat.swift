/// How the writer spells a Double: byte-stable, platform-independent, never `nan` or `inf`.
///
/// Both formats start from the shortest decimal that reads back as the same Double (the Swift
/// standard library's algorithm, identical on every platform), so the output depends on the value
/// only — never on the C library, the locale or the machine.
package enum JSONNumberFormat: Sendable, Hashable {
    /// Exactly `n` digits after the decimal point, trailing zeros kept (`12.25` with 3 → `12.250`,
    /// `2` → `2.000`, `0` decimals → `12`). Rounding is half away from zero on the shortest decimal
    /// (`0.1235` → `0.124`), and a result that rounds to zero is written without a sign (`-0.0004` → `0.000`).
    /// `n` must be in 0…20.
    case fixed(Int)
    /// The shortest decimal that reads back as the same Double: whole numbers below 10¹⁵ without a
    /// fraction (`40`, `-3`), others as the standard library writes them (`0.1`, `1e-05`, `1e+16`).
    /// Used where a value must round-trip exactly (site files).
    case shortest

    /// The literal for `value`, or nil when it is NaN or infinite.
    package func format(_ value: Double) -> String? {
        guard value.isFinite else { return nil }
        switch self {
        case .shortest:
            if value.rounded(.towardZero) == value, abs(value) < 1e15, let whole = Int64(exactly: value) {
                return String(whole)
            }
            return value.description
        case .fixed(let decimals):
            precondition((0...20).contains(decimals), "JSONNumberFormat.fixed: decimals must be in 0...20, got \(decimals)")
            return Self.fixed(value, decimals: decimals)
        }
    }

    /// Decimal digits of the shortest representation: value = ±0.d₁d₂…dₖ × 10^pointPosition.
    private static func shortestDigits(_ value: Double) -> (negative: Bool, digits: [UInt8], pointPosition: Int) {
        var text = Substring(value.description)
        var negative = false
        if text.first == "-" { negative = true; text = text.dropFirst() }
        var exponent = 0
        if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            exponent = Int(text[text.index(after: e)...].filter { $0 != "+" }) ?? 0
            text = text[..<e]
        }
        var digits: [UInt8] = []
        var pointPosition = 0
        var seenPoint = false
        for byte in text.utf8 {
            if byte == UInt8(ascii: ".") { seenPoint = true; continue }
            digits.append(byte &- UInt8(ascii: "0"))
            if !seenPoint { pointPosition += 1 }
        }
        pointPosition += exponent
        while let first = digits.first, first == 0 { digits.removeFirst(); pointPosition -= 1 }
        while let last = digits.last, last == 0 { digits.removeLast() }
        return (negative, digits, pointPosition)
    }

    private static func fixed(_ value: Double, decimals: Int) -> String {
        var (negative, digits, pointPosition) = shortestDigits(value)
        let keep = pointPosition + decimals
        if keep < 0 {
            digits = []
        } else if keep < digits.count {
            let roundUp = digits[keep] >= 5
            digits.removeSubrange(keep...)
            if roundUp {
                var i = digits.count - 1
                while i >= 0 {
                    if digits[i] == 9 { digits[i] = 0; i -= 1 } else { digits[i] += 1; break }
                }
                if i < 0 { digits.insert(1, at: 0); pointPosition += 1 }
            }
        }
        func digit(_ index: Int) -> UInt8 { index >= 0 && index < digits.count ? digits[index] : 0 }
        var bytes: [UInt8] = []
        if negative && digits.contains(where: { $0 != 0 }) { bytes.append(UInt8(ascii: "-")) }
        if pointPosition <= 0 {
            bytes.append(UInt8(ascii: "0"))
        } else {
            for i in 0..<pointPosition { bytes.append(UInt8(ascii: "0") + digit(i)) }
        }
        if decimals > 0 {
            bytes.append(UInt8(ascii: "."))
            for i in pointPosition..<(pointPosition + decimals) { bytes.append(UInt8(ascii: "0") + digit(i)) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
