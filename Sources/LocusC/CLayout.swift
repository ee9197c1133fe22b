#if canImport(Glibc)
import Glibc
#endif
import LocusCore

/// The byte layout of the plain structs of `include/locus.h` (LP64), in one place.
///
/// Swift cannot see the header's structs (no C module for it), so the library reads and writes
/// them at these offsets through raw pointers. The header pins the same numbers with C99 static
/// asserts (`LOCUS_STATIC_ASSERT`), so a header and a library that disagree fail to compile.
/// Loads and stores are unaligned-safe (`loadUnaligned`, `storeBytes`), so no alignment trap.
enum CLayout {
    /// Capacity of an id field, bytes, with the NUL (`LOCUS_ID_CAPACITY`).
    static let idCapacity = 64
    /// Addresses listed in `locus_position.rejected` (`LOCUS_REJECTED_CAPACITY`).
    static let rejectedCapacity = 8
    /// Largest locator count of `locus_solve` and `locus_dop`.
    static let maximumLocators = 4096

    /// `locus_options`.
    enum Options {
        static let size = 40
        static let rateHertz = 0, sigmaMeters = 8, defaultFloor = 16, filter = 24, coupling = 28, mode = 32, flags = 36
    }
    /// `locus_option_flag` bits of `locus_options.flags`.
    enum OptionFlag {
        static let smooth: UInt32 = 1, tagOffsetOn: UInt32 = 2, tagOffsetOff: UInt32 = 4
        static let all: UInt32 = smooth | tagOffsetOn | tagOffsetOff
    }
    /// `locus_calibration_options`.
    enum CalibrationOptions {
        static let size = 24
        static let floor = 0, fitSlope = 8, fixPositions = 12, minimumRanges = 16, holdoutBlockMilliseconds = 20
    }
    /// `locus_locator_calibration`.
    enum LocatorCalibration {
        static let size = 152
        static let bias = 0, biasSD = 8, slope = 16, slopeSD = 24, noise = 32, offset = 40, offsetSD = 64, ranges = 72
        static let floor = 80, address = 144, flags = 148
        static let estimated: Int32 = 1, flagged: Int32 = 2, checked: Int32 = 4
    }
    /// `locus_calibration_summary`.
    enum CalibrationSummary {
        static let size = 48
        static let residualRMS = 0, locators = 8, estimated = 16, flagged = 24, unusedRanges = 32, separable = 40, warnings = 44
    }
    /// `locus_calibration_validation` (ABI 0.3).
    enum CalibrationValidation {
        static let size = 576
        static let verdict = 0, blocks = 4, heldOutBlocks = 8, moved = 12, blockSeconds = 16, fitRanges = 24
        static let heldOutRanges = 32, scored = 40, surveyed = 48, calibrated = 56, reason = 64, reasonCapacity = 512
        /// `enum locus_calibration_verdict`.
        static let notValidated: Int32 = 0, accepted: Int32 = 1, notJudged: Int32 = 2, positionsRefused: Int32 = 3
        static let unproven: Int32 = 4, refused: Int32 = 5
    }
    /// `locus_replay_request`.
    enum ReplayRequest {
        static let site = 0, trace = 8, truth = 16, positions = 24, events = 32, report = 40
        static let zoneWindow = 48, truthShift = 56, flags = 64, jobs = 68
        static let truthShiftGiven: UInt32 = 1, truthShiftAuto: UInt32 = 2
    }
    /// `locus_geometry_request`.
    enum GeometryRequest {
        static let site = 0, floor = 8, svg = 16, trace = 24, grid = 32, maximumRange = 40, accuracySigma = 48, flags = 56
        static let suggest: UInt32 = 1, kernel: UInt32 = 2, tdoa: UInt32 = 4
    }
    /// `locus_calibrate_request`.
    enum CalibrateRequest {
        static let site = 0, trace = 8, truth = 16, out = 24, floor = 32, estimator = 40, height = 44, minimumSamples = 48, flags = 56
        static let holdoutBlockMilliseconds = 60
        static let slope: UInt32 = 1, fixPositions: UInt32 = 2, noHoldout: UInt32 = 4
    }
    /// `locus_range`.
    enum Range {
        static let size = 40
        static let timeSeconds = 0, rangeMeters = 8, tag = 16, floor = 24, anchor = 32
    }
    /// `locus_difference` (ABI 0.2).
    enum Difference {
        static let size = 40
        static let timeSeconds = 0, differenceMeters = 8, tag = 16, floor = 24, referenceAnchor = 32, otherAnchor = 34
    }
    /// `locus_position`.
    enum Position {
        static let size = 328
        static let timeSeconds = 0, x = 8, y = 16, z = 24, vx = 32, vy = 40, vz = 48, speed = 56, course = 64
        static let covariance = 72, accuracy = 120, accuracy95 = 128, hdop = 136, vdop = 144, pdop = 152
        static let residualRMS = 160, flags = 168, anchorsUsed = 172, rejectedCount = 176, rejected = 180
        static let tag = 196, floor = 260
        static let hasVelocity: Int32 = 1, hasCourse: Int32 = 2, hasVDOP: Int32 = 4
    }
    /// `locus_event`.
    enum Event {
        static let size = 216
        static let timeSeconds = 0, dwellSeconds = 8, kind = 16, tag = 20, floor = 84, zone = 148
    }
    /// `locus_stats`.
    enum Stats {
        static let size = 64
    }
    /// `locus_point`.
    enum Point {
        static let size = 24
    }
    /// `locus_solve_options`.
    enum SolveOptions {
        static let size = 24
        static let sigmaMeters = 0, tagHeightMeters = 8, mode = 16, noOutlierRejection = 20
    }
    /// `locus_fix`.
    enum Fix {
        static let size = 144
        static let x = 0, y = 8, z = 16, covariance = 24, hdop = 72, vdop = 80, pdop = 88, residualRMS = 96
        static let chiSquare = 104, rejectedMask = 112, mode = 120, anchorsUsed = 124, rejectedCount = 128
        static let iterations = 132, converged = 136
    }
    /// `locus_dop_result`.
    enum DOP {
        static let size = 32
        static let hdop = 0, vdop = 8, pdop = 16, mode = 24
    }

