import LocusCore
import LocusNumerics

/// The one trilateration search: the C kernel (`locus_trilaterate`): closed-form seed, Newton /
/// Gauss–Newton with closed-form 2×2/3×3 inverses, χ² gate and the penalised NLOS subset search.
/// Up to `maximumLocators` (64) locators its scratch is on the C stack and `workspace` is not used;
/// beyond, the same code runs in `workspace`'s scratch (33 n + 1 doubles, grown once and reused).
/// No heap allocation with a reused workspace, no LAPACK call, any number of locators.
struct KernelTrilaterator: Trilaterating {
    /// Largest number of locators solved without `workspace` (64: the C stack scratch).
    static let maximumLocators = TrilaterationKernel.maximumLocators

    /// The settings this solver uses.
    var configuration: TrilaterationConfiguration

    /// A kernel solver with the given settings.
    init(configuration: TrilaterationConfiguration = .standard) { self.configuration = configuration }

    /// Solves one fix. Complexity O(n·steps) when the χ² gate passes; see
    /// `TrilaterationConfiguration.isRobust` otherwise.
    /// - Throws: E4001, E4002, E4003, E4004, E1003 (see `Trilaterating`).
    func solve(locators: Span<Point3>, rangesMeters: Span<Double>,
                       workspace: inout TrilaterationWorkspace) throws(LocusError) -> TrilaterationSolution {
        let n = locators.count
        if n <= Self.maximumLocators {
            return try TrilaterationKernel.solve(locators: locators, rangesMeters: rangesMeters, options: configuration.kernelOptions)
        }
        precondition(rangesMeters.count == n, "one range per locator")
        workspace.reserve(n)
        return try Self.solve(locators: locators, rangesMeters: rangesMeters, options: configuration.kernelOptions,
                              scratch: &workspace.scratch, used: &workspace.used)
    }

    /// The kernel's solve in the workspace's buffers (taken as two inout arrays: a mutable span of
    /// each, at once, would overlap two accesses to the one workspace).
    @inline(__always)
    private static func solve(locators: Span<Point3>, rangesMeters: Span<Double>,
                              options: TrilaterationKernel.Options, scratch: inout [Double],
                              used: inout [UInt8]) throws(LocusError) -> TrilaterationSolution {
        var scratch = scratch.mutableSpan
        var used = used.mutableSpan
        return try TrilaterationKernel.solve(locators: locators, rangesMeters: rangesMeters, options: options,
                                             scratch: &scratch, used: &used)
    }
}
