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
    func format(_ value: Double) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        guard append(value, to: &bytes) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the literal for `value` to `out` (for writers that fill one buffer, e.g. CSV);
    /// returns false and appends nothing when `value` is NaN or infinite.
    func append(_ value: Double, to out: inout [UInt8]) -> Bool {
        guard value.isFinite else { return false }
        switch self {
        case .shortest:
            if value.rounded(.towardZero) == value, abs(value) < 1e15, let whole = Int64(exactly: value) {
                Self.appendDigits(of: whole.magnitude, negative: whole < 0, decimals: 0, to: &out)
            } else {
                out.append(contentsOf: value.description.utf8)
            }
        case .fixed(let decimals):
            precondition((0...20).contains(decimals), "JSONNumberFormat.fixed: decimals must be in 0...20, got \(decimals)")
            if !Self.appendFixedFast(value, decimals: decimals, to: &out) {
                Self.appendFixedExact(value, decimals: decimals, to: &out)
            }
        }
        return true
    }

    /// Powers of ten exactly representable as Double, 10⁰ … 10²².
    private static let powersOfTen: [Double] = (0...22).map { n in (0..<n).reduce(1.0) { p, _ in p * 10 } }

    /// The fast path of `.fixed`: p = |x|·10ⁿ rounded half away from zero, when p < 10¹² and p's
    /// fraction is clearly away from ½. Then the shortest decimal S of x, with |S − x| ≤ ulp(x)/2,
    /// rounds the same way (|S·10ⁿ − p| ≤ 2⁻⁵¹·p < the guard), so both paths give the same bytes.
    /// Returns false (appending nothing) when it cannot decide.
    static func appendFixedFast(_ value: Double, decimals: Int, to out: inout [UInt8]) -> Bool {
        guard decimals <= 12 else { return false }
        let scaled = abs(value) * powersOfTen[decimals]
        guard scaled < 1e12 else { return false }
        let whole = scaled.rounded(.down)
        let fraction = scaled - whole // exact: scaled < 2⁵²
        let guardBand = (scaled + 1) * 1e-14
        guard abs(fraction - 0.5) > guardBand else { return false }
        let n = UInt64(whole) + (fraction > 0.5 ? 1 : 0)
        appendDigits(of: n, negative: value < 0, decimals: decimals, to: &out)
        return true
    }

    /// Powers of ten as UInt64, 10⁰ … 10¹⁹.
    private static let integerPowersOfTen: [UInt64] = (0...19).map { n in (0..<n).reduce(UInt64(1)) { p, _ in p * 10 } }

    /// Writes n·10⁻ᵈ with exactly d decimals; the sign only when n ≠ 0.
    static func appendDigits(of n: UInt64, negative: Bool, decimals: Int, to out: inout [UInt8]) {
        var count = 1
        while count < integerPowersOfTen.count, integerPowersOfTen[count] <= n { count += 1 }
        let total = max(count, decimals + 1)
        if negative && n != 0 { out.append(UInt8(ascii: "-")) }
        for position in stride(from: total - 1, through: 0, by: -1) {
            if position == decimals - 1 { out.append(UInt8(ascii: ".")) }
            let digit = position < count ? (n / integerPowersOfTen[position]) % 10 : 0
            out.append(UInt8(ascii: "0") + UInt8(digit))
        }
    }

    /// Decimal digits of the shortest representation: value = ±0.d₁d₂…dₖ × 10^pointPosition.
    private static func shortestDigits(_ value: Double) -> (negative: Bool, digits: [UInt8], pointPosition: Int) {
        var negative = false
        var digits: [UInt8] = []
        digits.reserveCapacity(20)
        var pointPosition = 0
        var seenPoint = false
        var inExponent = false
        var exponentNegative = false
        var exponent = 0
        for byte in value.description.utf8 {
            switch byte {
            case UInt8(ascii: "-"):
                if inExponent { exponentNegative = true } else { negative = true }
            case UInt8(ascii: "+"):
                break
            case UInt8(ascii: "."):
                seenPoint = true
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                inExponent = true
            default:
                let digit = byte &- UInt8(ascii: "0")
                if inExponent {
                    exponent = exponent * 10 + Int(digit)
                } else {
                    digits.append(digit)
                    if !seenPoint { pointPosition += 1 }
                }
            }
        }
        pointPosition += exponentNegative ? -exponent : exponent
        var leading = 0
        while leading < digits.count, digits[leading] == 0 { leading += 1 }
        digits.removeFirst(leading)
        pointPosition -= leading
        while let last = digits.last, last == 0 { digits.removeLast() }
        return (negative, digits, pointPosition)
    }

    /// The exact path of `.fixed`: rounds the shortest decimal digit string half away from zero.
    static func appendFixedExact(_ value: Double, decimals: Int, to bytes: inout [UInt8]) {
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
    }
}
