import LocusCore
import LocusNumerics

/// Caller-owned scratch storage of the C search for more than 64 locators (up to 64 it runs on the
/// C stack and this is not touched): `TrilaterationKernel.scratchCount(locators:)` = 33 n + 1 doubles
/// (≈ 264 bytes a locator) and n flags. It grows to the largest problem seen and is then reused: with
/// a workspace kept across calls — one per solver owner, not one per fix — solving allocates nothing.
public struct TrilaterationWorkspace: Sendable {
    /// Locators the buffers are sized for.
    private(set) var capacity: Int = 0
    /// The C search's scratch (contents meaningless between calls).
    var scratch: [Double] = []
    /// Per input index after a solve of more than 64 locators: 1 = in the final fit, 0 = rejected.
    var used: [UInt8] = []

    /// Per input index after a solve of more than 64 locators: true while the range is in the fit
    /// (false = rejected). Up to 64 locators, `TrilaterationSolution.rejectedMask` says the same.
    var isActive: [Bool] { used.map { $0 != 0 } }

    /// An empty workspace (no storage until a solve of more than 64 locators needs it).
    public init() {}

    /// A workspace ready for up to `locators` locators.
    public init(capacity locators: Int) { reserve(locators) }

    /// Grows the buffers to hold `locators` locators (allocates only when growing).
    mutating func reserve(_ locators: Int) {
        guard locators > capacity else { return }
        scratch = [Double](repeating: 0, count: TrilaterationKernel.scratchCount(locators: locators))
        used = [UInt8](repeating: 1, count: locators)
        capacity = locators
    }
}
