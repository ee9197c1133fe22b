import LocusCore
import LocusNumerics

/// A trilateration solver: ranges to locators in, weighted least-squares position out.
///
/// One search implements it: the C kernel (`KernelTrilaterator`, any number of locators, scratch on the
/// C stack up to 64 and in the workspace beyond); `Trilaterator` is the name the engine uses. The tests
/// hold it to a LAPACKE reference oracle (`LapackTrilaterator`, in the test target) to 1e-9 m.
public protocol Trilaterating: Sendable {
    /// The settings this solver uses.
    var configuration: TrilaterationConfiguration { get }

    /// Solves one fix from `rangesMeters[i]` (bias-corrected) to `locators[i]`.
    /// With a reused `workspace` a call allocates nothing; the spans are read in place.
    /// - Precondition: `locators.count == rangesMeters.count`.
    /// - Throws: E4001 too few ranges (3 planar, 4 spatial), E4002 collinear/coplanar/coincident
    ///   locators or PDOP above the limit, E4003 a negative or non-finite range, E4004 a non-finite
    ///   iterate, E1003 an invalid configuration or non-finite locator coordinate.
    func solve(locators: Span<Point3>, rangesMeters: Span<Double>,
               workspace: inout TrilaterationWorkspace) throws(LocusError) -> TrilaterationSolution
}

extension Trilaterating {
    /// Convenience overload over arrays (allocates a workspace when more than 64 locators need one).
    /// - Throws: as `solve(locators:rangesMeters:workspace:)`.
    public func solve(locators: [Point3], rangesMeters: [Double]) throws(LocusError) -> TrilaterationSolution {
        var workspace = TrilaterationWorkspace()
        return try solve(locators: locators, rangesMeters: rangesMeters, workspace: &workspace)
    }

    /// Array overload reusing `workspace`.
    /// - Throws: as `solve(locators:rangesMeters:workspace:)`.
    func solve(locators: [Point3], rangesMeters: [Double],
                       workspace: inout TrilaterationWorkspace) throws(LocusError) -> TrilaterationSolution {
        precondition(locators.count == rangesMeters.count, "one range per locator")
        return try solve(locators: locators.span, rangesMeters: rangesMeters.span, workspace: &workspace)
    }
}

/// The solver the engine and every caller use: the C kernel's search (`KernelTrilaterator`) for any
/// number of locators (scratch on the C stack up to 64, in the caller's `workspace` beyond).
public struct Trilaterator: Trilaterating {
    /// The settings this solver uses.
    public var configuration: TrilaterationConfiguration

    /// A solver with the given settings.
    public init(configuration: TrilaterationConfiguration = .standard) { self.configuration = configuration }

    /// The C search; `workspace` holds its scratch beyond 64 locators (grown once, then reused).
    /// - Throws: as `Trilaterating.solve(locators:rangesMeters:workspace:)`.
    public func solve(locators: Span<Point3>, rangesMeters: Span<Double>,
                       workspace: inout TrilaterationWorkspace) throws(LocusError) -> TrilaterationSolution {
        try KernelTrilaterator(configuration: configuration)
            .solve(locators: locators, rangesMeters: rangesMeters, workspace: &workspace)
    }
}
