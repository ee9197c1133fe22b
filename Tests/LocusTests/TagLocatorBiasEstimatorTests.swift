import Foundation
@testable import Locus
@testable import LocusCore
@testable import LocusSolvers
import Testing

/// `TagLocatorBiasEstimator` alone: fed epochs solved as the engine solves them (the offset
/// estimator's (x, y, b) solve), it learns per-locator biases up to their common part, applies them
/// only once observable and consistent, and stays out of the way where they are not observable.
@Suite("Tag locator bias estimator")
struct TagLocatorBiasEstimatorTests {
    /// Eight locators around a 7 × 6 m room at 1.05 m; the tag at 0.96 m.
    static let room: [Point3] = [(-3.4, 3), (0, 3), (3.6, 3), (3.6, 0), (3.6, -3), (0, -3), (-3.5, -3), (-3.5, 0)]
        .map { Point3(x: $0.0, y: $0.1, z: 1.05) }
    static let height = 0.96

    /// A deterministic uniform in [0, 1) (SplitMix64).
    struct Noise {
        var state: UInt64
        mutating func uniform() -> Double {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Double((z ^ (z >> 31)) >> 11) / Double(1 << 53)
        }
        /// A standard normal (Box–Muller).
        mutating func normal() -> Double {
            let u = max(uniform(), 1e-300), v = uniform()
            return (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
        }
    }

    /// Feeds `epochs` epochs at 4 Hz of a tag circling the room (radius 2 m, one turn in 40 s; or at
    /// (1, 0.5) when `still`) with ranges ‖p − aᵢ‖ + offset + biases[i] + σ·n (σ = 0.05 m) to
    /// `locators`, each epoch corrected by the estimator's current corrections and solved by the
    /// offset estimator's epoch solve, as the engine does.
    static func run(_ estimator: inout TagLocatorBiasEstimator, locators: [Point3], biases: [Double], epochs: Int,
                    still: Bool = false, seed: UInt64 = 1) {
        var noise = Noise(state: seed)
        let n = locators.count
        var ranges = [Double](repeating: 0, count: n)
        let slots = (0..<n).map { Int32($0) }
        for k in 0..<epochs {
            let angle = 2 * Double.pi * Double(k) / 160
            let p = still ? Point2(x: 1, y: 0.5) : Point2(x: 2 * cos(angle), y: 2 * sin(angle))
            for i in 0..<n {
                let a = locators[i]
                let d = ((p.x - a.x) * (p.x - a.x) + (p.y - a.y) * (p.y - a.y) + (height - a.z) * (height - a.z)).squareRoot()
                ranges[i] = d + 0.2 + biases[i] + 0.05 * noise.normal() - estimator.correctionMeters(slot: i)
            }
            locators.withUnsafeBufferPointer { lp in
                ranges.withUnsafeBufferPointer { rp in
                    slots.withUnsafeBufferPointer { sp in
                        guard let epoch = TagRangeOffsetEstimator.solveEpoch(locators: lp, rangesMeters: rp, tagHeightMeters: height,
                                                                             seed: p, lastPosition: nil, configuration: .standard)
                        else { return }
                        _ = estimator.update(locators: lp.span, rangesMeters: rp.span, slots: sp.span, position: epoch.solution.position,
                                             offsetMeters: epoch.solution.offsetMeters, droppedMask: epoch.droppedMask,
                                             tagHeightMeters: height)
                    }
                }
            }
        }
    }

    static let biases = [-0.02, -0.09, -0.07, -0.07, 0.03, 0.03, 0.08, 0.11]

    @Test("A tag moving around 8 locators: every locator's bias learnt to 1.5 cm (up to the common part), applied")
    func learnsMovingTag() {
        var estimator = TagLocatorBiasEstimator(locatorCount: 8)
        Self.run(&estimator, locators: Self.room, biases: Self.biases, epochs: 800)
        #expect(estimator.isTrusted)
        let mean = estimator.estimatesMeters.reduce(0, +) / 8, truthMean = Self.biases.reduce(0, +) / 8
        for i in 0..<8 {
            let error = (estimator.estimatesMeters[i] - mean) - (Self.biases[i] - truthMean)
            #expect(abs(error) <= 0.015, "locator \(i): β̂ \(estimator.estimatesMeters[i]), truth \(Self.biases[i])")
        }
        // The applied corrections are the estimates where they are significant, 0 elsewhere.
        let applied = (0..<8).filter { estimator.correctionMeters(slot: $0) != 0 }.count
        #expect(applied >= 6)
    }

    @Test("Nothing is applied before the warm-up (128 epochs)")
    func warmUp() {
        var estimator = TagLocatorBiasEstimator(locatorCount: 8)
        Self.run(&estimator, locators: Self.room, biases: Self.biases, epochs: 120)
        #expect((0..<8).allSatisfy { estimator.correctionMeters(slot: $0) == 0 })
    }

    @Test("Four or five locators (fewer than 3 redundant ranges): nothing learnt, nothing applied")
    func fourLocators() {
        for count in [4, 5] {
            var estimator = TagLocatorBiasEstimator(locatorCount: count)
            let locators = Array(Self.room.prefix(count))
            Self.run(&estimator, locators: locators, biases: Array(Self.biases.prefix(count)), epochs: 400)
            #expect(estimator.estimatesMeters.allSatisfy { $0 == 0 })
            #expect(!estimator.isTrusted)
        }
    }

    @Test("No biases: the corrections stay within 1.5 cm")
    func noBiases() {
        var estimator = TagLocatorBiasEstimator(locatorCount: 8)
        Self.run(&estimator, locators: Self.room, biases: [Double](repeating: 0, count: 8), epochs: 800, seed: 7)
        for i in 0..<8 { #expect(abs(estimator.correctionMeters(slot: i)) <= 0.015, "locator \(i)") }
    }
}
