import LocusCore
#if canImport(Glibc)
import Glibc
#endif

/// Parameters of the seeded walking model (see `WalkTrajectory.generate`).
///
/// A walker heads for a waypoint with a bounded turn rate ω (rad/s) and a bounded acceleration
/// a (m/s²) towards a leg speed v drawn from U(v_min, v_max); at a waypoint it stops with
/// probability p_stop for a duration U(s_min, s_max) seconds.
package struct WalkConfiguration: Sendable, Hashable {
    /// Leg speeds are drawn uniformly from this interval, m/s.
    var speedMetersPerSecond: ClosedRange<Double>
    /// Largest speed change per second, m/s².
    var accelerationMetersPerSecondSquared: Double
    /// Largest heading change per second, rad/s.
    var turnRateRadiansPerSecond: Double
    /// Probability of a stop at each reached waypoint.
    var stopProbability: Double
    /// Stop durations are drawn uniformly from this interval, seconds.
    var stopSeconds: ClosedRange<Double>
    /// Waypoints are kept this far inside the floor rectangle, metres.
    var marginMeters: Double
    /// Waypoints to walk through (visited in a seeded random order); empty means random points
    /// in the floor rectangle.
    var waypoints: [Point2]
    /// Integration step of the walk, seconds (the truth is interpolated linearly between steps).
    var stepSeconds: Double
    /// A flight instead of a walk at the floor's tag height (`locus simulate --altitude`): nil keeps
    /// z at the floor's `tagHeightMeters`.
    var vertical: VerticalProfile? = nil

    /// Creates a configuration; every argument defaults to the value of `standard`.
    init(speedMetersPerSecond: ClosedRange<Double> = 0.8...1.5,
                 accelerationMetersPerSecondSquared: Double = 0.8,
                 turnRateRadiansPerSecond: Double = 1.5,
                 stopProbability: Double = 0.3,
                 stopSeconds: ClosedRange<Double> = 2...5,
                 marginMeters: Double = 1.0,
                 waypoints: [Point2] = [],
                 stepSeconds: Double = 0.01) {
        self.speedMetersPerSecond = speedMetersPerSecond
        self.accelerationMetersPerSecondSquared = accelerationMetersPerSecondSquared
        self.turnRateRadiansPerSecond = turnRateRadiansPerSecond
        self.stopProbability = stopProbability
        self.stopSeconds = stopSeconds
        self.marginMeters = marginMeters
        self.waypoints = waypoints
        self.stepSeconds = stepSeconds
    }

    /// Walking at 0.8–1.5 m/s, 0.8 m/s², 1.5 rad/s, stops of 2–5 s at 30 % of waypoints, 1 m margin,
    /// 10 ms integration step.
    static let standard = WalkConfiguration()
}

/// The height of a simulated tag that flies (`locus simulate --altitude LO:HI`): the horizontal walk
/// (`WalkTrajectory`) with a smooth climb and descent between `lowMeters` and `highMeters`,
///
///   z(t) = lo + (hi − lo) · (1 − cos(2π (t + j·T/φ) / T)) / 2,
///
/// T = `periodSeconds`, j the tag's index (0-based), φ the golden ratio (tags out of phase). Vertical
/// speed up to π (hi − lo) / T m/s, acceleration up to 2π² (hi − lo) / T² m/s². No random draw: the
/// walks and the range streams stay those of the same seed without the option.
struct VerticalProfile: Sendable, Hashable {
    /// Lowest and highest heights, metres (lo ≤ hi).
    var lowMeters: Double
    var highMeters: Double
    /// One climb and descent, seconds (> 0).
    var periodSeconds: Double

    init(lowMeters: Double, highMeters: Double, periodSeconds: Double) {
        self.lowMeters = lowMeters
        self.highMeters = highMeters
        self.periodSeconds = periodSeconds
    }

    /// z(t) of tag j (above), metres.
    func height(atSeconds t: Double, tagIndex j: Int) -> Double {
        let phase = Double(j) * periodSeconds / 1.618_033_988_749_895
        let u = (1 - cos(2 * Double.pi * (t + phase) / periodSeconds)) / 2
        return lowMeters + (highMeters - lowMeters) * u
    }
}
