import LocusCore
@testable import LocusNumerics

/// Caller-owned scratch storage for the LAPACKE oracle `LapackTrilaterator`. Buffers grow
/// to the largest problem seen and are then reused: with a workspace kept across calls, solving
/// allocates nothing.
package struct LapackOracleWorkspace: Sendable {
    /// Locators the buffers are sized for.
    package private(set) var capacity: Int = 0
    var centred: [Point3] = []
    var sqrtWeights: [Double] = []
    var predicted: [Double] = []
    var jacobian: [Double] = []
    var a: [Double] = []
    var b: [Double] = []
    var s: [Double] = []
    var normal: [Double] = []
    var hessian: [Double] = []
    var gradient: [Double] = []
    var pivots: [Int32] = []
    var work: [Double] = []
    var eligible: [Int] = []
    var candidate: [Int] = []
    var levelExcluded: [Int] = []
    var bestExcluded: [Int] = []
    var levelCount = 0
    var bestCount = 0
    /// The screened candidates of one level of the rejection search (at most `screenSlots`).
    var screened: [ScreenedCandidate] = []

    /// One screened candidate set: the ranges it adds to the level's base set, the lower bound on
    /// its χ² and the start of its fit (the level's point plus the linearised step).
    struct ScreenedCandidate: Sendable {
        var picks: (Int, Int, Int) = (0, 0, 0)
        var bound = 0.0
        var start = Point3(x: 0, y: 0, z: 0)
        var isTaken = false
    }

    /// Candidates per level: every k-subset of an exhaustive level (C(n, k) ≤ 64) or the greedy
    /// level's few extensions.
    static let screenSlots = 64
    /// Per input index: true while the range is in the fit (after a solve: false = rejected).
    package internal(set) var isActive: [Bool] = []

    /// An empty workspace (no storage until the LAPACKE path needs it).
    package init() {}

    /// A workspace ready for up to `locators` locators.
    package init(capacity locators: Int) { reserve(locators) }

    /// Grows the buffers to hold `locators` locators (allocates only when growing).
    package mutating func reserve(_ locators: Int) {
        guard locators > capacity else { return }
        let n = locators
        centred = [Point3](repeating: Point3(x: 0, y: 0, z: 0), count: n)
        sqrtWeights = [Double](repeating: 0, count: n)
        predicted = [Double](repeating: 0, count: n)
        jacobian = [Double](repeating: 0, count: 3 * n)
        a = [Double](repeating: 0, count: 3 * n)
        b = [Double](repeating: 0, count: max(3, n))
        s = [Double](repeating: 0, count: n)
        normal = [Double](repeating: 0, count: 9)
        hessian = [Double](repeating: 0, count: 9)
        gradient = [Double](repeating: 0, count: 3)
        pivots = [Int32](repeating: 0, count: 3)
        work = [Double](repeating: 0, count: LapackLinearAlgebra.leastSquaresWorkspaceCount(rows: n, columns: 3))
        isActive = [Bool](repeating: true, count: n)
        eligible = [Int](repeating: 0, count: n)
        candidate = [Int](repeating: 0, count: n)
        levelExcluded = [Int](repeating: 0, count: n)
        bestExcluded = [Int](repeating: 0, count: n)
        if screened.isEmpty { screened = [ScreenedCandidate](repeating: ScreenedCandidate(), count: Self.screenSlots) }
        capacity = n
    }
}
