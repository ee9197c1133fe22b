import LocusCore

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
    package var waypoints: [Point2]
    /// Integration step of the walk, seconds (the truth is interpolated linearly between steps).
    var stepSeconds: Double

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
    package static let standard = WalkConfiguration()
}
