import LocusCore

/// One kept row of a trace: the SPEC §2 fields with the tag and floor interned (indices into the
/// parser's `tags` and `floors`; floor −1 when the row names none) and the row's 1-based line.
///
/// A row is a range (`locator` and `rangeMeters`) or a range difference (TDoA: `reference` A,
/// `locator` B and `differenceMeters` = d(tag, B) − d(tag, A), in the same 8 bytes). The kind is told
/// by the two addresses: a range row holds its locator in both, a difference row two different ones
/// (A = B is skipped as `same_locator` before a row is kept), so the row stays 32 bytes.
package struct TraceRow: Sendable, Equatable {
    package var timeSeconds: Double
    /// The range (metres) of a range row, or the difference (metres) of a difference row.
    package var rangeMeters: Double
    package var tagIndex: Int32
    package var floorIndex: Int32
    package var line: Int32
    /// The locator of a range row; B of a difference row.
    package var locator: UInt16
    /// A, the reference locator, of a difference row; `locator` of a range row.
    package var reference: UInt16

    /// A range row.
    init(timeSeconds: Double, rangeMeters: Double, tagIndex: Int32, floorIndex: Int32, line: Int32, locator: UInt16) {
        self.timeSeconds = timeSeconds
        self.rangeMeters = rangeMeters
        self.tagIndex = tagIndex
        self.floorIndex = floorIndex
        self.line = line
        self.locator = locator
        self.reference = locator
    }

    /// A difference row (A = `reference` ≠ B = `locator`).
    package init(timeSeconds: Double, differenceMeters: Double, tagIndex: Int32, floorIndex: Int32, line: Int32,
                 reference: UInt16, locator: UInt16) {
        self.timeSeconds = timeSeconds
        self.rangeMeters = differenceMeters
        self.tagIndex = tagIndex
        self.floorIndex = floorIndex
        self.line = line
        self.locator = locator
        self.reference = reference
    }

    /// Whether the row is a range difference.
    @inline(__always) package var isDifference: Bool { reference != locator }
    /// The difference of a difference row, metres (d(tag, B) − d(tag, A)).
    @inline(__always) package var differenceMeters: Double { rangeMeters }
}
