import LocusCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Parses decimal numbers straight from bytes, without creating a `String`.
///
/// Fast path (Clinger): a decimal with at most 19 significant digits whose mantissa m < 2⁵³ and
/// power-of-ten exponent |e| ≤ 22 is exactly m·10ᵉ or m/10⁻ᵉ — one correctly rounded operation, so
/// the result equals `strtod`'s. Anything else (long mantissas, large exponents, `inf`, `nan`) goes
/// through `strtod` on a stack copy, which is also correctly rounded. Leading/trailing spaces are
/// allowed; anything else unparsed makes the field invalid.
enum CSVNumberParser {
    @usableFromInline static let powersOfTen: [Double] = (0...22).map { k in
        var p = 1.0
        for _ in 0..<k { p *= 10 }
        return p
    }

    /// The number in `bytes[start..<end]`, or nil when the field is not a complete number.
    /// `nan`, `inf` and overflow parse to non-finite values: the caller decides what they mean.
    @inlinable
    static func parseDouble(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Double? {
        var i = start, j = end
        while i < j, bytes[i] == 0x20 || bytes[i] == 0x09 { i += 1 }
        while j > i, bytes[j - 1] == 0x20 || bytes[j - 1] == 0x09 || bytes[j - 1] == 0x0D { j -= 1 }
        guard i < j else { return nil }
        var k = i
        var negative = false
        if bytes[k] == UInt8(ascii: "-") { negative = true; k += 1 } else if bytes[k] == UInt8(ascii: "+") { k += 1 }
        var mantissa: UInt64 = 0
        var digits = 0
        var exponent = 0
        var sawDigit = false
        while k < j, bytes[k] &- 0x30 < 10 {
            if digits < 19 { mantissa = mantissa &* 10 &+ UInt64(bytes[k] &- 0x30); if mantissa != 0 { digits += 1 } } else { exponent += 1 }
            sawDigit = true
            k += 1
        }
        if k < j, bytes[k] == UInt8(ascii: ".") {
            k += 1
            while k < j, bytes[k] &- 0x30 < 10 {
                if digits < 19 { mantissa = mantissa &* 10 &+ UInt64(bytes[k] &- 0x30); exponent -= 1; if mantissa != 0 { digits += 1 } }
                sawDigit = true
                k += 1
            }
        }
        let fast = sawDigit && digits < 19
        if k < j, bytes[k] == UInt8(ascii: "e") || bytes[k] == UInt8(ascii: "E") {
            k += 1
            var expNegative = false
            if k < j, bytes[k] == UInt8(ascii: "-") { expNegative = true; k += 1 } else if k < j, bytes[k] == UInt8(ascii: "+") { k += 1 }
            var e = 0
            var sawExpDigit = false
            while k < j, bytes[k] &- 0x30 < 10 {
                if e < 100_000 { e = e * 10 + Int(bytes[k] &- 0x30) }
                sawExpDigit = true
                k += 1
            }
            if !sawExpDigit { return nil }
            exponent += expNegative ? -e : e
        }
        if k == j && fast && mantissa < (1 << 53) && exponent >= -22 && exponent <= 22 {
            let m = Double(mantissa)
            let value = exponent >= 0 ? m * powersOfTen[exponent] : m / powersOfTen[-exponent]
            return negative ? -value : value
        }
        return slowParse(bytes, i, j)
    }

    /// The common case of `parseDouble` only: `[-+]?d+(.d*)?` or `[-+]?.d+` with at most 18 digits,
    /// nothing else (no spaces, no exponent). Then the value is m·10ᵉ or m/10⁻ᵉ exactly as
    /// `parseDouble` computes it (the same m and e, one correctly rounded operation); nil means
    /// "not this case", not "not a number": ask `parseDouble`.
    @inlinable
    static func parsePlainDecimal(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Double? {
        guard let (value, stop) = scanPlainDecimal(bytes, from: start, limit: end), stop == end else { return nil }
        return value
    }

    /// Reads a plain decimal (as `parsePlainDecimal`) starting at `start` and stopping at the first
    /// byte that is not part of it (or at `limit`); returns the value and that byte's index, or nil
    /// when the bytes read are not a plain decimal of at most 18 digits. The caller checks what
    /// stopped it.
    @inline(__always)
    static func scanPlainDecimal(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, limit: Int) -> (Double, Int)? {
        var k = start
        guard k < limit else { return nil }
        var negative = false
        if bytes[k] == UInt8(ascii: "-") { negative = true; k += 1 } else if bytes[k] == UInt8(ascii: "+") { k += 1 }
        var mantissa: UInt64 = 0
        var digits = accumulateDigits(bytes, &k, limit, into: &mantissa)
        var fractionDigits = 0
        if k < limit, bytes[k] == UInt8(ascii: ".") {
            k += 1
            fractionDigits = accumulateDigits(bytes, &k, limit, into: &mantissa)
            digits += fractionDigits
        }
        // ≤ 18 digits: m < 10¹⁸ < 2⁶³ without overflow (so e ≥ −18 too); Clinger needs m < 2⁵³.
        guard digits > 0, digits <= 18, mantissa < (1 << 53) else { return nil }
        let value = fractionDigits == 0 ? Double(mantissa) : Double(mantissa) / exactPowerOfTen(fractionDigits)
        return (negative ? -value : value, k)
    }

    /// `parsePlainDecimal(bytes, start, end)` for a field with at least 17 readable bytes from
    /// `start` (the caller's guarantee), eight digits at a time: the digits (before and after the
    /// point, as one run when they are at most 8 in all, else each part of at most 8) are converted by
    /// `ByteWords.digits`, which gives the same m and e and so the same value (m/10⁻ᵉ, one correctly
    /// rounded operation). Any other field — longer parts, a byte that is not a digit — gets
    /// `parsePlainDecimal`'s answer. (Transparent: `@inline(__always)` left it a call per number.)
    @_transparent
    static func parsePlainDecimalWide(_ base: UnsafePointer<UInt8>, _ bytes: UnsafeBufferPointer<UInt8>,
                                      _ start: Int, _ end: Int) -> Double? {
        guard start < end else { return nil }
        var k = start
        let sign = base[k]
        let negative = sign == UInt8(ascii: "-")
        if negative || sign == UInt8(ascii: "+") { k += 1 }
        let length = end - k
        let word = ByteWords.load(base, k)
        let points = ByteWords.equal(word, UInt8(ascii: "."))
        // The point's offset (none among the first eight bytes: then the field must be at most
        // eight digits).
        let point = points == 0 ? Int.max : points.trailingZeroBitCount >> 3
        // The usual field, a point and at most 8 digits in all: the bytes after the point moved down
        // over it (the ninth byte from memory) make one run of digits, one conversion.
        if point < length && length <= 9 && length >= 2 {
            let before = (UInt64(1) &<< UInt64(truncatingIfNeeded: 8 &* point)) &- 1
            let joined = word & before | (word &>> 8) & ~before | UInt64(base[k + 8]) &<< 56
            if let mantissa = ByteWords.digits(joined, count: length - 1) {
                let fraction = length - 1 - point
                let m = Double(Int64(bitPattern: mantissa))  // < 10⁸: one signed conversion
                let value = fraction == 0 ? m : m / exactPowerOfTen(fraction)
                return negative ? -value : value
            }
            return parsePlainDecimalOutOfLine(bytes, start, end)
        }
        let whole = min(point, length), fraction = point < length ? length - point - 1 : 0
        guard length > 0, whole <= 8, fraction <= 8, whole + fraction > 0,
              let high = ByteWords.digits(word, count: whole),
              let low = ByteWords.digits(ByteWords.load(base, k + whole + 1), count: fraction) else {
            return parsePlainDecimalOutOfLine(bytes, start, end)
        }
        let mantissa = high &* integerPowerOfTen(fraction) &+ low
        guard mantissa < (1 << 53) else { return nil }
        let m = Double(Int64(bitPattern: mantissa))
        let value = fraction == 0 ? m : m / exactPowerOfTen(fraction)
        return negative ? -value : value
    }

    /// `parsePlainDecimal`, not inlined: the rare fields `parsePlainDecimalWide` hands over (so that
    /// it stays small enough to inline where rows are read).
    @inline(never)
    static func parsePlainDecimalOutOfLine(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Double? {
        parsePlainDecimal(bytes, start, end)
    }

    /// Reads ASCII digits from `k` up to `limit` into `mantissa` (m ← 10m + d, wrapping: the caller
    /// bounds the digit count); returns how many, with `k` at the first byte that is not a digit.
    @inline(__always)
    static func accumulateDigits(_ bytes: UnsafeBufferPointer<UInt8>, _ k: inout Int, _ limit: Int,
                                 into mantissa: inout UInt64) -> Int {
        let start = k
        while k < limit {
            let d = bytes[k] &- 0x30
            guard d < 10 else { break }
            mantissa = mantissa &* 10 &+ UInt64(d)
            k += 1
        }
        return k - start
    }

    /// 10ⁿ for n in 0…18, exactly (every such power is a Double): the integer power, converted
    /// (below 2⁶³: one signed conversion).
    @usableFromInline @inline(__always)
    static func exactPowerOfTen(_ n: Int) -> Double {
        Double(Int64(bitPattern: integerPowerOfTen(n)))
    }

    /// 10ⁿ for n in 0…18 (10¹⁸ for any other n).
    @usableFromInline @inline(__always)
    static func integerPowerOfTen(_ n: Int) -> UInt64 {
        switch n {
        case 0: 1
        case 1: 10
        case 2: 100
        case 3: 1_000
        case 4: 10_000
        case 5: 100_000
        case 6: 1_000_000
        case 7: 10_000_000
        case 8: 100_000_000
        case 9: 1_000_000_000
        case 10: 10_000_000_000
        case 11: 100_000_000_000
        case 12: 1_000_000_000_000
        case 13: 10_000_000_000_000
        case 14: 100_000_000_000_000
        case 15: 1_000_000_000_000_000
        case 16: 10_000_000_000_000_000
        case 17: 100_000_000_000_000_000
        default: 1_000_000_000_000_000_000
        }
    }

    /// `strtod` on a NUL-terminated stack copy; nil unless it consumes the whole field.
    @usableFromInline
    static func slowParse(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Double? {
        let length = end - start
        guard length > 0, length < 512 else { return nil }
        // strtod would also take hexadecimal floats ("0x10"); a CSV number is decimal.
        for k in start..<end where bytes[k] | 0x20 == UInt8(ascii: "x") { return nil }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: length + 1) { buffer -> Double? in
            for n in 0..<length { buffer[n] = CChar(bitPattern: bytes[start + n]) }
            buffer[length] = 0
            guard let base = buffer.baseAddress else { return nil }
            var endPointer: UnsafeMutablePointer<CChar>? = nil
            let value = strtod(base, &endPointer)
            guard let stop = endPointer, stop - base == length else { return nil }
            return value
        }
    }

    /// A whole number (decimal, or hexadecimal with `0x`), for locator addresses; nil otherwise.
    @inlinable
    static func parseUnsigned(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> UInt64? {
        var i = start, j = end
        while i < j, bytes[i] == 0x20 || bytes[i] == 0x09 { i += 1 }
        while j > i, bytes[j - 1] == 0x20 || bytes[j - 1] == 0x09 || bytes[j - 1] == 0x0D { j -= 1 }
        guard i < j else { return nil }
        var value: UInt64 = 0
        if j - i > 2, bytes[i] == UInt8(ascii: "0"), bytes[i + 1] | 0x20 == UInt8(ascii: "x") {
            for k in (i + 2)..<j {
                let c = bytes[k]
                let d: UInt8
                if c &- 0x30 < 10 { d = c &- 0x30 } else if (c | 0x20) &- 0x61 < 6 { d = (c | 0x20) &- 0x61 &+ 10 } else { return nil }
                guard value < (1 << 56) else { return nil }
                value = value << 4 | UInt64(d)
            }
            return value
        }
        for k in i..<j {
            let d = bytes[k] &- 0x30
            guard d < 10, value < (1 << 56) else { return nil }
            value = value * 10 + UInt64(d)
        }
        return value
    }
}
