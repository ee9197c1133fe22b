import LocusCore
import LocusSolvers

/// Reads the fuzzer's bytes as solver input: a little-endian cursor that never runs past the end
/// (missing bytes read as 0).
private struct ByteCursor {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    /// A coordinate or range: usually a small decimal in metres (geometry the solver meets in
    /// venues), sometimes a raw IEEE-754 bit pattern (NaN, ±∞, subnormals, 1e308).
    mutating func value(scale: Double) -> Double {
        let kind = byte()
        if kind & 0x0F == 0x0F {
            var bits: UInt64 = 0
            for k in 0..<8 { bits |= UInt64(byte()) << UInt64(8 * k) }
            return Double(bitPattern: bits)
        }
        let raw = UInt16(byte()) | UInt16(byte()) << 8
        return (Double(Int16(bitPattern: raw)) / 32768) * scale
    }
}

/// libFuzzer entry point: random geometry and ranges through the one trilateration search.
///
/// Layout: byte 0 = locator count (mod 80, so the workspace scratch beyond 64 is reached), byte 1 = mode
/// and options, then per locator x, y, z and per range one `ByteCursor.value`.
/// Invariants checked (a violation traps): `Trilaterator` (the C search) returns a solution whose
/// every number is finite or throws E1003/E4001–E4004, and its counts stay within the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSolver(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var cursor = ByteCursor(bytes: UnsafeBufferPointer(start: data, count: size))
    let n = Int(cursor.byte() % 80)
    let flags = cursor.byte()
    let mode: TrilaterationMode = [.automatic, .planar, .spatial, .automatic][Int(flags & 3)]
    let scale = flags & 4 != 0 ? 1000.0 : 20.0
    var locators: [Point3] = []
    var ranges: [Double] = []
    for _ in 0..<n {
        let x = cursor.value(scale: scale), y = cursor.value(scale: scale), z = cursor.value(scale: 4)
        locators.append(Point3(x: x, y: y, z: z))
    }
    for _ in 0..<n { ranges.append(abs(cursor.value(scale: scale))) }
    var configuration = TrilaterationConfiguration(mode: mode, tagHeightMeters: flags & 8 != 0 ? 1.1 : 0)
    configuration.isRobust = flags & 16 == 0
    let allowed: Set<LocusErrorCode> = [.invalidArgument, .tooFewRanges, .degenerateGeometry, .invalidRange, .solverDiverged]
    // The one search (C kernel; on the stack up to 64 locators, in the workspace beyond). Its
    // agreement with the LAPACKE reference oracle is checked by LocusSolversTests (TrilaterationFuzzTests).
    for solver in [Trilaterator(configuration: configuration)] {
        do {
            let s = try solver.solve(locators: locators, rangesMeters: ranges)
            precondition(s.position.isFinite && s.covariance.isFinite, "finite position and covariance")
            precondition(s.hdop.isFinite && s.pdop.isFinite && (s.vdop ?? 0).isFinite, "finite DOP")
            precondition(s.residualRMSMeters.isFinite && s.chiSquare.isFinite, "finite residuals")
            precondition(s.locatorsUsed <= n && s.rejectedCount <= n, "counts within the input")
        } catch {
            precondition(allowed.contains(error.code), "unexpected error \(error)")
        }
    }
    return 0
}
