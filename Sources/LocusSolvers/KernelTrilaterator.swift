import LocusCore
import LocusNumerics

/// The per-fix hot path: the fixed-size C kernel (`locus_trilaterate`): closed-form seed,
/// Gauss–Newton with closed-form 2×2/3×3 inverses, χ² gate and the penalised NLOS subset search,
/// on stack arrays. No heap allocation, no LAPACK call. At most `maximumLocators` locators.
package struct KernelTrilaterator: Trilaterating {
    /// Largest number of locators per call (64).
    package static let maximumLocators = TrilaterationKernel.maximumLocators

    /// The settings this solver uses.
    package var configuration: TrilaterationConfiguration

    /// A kernel solver with the given settings.
    package init(configuration: TrilaterationConfiguration = .standard) { self.configuration = configuration }

    /// Solves one fix; `workspace` is not used (the kernel needs none).
    /// Complexity O(n·steps) when the χ² gate passes; see `TrilaterationConfiguration.isRobust` otherwise.
    /// - Precondition: at most 64 locators, one range each.
    /// - Throws: E4001, E4002, E4003, E4004, E1003 (see `Trilaterating`).
    package func solve(locators: UnsafeBufferPointer<Point3>, rangesMeters: UnsafeBufferPointer<Double>,
                       workspace: inout TrilaterationWorkspace) throws(LocusError) -> TrilaterationSolution {
        let r = try TrilaterationKernel.solve(locators: locators, rangesMeters: rangesMeters,
                                              options: configuration.kernelOptions)
        return TrilaterationSolution(
            position: r.position, covariance: r.covariance, mode: TrilaterationMode(r.model), hdop: r.hdop,
            vdop: r.model == .spatial ? r.vdop : nil, pdop: r.pdop, residualRMSMeters: r.residualRMSMeters,
            chiSquare: r.chiSquare, degreesOfFreedom: r.degreesOfFreedom, rejectedMask: r.rejectedMask,
            rejectedCount: r.rejectedMask.nonzeroBitCount, locatorsUsed: r.locatorsUsed, iterations: r.iterations,
            isConverged: r.isConverged)
    }
}
