extension TrackFilter {
    /// A state mean (px, py, vx, vy) (m, m/s) as four Doubles: stored as a `SIMD4<Double>`, it would
    /// align the whole filter to 16 bytes and round every tracked tag's filter up by 8 (memory per tag,
    /// docs/benchmarks.md).
    package struct Mean: Sendable, Equatable {
        /// Position, metres.
        package var px: Double, py: Double
        /// Velocity, m/s.
        var vx: Double, vy: Double
        /// The mean of a state vector.
        @inline(__always) init(_ x: SIMD4<Double>) { px = x[0]; py = x[1]; vx = x[2]; vy = x[3] }
        /// As a vector.
        @inline(__always) var vector: SIMD4<Double> { SIMD4(px, py, vx, vy) }
    }
}
