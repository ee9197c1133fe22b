/// Fixed-decimal number text for CSV and messages, appended to a byte buffer without
/// `String(format:)`: the same spelling as `JSONNumberFormat.fixed` (one formatter for every
/// output), so a value reads the same in positions.csv and in a JSON summary.
///
/// `append(x, decimals: d)` writes x with exactly d decimals, rounded half away from zero on the
/// shortest decimal that reads back as x, never an exponent, never `-0`. Non-finite values (which the
/// engine never produces) are written as an empty field so no `nan` can leak into a CSV.
package enum DecimalText {
    /// Appends `x` with `decimals` (0…20) digits after the point.
    package static func append(_ x: Double, decimals: Int, to out: inout [UInt8]) {
        _ = JSONNumberFormat.fixed(min(max(decimals, 0), 20)).append(x, to: &out)
    }

    /// `x` with `decimals` digits as a String (for messages and summaries).
    package static func string(_ x: Double, decimals: Int) -> String {
        var out: [UInt8] = []
        append(x, decimals: decimals, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends a whole number.
    package static func append(_ n: Int, to out: inout [UInt8]) {
        JSONNumberFormat.appendDigits(of: UInt64(n.magnitude), negative: n < 0, decimals: 0, to: &out)
    }
}
