import LocusCore

/// Fixed-decimal number text, appended to a byte buffer without `String(format:)` or allocation.
///
/// `append(x, decimals: d)` writes round(x·10ᵈ)/10ᵈ with exactly d decimals (half away from zero),
/// never an exponent, never `-0`. Values beyond ±9·10¹⁵/10ᵈ fall back to Swift's shortest
/// round-trip text. Non-finite values (which the engine never produces) are written as an empty
/// field so no `nan` can leak into a CSV.
package enum DecimalText {
    private static let scales: [Double] = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9]

    /// Appends `x` with `decimals` (0…9) digits after the point.
    package static func append(_ x: Double, decimals: Int, to out: inout [UInt8]) {
        guard x.isFinite else { return }
        let d = min(max(decimals, 0), 9)
        let scaled = (abs(x) * scales[d]).rounded(.toNearestOrAwayFromZero)
        guard scaled < 9e15 else {
            out.append(contentsOf: Array(String(x).utf8))
            return
        }
        var v = UInt64(scaled)
        if v != 0 && x < 0 { out.append(UInt8(ascii: "-")) }
        // Digits, least significant first, into a small stack buffer.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { digits in
            var n = 0
            repeat {
                digits[n] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
                n += 1
            } while v > 0 || n <= d
            var i = n - 1
            while i >= 0 {
                out.append(digits[i])
                if i == d && d > 0 { out.append(UInt8(ascii: ".")) }
                i -= 1
            }
        }
    }

    /// `x` with `decimals` digits as a String (for messages and JSON).
    package static func string(_ x: Double, decimals: Int) -> String {
        var out: [UInt8] = []
        append(x, decimals: decimals, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends a whole number.
    package static func append(_ n: Int, to out: inout [UInt8]) {
        if n < 0 { out.append(UInt8(ascii: "-")) }
        var v = n.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { digits in
            var k = 0
            repeat { digits[k] = UInt8(ascii: "0") + UInt8(v % 10); v /= 10; k += 1 } while v > 0
            while k > 0 { k -= 1; out.append(digits[k]) }
        }
    }
}
