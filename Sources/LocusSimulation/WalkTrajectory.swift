#if canImport(Glibc)
import Glibc
#endif
import LocusCore

/// One tag's seeded walk in a floor's plane: positions sampled every `stepSeconds`, interpolated
/// linearly in between.
///
/// Model (integrated with step Δt): heading ψ turns towards the waypoint bearing β by at most
/// ω·Δt; speed v moves towards the target v* by at most a·Δt, where v* is the leg speed, capped by
/// √(2·a·d) when the walker is to stop at a waypoint d metres ahead, and halved while |β − ψ| > 60°;
/// p ← p + v·(cos ψ, sin ψ)·Δt. A waypoint is reached within 0.4 m (0.05 m, or v = 0, for a stop).
struct WalkTrajectory: Sendable {
    /// Time of the first sample, seconds.
    let startSeconds: Double
    /// Sample spacing, seconds.
    let stepSeconds: Double
    /// Sampled x, metres.
    let xs: [Double]
    /// Sampled y, metres.
    let ys: [Double]

    /// The last sampled time, seconds.
    var endSeconds: Double { startSeconds + Double(max(0, xs.count - 1)) * stepSeconds }

    /// Position at time t (clamped to the sampled span), linear interpolation, metres.
    func position(atSeconds t: Double) -> Point2 {
        let (i, f) = index(t)
        return Point2(x: xs[i] + (xs[i + 1] - xs[i]) * f, y: ys[i] + (ys[i + 1] - ys[i]) * f)
    }

    /// Velocity at time t (finite difference of the bracketing samples), m/s.
    func velocity(atSeconds t: Double) -> Vector3 {
        let (i, _) = index(t)
        return Vector3(x: (xs[i + 1] - xs[i]) / stepSeconds, y: (ys[i + 1] - ys[i]) / stepSeconds, z: 0)
    }

    private func index(_ t: Double) -> (Int, Double) {
        let u = max(0, (t - startSeconds) / stepSeconds)
        let i = min(xs.count - 2, Int(u))
        return (i, min(1, u - Double(i)))
    }

    /// Generates a walk of `durationSeconds` starting at `startSeconds` inside `floor`'s rectangle.
    ///
    /// Deterministic for a given generator state. Complexity O(duration/Δt).
    /// - Precondition: the floor rectangle is larger than twice the margin, duration > 0.
    static func generate(on floor: Floor, startSeconds: Double, durationSeconds: Double,
                                 configuration c: WalkConfiguration,
                                 using rng: inout SeededGenerator) -> WalkTrajectory {
        let x0 = floor.originX + c.marginMeters, x1 = floor.originX + floor.widthMeters - c.marginMeters
        let y0 = floor.originY + c.marginMeters, y1 = floor.originY + floor.heightMeters - c.marginMeters
        precondition(x1 > x0 && y1 > y0, "WalkTrajectory: floor rectangle smaller than the margins")
        precondition(durationSeconds > 0 && c.stepSeconds > 0, "WalkTrajectory: duration and step must be positive")
        func nextWaypoint(_ rng: inout SeededGenerator) -> (Double, Double) {
            if !c.waypoints.isEmpty {
                let k = Int(rng.next() % UInt64(c.waypoints.count))
                return (c.waypoints[k].x, c.waypoints[k].y)
            }
            return (rng.uniform(x0, x1), rng.uniform(y0, y1))
        }
        func legSpeed(_ rng: inout SeededGenerator) -> Double {
            rng.uniform(c.speedMetersPerSecond.lowerBound, c.speedMetersPerSecond.upperBound)
        }
        let n = Int((durationSeconds / c.stepSeconds).rounded(.up)) + 1
        var xs = [Double](), ys = [Double]()
        xs.reserveCapacity(n); ys.reserveCapacity(n)
        var (px, py) = nextWaypoint(&rng)
        var (wx, wy) = nextWaypoint(&rng)
        var heading = atan2(wy - py, wx - px)
        var speed = 0.0
        var target = legSpeed(&rng)
        var stopHere = rng.nextUnit() < c.stopProbability
        var waitSeconds = 0.0
        var legSeconds = 0.0
        let dt = c.stepSeconds
        for _ in 0..<n {
            xs.append(px); ys.append(py)
            if waitSeconds > 0 { waitSeconds -= dt; continue }
            let dx = wx - px, dy = wy - py
            let d = (dx * dx + dy * dy).squareRoot()
            legSeconds += dt
            let reached = stopHere ? (d < 0.05 || (speed <= 1e-9 && d < 0.3)) : d < 0.4
            if reached || legSeconds > 120 {
                if stopHere && reached {
                    speed = 0
                    waitSeconds = rng.uniform(c.stopSeconds.lowerBound, c.stopSeconds.upperBound)
                }
                (wx, wy) = nextWaypoint(&rng)
                target = legSpeed(&rng)
                stopHere = rng.nextUnit() < c.stopProbability
                legSeconds = 0
                continue
            }
            var error = atan2(dy, dx) - heading
            while error > Double.pi { error -= 2 * Double.pi }
            while error < -Double.pi { error += 2 * Double.pi }
            let maxTurn = c.turnRateRadiansPerSecond * dt
            heading += min(maxTurn, max(-maxTurn, error))
            var wanted = target
            if stopHere { wanted = min(wanted, (2 * c.accelerationMetersPerSecondSquared * d).squareRoot()) }
            if abs(error) > Double.pi / 3 { wanted *= 0.5 }
            let maxDv = c.accelerationMetersPerSecondSquared * dt
            speed += min(maxDv, max(-maxDv, wanted - speed))
            px += speed * cos(heading) * dt
            py += speed * sin(heading) * dt
        }
        return WalkTrajectory(startSeconds: startSeconds, stepSeconds: dt, xs: xs, ys: ys)
    }
}
