import LocusCore

/// The one place that turns a LAPACK `info` (or a CLocusKernels status) into a `LocusError`.
///
/// LAPACK convention: `info == 0` success; `info < 0` argument number −info was illegal (always a
/// bug in Locus, never the user's data → E5101); `info > 0` a data-dependent failure whose meaning
/// the routine defines (a singular or not positive-definite matrix → E4002 for our geometry).
enum LapackStatus {
    /// Checks a LAPACK `info`.
    /// - Parameters:
    ///   - info: the routine's return value.
    ///   - routine: the LAPACK routine, for the message.
    ///   - positiveInfo: the code when `info > 0`.
    /// - Throws: `LocusError` E5101 (`lapackInternal`) when `info < 0`, `positiveInfo` when `info > 0`.
    @inline(__always)
    static func check(_ info: Int32, routine: StaticString,
                              positiveInfo: LocusErrorCode = .degenerateGeometry) throws(LocusError) {
        if info == 0 { return }
        if info < 0 {
            throw LocusError(.lapackInternal, "\(routine): argument \(-info) was illegal (a bug in Locus)")
        }
        throw LocusError(positiveInfo, "\(routine): matrix is singular or not positive definite (info \(info))")
    }

    /// Narrows a dimension to LAPACK's 32-bit integer.
    /// - Precondition: `value` fits in `Int32` (programmer error otherwise).
    @inline(__always)
    static func int32(_ value: Int) -> Int32 {
        guard let narrowed = Int32(exactly: value) else {
            preconditionFailure("dimension \(value) does not fit LAPACK's 32-bit integer")
        }
        return narrowed
    }
}
