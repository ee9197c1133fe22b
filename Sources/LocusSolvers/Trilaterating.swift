import LocusCore

/// A trilateration solver: ranges to locators in, weighted least-squares position out.
///
/// Two conforming paths reach the same optimum (tests hold them to 1e-9 m):
/// `KernelTrilaterator` (fixed-size C kernel, ≤ 64 locators, the per-fix hot path) and
/// `LapackTrilaterator` (LAPACKE, any number of locators, rank-revealing). `Trilaterator` picks.
package protocol Trilaterating: Sendable {
    /// The settings this solver uses.
    var configuration: TrilaterationConfiguration { get }

    /// Solves one fix from `rangesMeters[i]` (bias-corrected) to `locators[i]`.
    /// With a reused `workspace` and caller-owned buffers a call allocates nothing.
    /// - Precondition: `locators.count == rangesMeters.count`.
    /// - Throws: E4001 too few ranges (3 planar, 4 spatial), E4002 collinear/coplanar/coincident
    ///   locators or PDOP above the limit, E4003 a negative or non-finite range, E4004 a non-finite
    ///   iterate, E1003 an invalid configuration or non-finite locator coordinate.
    func solve(locators: UnsafeBufferPointer<Point3>, rangesMeters: UnsafeBufferPointer<Double>,
               workspace: inout TrilaterationWorkspace) throws(LocusError) -> TrilaterationSolution
}

extension Trilaterating {
    /// Convenience overload over arrays (allocates a workspace when the LAPACKE path needs one).
    /// - Throws: as `solve(locators:rangesMeters:workspace:)`.
    package func solve(locators: [Point3], rangesMeters: [Double]) throws(LocusError) -> TrilaterationSolution {
        var workspace = TrilaterationWorkspace()
        return try solve(locators: locators, rangesMeters: rangesMeters, workspace: &workspace)
    }

    /// Array overload reusing `workspace`.
    /// - Throws: as `solve(locators:rangesMeters:workspace:)`.
    package func solve(locators: [Point3], rangesMeters: [Double],
                       workspace: inout TrilaterationWorkspace) throws(LocusError) -> TrilaterationSolution {
        precondition(locators.count == rangesMeters.count, "one range per locator")
        var outcome: Result<TrilaterationSolution, LocusError> = .failure(LocusError(.invalidArgument, "unreachable"))
        locators.withUnsafeBufferPointer { lp in
            rangesMeters.withUnsafeBufferPointer { rp in
                do throws(LocusError) {
                    outcome = .success(try solve(locators: lp, rangesMeters: rp, workspace: &workspace))
                } catch {
                    outcome = .failure(error)
                }
            }
        }
        return try outcome.get()
    }
}

/// Chooses the path per call: the C kernel for up to 64 locators, LAPACKE beyond.
package struct Trilaterator: Trilaterating {
    /// The settings this solver uses.
    package var configuration: TrilaterationConfiguration

    /// A solver with the given settings.
    package init(configuration: TrilaterationConfiguration = .standard) { self.configuration = configuration }

    /// Kernel path when `locators.count ≤ 64`, LAPACKE path otherwise.
    /// - Throws: as `Trilaterating.solve(locators:rangesMeters:workspace:)`.
    package func solve(locators: UnsafeBufferPointer<Point3>, rangesMeters: UnsafeBufferPointer<Double>,
                       workspace: inout TrilaterationWorkspace) throws(LocusError) -> TrilaterationSolution {
        if locators.count <= KernelTrilaterator.maximumLocators {
            return try KernelTrilaterator(configuration: configuration)
                .solve(locators: locators, rangesMeters: rangesMeters, workspace: &workspace)
        }
        return try LapackTrilaterator(configuration: configuration)
            .solve(locators: locators, rangesMeters: rangesMeters, workspace: &workspace)
    }
}
