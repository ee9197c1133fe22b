#if canImport(Glibc)
import Glibc
#endif
import LocusCore
import LocusSolvers

/// A seeded test scenario: locators, a true tag position, and the oracle bound.
struct TrilaterationScenario {
    var locators: [Point3]
    var truth: Point3
    var mode: TrilaterationMode
    var tagHeightMeters: Double

    /// Planar: 6–8 locators on a ring (or a box) at 2.5–3 m, tag at 1 m well inside the hull.
    static func planar(_ g: inout SeededGenerator, count: Int? = nil) -> TrilaterationScenario {
        let n = count ?? (6 + Int(g.next() % 3))
        let radius = g.uniform(4, 9)
        let cx = g.uniform(-20, 20), cy = g.uniform(-20, 20)
        var locators: [Point3] = []
        let box = g.nextUnit() < 0.5
        for i in 0..<n {
            let z = g.uniform(2.5, 3.0)
            if box {
                // Corners and edge points of a rectangle, perimeter order.
                let t = (Double(i) + g.uniform(-0.2, 0.2)) / Double(n) * 4
                let w = radius, h = radius * g.uniform(0.6, 1.0)
                let side = Int(t) % 4, f = t - Double(Int(t))
                let (x, y): (Double, Double)
                switch side {
                case 0: (x, y) = (-w + 2 * w * f, -h)
                case 1: (x, y) = (w, -h + 2 * h * f)
                case 2: (x, y) = (w - 2 * w * f, h)
                default: (x, y) = (-w, h - 2 * h * f)
                }
                locators.append(Point3(x: cx + x, y: cy + y, z: z))
            } else {
                let a = (Double(i) + g.uniform(-0.25, 0.25)) / Double(n) * 2 * Double.pi
                let r = radius * g.uniform(0.85, 1.0)
                locators.append(Point3(x: cx + r * cosine(a), y: cy + r * sine(a), z: z))
            }
        }
        let a = g.uniform(0, 2 * Double.pi), rho = radius * 0.5 * g.nextUnit().squareRoot()
        let truth = Point3(x: cx + rho * cosine(a), y: cy + rho * sine(a), z: 1.0)
        return TrilaterationScenario(locators: locators, truth: truth, mode: .planar, tagHeightMeters: 1.0)
    }

    /// Spatial: 6–8 locators with varied heights 0.3–3.5 m around the tag (inside their hull).
    static func spatial(_ g: inout SeededGenerator, count: Int? = nil) -> TrilaterationScenario {
        let n = count ?? (6 + Int(g.next() % 3))
        let radius = g.uniform(4, 8)
        let cx = g.uniform(-20, 20), cy = g.uniform(-20, 20)
        var locators: [Point3] = []
        for i in 0..<n {
            let a = (Double(i) + g.uniform(-0.25, 0.25)) / Double(n) * 2 * Double.pi
            let z = i % 2 == 0 ? g.uniform(2.6, 3.5) : g.uniform(0.2, 0.8)
            locators.append(Point3(x: cx + radius * cosine(a), y: cy + radius * sine(a), z: z))
        }
        let a = g.uniform(0, 2 * Double.pi), rho = radius * 0.4 * g.nextUnit().squareRoot()
        let truth = Point3(x: cx + rho * cosine(a), y: cy + rho * sine(a), z: g.uniform(1.2, 2.0))
        return TrilaterationScenario(locators: locators, truth: truth, mode: .spatial, tagHeightMeters: 1.0)
    }

    var exactRanges: [Double] { locators.map { $0.distance(to: truth) } }

    /// Oracle: CRB² = σ² · trace((HᵀH)⁻¹) at the truth, H rows (dx/r, dy/r[, dz/r]), computed here by
    /// cofactors, independently of the code under test.
    func cramerRaoSquared(sigmaMeters: Double) -> Double {
        var m = [[Double]](repeating: [0, 0, 0], count: 3)
        let p = mode == .planar ? 2 : 3
        for q in locators {
            let d = [truth.x - q.x, truth.y - q.y, truth.z - q.z]
            let r = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).squareRoot()
            for i in 0..<p { for j in 0..<p { m[i][j] += d[i] * d[j] / (r * r) } }
        }
        if p == 2 {
            let det = m[0][0] * m[1][1] - m[0][1] * m[0][1]
            return sigmaMeters * sigmaMeters * (m[0][0] + m[1][1]) / det
        }
        let c00 = m[1][1] * m[2][2] - m[1][2] * m[1][2]
        let c11 = m[0][0] * m[2][2] - m[0][2] * m[0][2]
        let c22 = m[0][0] * m[1][1] - m[0][1] * m[0][1]
        let det = m[0][0] * c00 - m[0][1] * (m[0][1] * m[2][2] - m[1][2] * m[0][2])
            + m[0][2] * (m[0][1] * m[1][2] - m[1][1] * m[0][2])
        return sigmaMeters * sigmaMeters * (c00 + c11 + c22) / det
    }

    func configuration(robust: Bool = true, sigmaMeters: Double = 0.1) -> TrilaterationConfiguration {
        TrilaterationConfiguration(mode: mode, tagHeightMeters: tagHeightMeters, sigmaMeters: sigmaMeters, isRobust: robust)
    }
}

/// Squared horizontal (planar) or 3-D (spatial) error.
func squaredError(_ a: Point3, _ b: Point3, mode: TrilaterationMode) -> Double {
    let dx = a.x - b.x, dy = a.y - b.y, dz = mode == .planar ? 0 : a.z - b.z
    return dx * dx + dy * dy + dz * dz
}

func sine(_ x: Double) -> Double { sin(x) }
func cosine(_ x: Double) -> Double { cos(x) }