    /// `enum locus_mode` values.
    static let modeAutomatic: Int32 = 0, modePlanar: Int32 = 1, modeSpatial: Int32 = 2

    /// Writes a symmetric matrix as `xx, xy, xz, yy, yz, zz` at `offset`.
    static func store(_ c: SymmetricMatrix3, to raw: UnsafeMutableRawPointer, at offset: Int) {
        raw.storeBytes(of: c.xx, toByteOffset: offset, as: Double.self)
        raw.storeBytes(of: c.xy, toByteOffset: offset + 8, as: Double.self)
        raw.storeBytes(of: c.xz, toByteOffset: offset + 16, as: Double.self)
        raw.storeBytes(of: c.yy, toByteOffset: offset + 24, as: Double.self)
        raw.storeBytes(of: c.yz, toByteOffset: offset + 32, as: Double.self)
        raw.storeBytes(of: c.zz, toByteOffset: offset + 40, as: Double.self)
    }

    /// Reads a symmetric matrix stored as `xx, xy, xz, yy, yz, zz` at `offset`.
    static func loadMatrix(from raw: UnsafeRawPointer, at offset: Int) -> SymmetricMatrix3 {
        func at(_ k: Int) -> Double { raw.loadUnaligned(fromByteOffset: offset + 8 * k, as: Double.self) }
        return SymmetricMatrix3(xx: at(0), xy: at(1), xz: at(2), yy: at(3), yz: at(4), zz: at(5))
    }

    /// Writes `text` as a NUL-terminated id field of `idCapacity` bytes (callers validated its length).
    /// On the C ABI's per-fix path (`locus_position.tag`, `.floor`): a plain byte copy.
    static func storeID(_ text: String, to raw: UnsafeMutableRawPointer, at offset: Int) {
        storeText(text, to: raw, at: offset, capacity: idCapacity)
    }

