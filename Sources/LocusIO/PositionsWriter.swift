import LocusCore

/// Writes `positions.csv` (SPEC §2): `t,tag,x,y,z` then
/// `vx,vy,speed_mps,course_deg,accuracy_m,accuracy95_m,hdop,anchors,rejected,floor`.
///
/// Fixed formatting, so the same fixes give the same bytes: time 3 decimals (ms), coordinates and
/// accuracies 4 decimals (0.1 mm), velocities 3, course in degrees 1, HDOP 2. `vx`, `vy`, `speed_mps`
/// and `course_deg` are empty for raw solver fixes (no velocity) and `course_deg` also when the tag
/// is still. `accuracy_m` is DRMS √(σx²+σy²); `accuracy95_m` the 95 % horizontal radius. `rejected`
/// lists the rejected locators' addresses separated by spaces.
public struct PositionsWriter {
    /// The header line.
    public static let header = "t,tag,x,y,z,vx,vy,speed_mps,course_deg,accuracy_m,accuracy95_m,hdop,anchors,rejected,floor\n"

    public private(set) var bytes: [UInt8] = Array(Self.header.utf8)

    public init() {}

    /// Forgets the bytes written (the header too), keeping the storage: for output written piece
    /// by piece (`bytes` then holds only the rows appended since).
    mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    /// Appends one row: written into 512 bytes of stack scratch memory (15 fields of at most 16
    /// bytes, the ids and up to 8 rejected addresses) and copied once; a row the fast number
    /// path cannot spell exactly (or a long or quoted id) is written by `appendExact`, the same bytes.
    public mutating func append(_ fix: PositionFix) { Self.appendRow(fix, to: &bytes) }

    /// Appends the row of `fix` to `bytes` (what `append` writes; for callers that keep their own
    /// buffers, such as the shards of a parallel replay).
    package static func appendRow(_ fix: PositionFix, to bytes: inout [UInt8]) {
        // A literal size: the scratch is then a plain stack slot (no runtime size check).
        let written = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 512) { scratch -> Bool in
            guard let base = scratch.baseAddress else { return false }
            var row = ScratchRow(base: base, capacity: scratch.count)
            guard Self.write(fix, to: &row) else { return false }
            bytes.append(contentsOf: row.written)
            return true
        }
        if !written { appendExact(fix, to: &bytes) }
    }

    /// The fast spelling of one row into `row`; false when any part needs the exact path.
    private static func write(_ fix: PositionFix, to row: inout ScratchRow) -> Bool {
        let comma = UInt8(ascii: ",")
        guard row.appendFixed(fix.timeSeconds, decimals: 3), row.append(comma),
              row.appendPlain(fix.tag.rawValue, forbidding: comma, UInt8(ascii: "\"")), row.append(comma),
              row.appendFixed(fix.position.x, decimals: 4), row.append(comma),
              row.appendFixed(fix.position.y, decimals: 4), row.append(comma),
              row.appendFixed(fix.position.z, decimals: 4), row.append(comma) else { return false }
        if let v = fix.velocity {
            guard row.appendFixed(v.x, decimals: 3), row.append(comma),
                  row.appendFixed(v.y, decimals: 3), row.append(comma),
                  row.appendFixed(v.horizontalNorm, decimals: 3), row.append(comma) else { return false }
            if let course = fix.courseRadians { guard row.appendFixed(course * 180 / Double.pi, decimals: 1) else { return false } }
            guard row.append(comma) else { return false }
        } else {
            guard row.append(",,,,") else { return false }
        }
        guard row.appendFixed(fix.horizontalAccuracyMeters, decimals: 4), row.append(comma),
              row.appendFixed(fix.horizontalAccuracy95Meters, decimals: 4), row.append(comma),
              row.appendFixed(fix.quality.hdop, decimals: 2), row.append(comma),
              row.appendInteger(fix.quality.locatorsUsed), row.append(comma) else { return false }
        let rejected = fix.quality.rejected  // by index: its iterator is an AnyIterator (allocates)
        for k in 0..<rejected.count {
            if k > 0 { guard row.append(UInt8(ascii: " ")) else { return false } }
            guard row.appendAddress(rejected[k].rawValue) else { return false }
        }
        return row.append(comma) && row.appendPlain(fix.floor.rawValue, forbidding: comma, UInt8(ascii: "\"")) && row.append(UInt8(ascii: "\n"))
    }

    /// Appends one row through the general formatter (`DecimalText`, `CSVText`): the reference
    /// spelling, used for rows the fast path declines.
    static func appendExact(_ fix: PositionFix, to bytes: inout [UInt8]) {
        let comma = UInt8(ascii: ",")
        DecimalText.append(fix.timeSeconds, decimals: 3, to: &bytes); bytes.append(comma)
        CSVText.appendField(fix.tag.rawValue, to: &bytes); bytes.append(comma)
        DecimalText.append(fix.position.x, decimals: 4, to: &bytes); bytes.append(comma)
        DecimalText.append(fix.position.y, decimals: 4, to: &bytes); bytes.append(comma)
        DecimalText.append(fix.position.z, decimals: 4, to: &bytes); bytes.append(comma)
        if let v = fix.velocity {
            DecimalText.append(v.x, decimals: 3, to: &bytes); bytes.append(comma)
            DecimalText.append(v.y, decimals: 3, to: &bytes); bytes.append(comma)
            DecimalText.append(v.horizontalNorm, decimals: 3, to: &bytes); bytes.append(comma)
            if let course = fix.courseRadians { DecimalText.append(course * 180 / Double.pi, decimals: 1, to: &bytes) }
            bytes.append(comma)
        } else {
            bytes.append(contentsOf: [comma, comma, comma, comma])
        }
        DecimalText.append(fix.horizontalAccuracyMeters, decimals: 4, to: &bytes); bytes.append(comma)
        DecimalText.append(fix.horizontalAccuracy95Meters, decimals: 4, to: &bytes); bytes.append(comma)
        DecimalText.append(fix.quality.hdop, decimals: 2, to: &bytes); bytes.append(comma)
        DecimalText.append(fix.quality.locatorsUsed, to: &bytes); bytes.append(comma)
        var first = true
        for address in fix.quality.rejected {
            if !first { bytes.append(UInt8(ascii: " ")) }
            first = false
            bytes.append(contentsOf: Array(address.description.utf8))
        }
        bytes.append(comma)
        CSVText.appendField(fix.floor.rawValue, to: &bytes)
        bytes.append(UInt8(ascii: "\n"))
    }
}

/// CSV text fields.
package enum CSVText {
    /// `text` made safe to quote in a message: control and non-ASCII bytes become `?`, and it is
    /// cut to `limit` characters with `…` (a binary file's "header" must not reach a terminal raw).
    static func printable(_ text: String, limit: Int = 120) -> String {
        var out = ""
        for b in text.utf8.prefix(limit) { out.append(b >= 0x20 && b < 0x7F ? Character(UnicodeScalar(b)) : "?") }
        return text.utf8.count > limit ? out + "…" : out
    }

    /// Appends `text` as a CSV field, quoted (with doubled quotes) only when it holds a comma, quote
    /// or line break.
    package static func appendField(_ text: String, to out: inout [UInt8]) {
        let needsQuotes = text.utf8.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D }
        guard needsQuotes else { out.append(contentsOf: text.utf8); return }
        out.append(UInt8(ascii: "\""))
        for b in text.utf8 {
            if b == UInt8(ascii: "\"") { out.append(b) }
            out.append(b)
        }
        out.append(UInt8(ascii: "\""))
    }
}
