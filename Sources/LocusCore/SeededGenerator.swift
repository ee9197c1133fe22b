#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small, fast, seeded random number generator (xoshiro256**, seeded through SplitMix64).
/// Same seed, same sequence, on every platform: used by simulation, tests and benchmarks.
/// (`@usableFromInline` with inlinable draws: the simulator in another module draws per range.)
@usableFromInline package struct SeededGenerator: RandomNumberGenerator, Sendable {
    @usableFromInline var s0: UInt64, s1: UInt64, s2: UInt64, s3: UInt64

    /// The generator whose state is four SplitMix64 outputs from `seed`.
    package init(seed: UInt64) {
        var x = seed
        func splitMix() -> UInt64 {
            x &+= 0x9E37_79B9_7F4A_7C15
            var z = x
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        s0 = splitMix(); s1 = splitMix(); s2 = splitMix(); s3 = splitMix()
    }

    /// The next 64 random bits (xoshiro256**).
    @inlinable package mutating func next() -> UInt64 {
        let result = rotl(s1 &* 5, 7) &* 9
        let t = s1 << 17
        s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3
        s2 ^= t
        s3 = rotl(s3, 45)
        return result
    }

    /// x rotated left by k bits.
    @usableFromInline func rotl(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }

    /// Uniform in [0, 1) with 53 random bits.
    @inlinable package mutating func nextUnit() -> Double { Double(next() >> 11) * 0x1p-53 }

    /// Uniform in [a, b).
    @inlinable package mutating func uniform(_ a: Double, _ b: Double) -> Double { a + (b - a) * nextUnit() }

    /// Standard normal N(0, 1) by the Box–Muller transform (one value per call; deterministic).
    package mutating func nextGaussian() -> Double {
        var u = nextUnit()
        if u < 1e-300 { u = 1e-300 }
        let v = nextUnit()
        return (-2 * log(u)).squareRoot() * cos(2 * Double.pi * v)
    }
}