    /// Writes `text` as a NUL-terminated field of `capacity` bytes, zero-filled; a text too long is cut
    /// before the UTF-8 sequence that does not fit whole (so the field stays valid UTF-8).
    static func storeText(_ text: String, to raw: UnsafeMutableRawPointer, at offset: Int, capacity: Int) {
        (raw + offset).initializeMemory(as: UInt8.self, repeating: 0, count: capacity)
        let utf8 = text.utf8
        var end = min(utf8.count, capacity - 1)
        if end < utf8.count {
            // Back off over continuation bytes (10xxxxxx): the cut falls where a sequence starts.
            while end > 0, utf8[utf8.index(utf8.startIndex, offsetBy: end)] & 0xC0 == 0x80 { end -= 1 }
        }
        for (k, byte) in utf8.prefix(end).enumerated() {
            raw.storeBytes(of: byte, toByteOffset: offset + k, as: UInt8.self)
        }
    }

    /// Reads a NUL-terminated id field of `idCapacity` bytes at `offset`.
    /// - Throws: E1003 when the field has no NUL, is empty or is not UTF-8.
    static func loadID(from raw: UnsafeRawPointer, at offset: Int, field: String) throws(LocusError) -> String {
        try CText.identifier(UnsafeRawPointer(raw + offset), field: field)
    }
}

/// Text crossing the boundary: C strings in, checked.
enum CText {
    /// A NUL-terminated id of 1–63 bytes of UTF-8 at `pointer` (at most `CLayout.idCapacity` bytes read).
    /// - Throws: E1003 when it is empty, longer than 63 bytes or not UTF-8.
    static func identifier(_ pointer: UnsafeRawPointer, field: String) throws(LocusError) -> String {
        var count = 0
        while pointer.load(fromByteOffset: count, as: UInt8.self) != 0 {
            count += 1
            guard count < CLayout.idCapacity else {
                throw LocusError(.invalidArgument, "\(field) is longer than \(CLayout.idCapacity - 1) bytes (or not NUL-terminated)")
            }
        }
        guard count > 0 else { throw LocusError(.invalidArgument, "\(field) is empty") }
        // Decoded in place: ids up to 15 bytes become small strings, so a push allocates nothing here.
        guard let text = String(validating: UnsafeRawBufferPointer(start: pointer, count: count), as: UTF8.self) else {
            throw LocusError(.invalidArgument, "\(field) is not valid UTF-8")
        }
        return text
    }

    /// A NUL-terminated UTF-8 string of any length.
    /// - Throws: E1003 when `pointer` is NULL or the text is not UTF-8.
    static func string(_ pointer: UnsafePointer<CChar>?, field: String) throws(LocusError) -> String {
        guard let pointer else { throw LocusError(.invalidArgument, "\(field) is NULL") }
        guard let text = String(validatingCString: pointer) else {
            throw LocusError(.invalidArgument, "\(field) is not valid UTF-8")
        }
        return text
    }

    /// Copies `bytes` and a NUL into `buffer` when it holds them; stores the length (without the NUL)
    /// in `length` either way.
    /// - Throws: E1003 when `buffer` is NULL with a positive capacity, or too small.
    static func copy(_ bytes: [UInt8], to buffer: UnsafeMutablePointer<CChar>?, capacity: Int,
                     length: UnsafeMutablePointer<Int>?) throws(LocusError) {
        length?.pointee = bytes.count
        guard capacity >= 0 else { throw LocusError(.invalidArgument, "capacity is negative (size_t above SSIZE_MAX)") }
        guard capacity > bytes.count else {
            throw LocusError(.invalidArgument, "buffer too small: \(bytes.count + 1) bytes needed, \(capacity) given")
        }
        guard let buffer else { throw LocusError(.invalidArgument, "buffer is NULL") }
        bytes.withUnsafeBytes { source in
            UnsafeMutableRawBufferPointer(start: buffer, count: capacity).copyMemory(from: source)
        }
        buffer[bytes.count] = 0
    }

    /// A string that lives as long as the process (for `const char *` results).
    static func permanent(_ text: String) -> UnsafePointer<CChar>? {
        text.withCString { strdup($0) }.map { UnsafePointer($0) }
    }
}
