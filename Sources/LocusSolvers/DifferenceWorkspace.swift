/// Caller-owned scratch storage of `DifferenceSolver`: per pair the search's linearisation row (4
/// doubles: the gradient and the residual) and a residual, per locator a flag, a stamp, a reading score and three
/// index lists, plus the search's 128 candidate slots. It grows to the largest problem seen and is
/// then reused: with a workspace kept across calls — one per solver owner, not one per fix — solving
/// allocates nothing.
package struct DifferenceWorkspace: Sendable {
    /// Locators the buffers are sized for.
    private(set) var locatorCapacity: Int = 0
    /// Pairs the buffers are sized for.
    private(set) var pairCapacity: Int = 0
    /// Doubles: 5 per pair (rows, residuals), 1 per locator (scores), 4 per candidate slot, 24 for the seed.
    var scratch: [Double] = []
    /// Int32s: 6 per locator (left-out flags, stamps, the eligible list, the level set, the best
    /// set, the candidate set), 4 per candidate slot (a candidate's picks) and 4 (a combination).
    var marks: [Int32] = []

    /// Candidate slots of an exhaustive level of the rejection search (C(n, k) ≤ 128 is exhaustive).
    static let candidateSlots = 128
    /// Doubles of the seed's normal equations (4×4 and the right-hand side, with room).
    static let seedDoubles = 24

    /// An empty workspace (storage comes with the first solve).
    package init() {}

    /// A workspace ready for `locators` locators and `pairs` pairs.
    init(locators: Int, pairs: Int) { reserve(locators: locators, pairs: pairs) }

    /// Grows the buffers to hold `locators` locators and `pairs` pairs (allocates only when growing).
    mutating func reserve(locators: Int, pairs: Int) {
        guard locators > locatorCapacity || pairs > pairCapacity else { return }
        locatorCapacity = max(locators, locatorCapacity)
        pairCapacity = max(pairs, pairCapacity)
        scratch = [Double](repeating: 0, count: Self.doubleCount(locators: locatorCapacity, pairs: pairCapacity))
        marks = [Int32](repeating: 0, count: Self.markCount(locators: locatorCapacity))
    }

    /// Doubles the solver needs for n locators and P pairs: 5 P + n + 4 · 64 + 24.
    static func doubleCount(locators n: Int, pairs: Int) -> Int {
        5 * pairs + n + 4 * candidateSlots + seedDoubles
    }

    /// Int32s the solver needs for n locators: 6 n + 4 · 128 + 4.
    static func markCount(locators n: Int) -> Int { 6 * n + 4 * candidateSlots + 4 }
}
