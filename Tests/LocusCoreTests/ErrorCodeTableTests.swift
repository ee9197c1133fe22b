import Foundation
@testable import LocusCore
import LocusTestSupport
import Testing

@Suite("Error code table")
struct ErrorCodeTableTests {
    /// The published codes. Appending is fine; changing or removing a line is a breaking change.
    static let published: [(String, String)] = [
        ("E1001", "usage"), ("E1002", "callOrder"), ("E1003", "invalidArgument"),
        ("E3001", "noFloorMap"), ("E3002", "unknownFloor"), ("E3101", "siteMissingField"), ("E3102", "siteWrongType"),
        ("E3103", "siteDuplicateID"), ("E3104", "siteDuplicateAddress"), ("E3105", "siteNonFiniteNumber"),
        ("E3106", "siteNegativeValue"), ("E3107", "siteNoFloor"), ("E3108", "polygonTooFewVertices"),
        ("E3109", "polygonSelfIntersecting"), ("E3110", "polygonZeroArea"), ("E3111", "invalidLocatorAddress"),
        ("E3112", "siteValueOutOfRange"),
        ("E4001", "tooFewRanges"), ("E4002", "degenerateGeometry"), ("E4003", "invalidRange"), ("E4004", "solverDiverged"),
        ("E4005", "filterDivergence"),
        ("E5001", "fileUnreadable"), ("E5002", "malformedJSON"), ("E5003", "csvMissingColumn"), ("E5004", "malformedCSV"),
        ("E5005", "fileUnwritable"), ("E5006", "undeliveredPositions"), ("E5101", "lapackInternal"),
        ("E3003", "floorHasNoZones"), ("E5007", "deliveryFailed"),
        ("E5008", "networkUnavailable"),
    ]

    @Test("published codes keep their meaning")
    func pinned() {
        for (code, name) in Self.published {
            let c = LocusErrorCode(rawValue: code)
            #expect(c != nil, "code \(code) disappeared")
            #expect(c.map { "\($0)" } == name, "code \(code) changed meaning")
        }
        #expect(Set(LocusErrorCode.allCases.map(\.rawValue)).count == LocusErrorCode.allCases.count)
    }

    @Test("docs/errors.md lists every code with its name")
    func documented() throws {
        let doc = try String(contentsOfFile: TestPaths.repositoryRoot.appendingPathComponent("docs/errors.md").path, encoding: .utf8)
        for c in LocusErrorCode.allCases {
            #expect(doc.contains("| \(c.rawValue) | `\(c)` |"), "docs/errors.md lacks \(c.rawValue)")
        }
    }

    @Test("the run-time failures (exit 1) are the codes docs/errors.md lists for exit 1; every other code exits 2")
    func runTimeFailures() throws {
        let doc = try String(contentsOfFile: TestPaths.repositoryRoot.appendingPathComponent("docs/errors.md").path, encoding: .utf8)
        let sentence = try #require(doc.range(of: "1 for failures at run time (").map { doc[$0.upperBound...] })
        let listed = Set(sentence.prefix { $0 != ")" }.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        let failing = Set(LocusErrorCode.allCases.filter(\.isRunTimeFailure).map(\.rawValue))
        #expect(failing == listed)
    }

    @Test("an error prints file, line, column, JSON path, message and code")
    func description() {
        let e = LocusError(.siteDuplicateAddress, "duplicate address 0x9DD7",
                           context: .init(file: "site.json", line: 12, column: 20, jsonPath: "floors[0].locators[2].address"))
        #expect(e.description == "site.json:12:20: floors[0].locators[2].address: duplicate address 0x9DD7 [E3104]")
        #expect(LocusError(.usage, "x").description == "x [E1001]")
    }
}

@Suite("Core values")
struct CoreValueTests {
    @Test("the 95 % horizontal radius is 2.4477σ for a circle and 1.96σ for a line")
    func radius95() {
        let circle = SymmetricMatrix3(xx: 0.01, yy: 0.01, zz: 0)
        #expect(abs(HorizontalAccuracy.radius95(circle) - 0.1 * (-2 * log(0.05)).squareRoot()) < 1e-5)
        let line = SymmetricMatrix3(xx: 0.04, yy: 0, zz: 0)
        #expect(abs(HorizontalAccuracy.radius95(line) - 0.2 * 1.959963984540054) < 1e-6)
        #expect(HorizontalAccuracy.radius95(.zero) == 0)
    }

    @Test("the written-out 95 % radius table is the computation's, bit for bit")
    func radius95Table() {
        #expect(HorizontalAccuracy.table.count == 129)
        for k in 0...128 {
            let computed = HorizontalAccuracy.radius95Unit(rho: Double(k) / 128)
            #expect(HorizontalAccuracy.table[k].bitPattern == computed.bitPattern, "entry \(k): \(HorizontalAccuracy.table[k]) vs \(computed)")
        }
    }

    @Test("every 95 % radius in the table holds 95 % by an independent quadrature; the table grows from 1.96 to 2.4477")
    func radius95Independent() {
        let table = HorizontalAccuracy.table
        for k in 1...128 { #expect(table[k] >= table[k - 1], "entry \(k)") }
        // With λ₁ = 1, λ₂ = ρ²: P(z₁² + ρ²z₂² ≤ r²) = ∫ φ(z₁) erf(√(r² − z₁²) / (ρ√2)) dz₁ over |z₁| ≤ r, and with
        // z₁ = r sin a, = ∫_{−π/2}^{π/2} φ(r sin a) r cos a erf(r cos a / (ρ√2)) da — Cartesian, not the table's
        // polar integral; the midpoint rule on 20,000 points. (The 256-point polar rule once gave 1.9 for
        // ρ = 1/128: 94.3 %.)
        for k in [1, 2, 3, 4, 5, 8, 16, 32, 64, 100, 128] {
            let rho = Double(k) / 128, r = table[k]
            let n = 20_000
            var p = 0.0
            for j in 0..<n {
                let a = -Double.pi / 2 + (Double(j) + 0.5) * Double.pi / Double(n)
                p += exp(-0.5 * r * r * sin(a) * sin(a)) * r * cos(a) * erf(r * cos(a) / (rho * 2.0.squareRoot()))
            }
            p *= Double.pi / Double(n) / (2 * Double.pi).squareRoot()
            #expect(abs(p - 0.95) < 1e-9, "entry \(k): \(p)")
        }
    }

    @Test("the 95 % radius holds 95 % of Gaussian samples for an elongated, rotated covariance")
    func radius95MonteCarlo() {
        var rng = SeededGenerator(seed: 3)
        // Covariance of (a·u, b·v) rotated by 30°.
        let a = 0.3, b = 0.1, th = Double.pi / 6
        let c = cos(th), s = sin(th)
        let cov = SymmetricMatrix3(xx: a * a * c * c + b * b * s * s, xy: (a * a - b * b) * c * s,
                                   yy: a * a * s * s + b * b * c * c, zz: 0)
        let r = HorizontalAccuracy.radius95(cov)
        var inside = 0
        let n = 200_000
        for _ in 0..<n {
            let u = a * rng.nextGaussian(), v = b * rng.nextGaussian()
            let x = c * u - s * v, y = s * u + c * v
            if (x * x + y * y).squareRoot() <= r { inside += 1 }
        }
        #expect(abs(Double(inside) / Double(n) - 0.95) < 0.002)
    }

    @Test("addresses parse in all three forms and print as 0x hex")
    func addresses() {
        #expect(LocatorAddress(parsing: "0x9dd7") == LocatorAddress(40407))
        #expect(LocatorAddress(parsing: "40407") == LocatorAddress(0x9DD7))
        #expect(LocatorAddress(parsing: "70000") == nil)
        #expect(LocatorAddress(7).description == "0x0007")
    }

    @Test("the locator list keeps eight addresses inline and counts the rest")
    func locatorList() {
        var list = LocatorList()
        for k in 0..<10 { list.append(LocatorAddress(UInt16(k))) }
        #expect(list.count == 8 && list.overflowCount == 2 && list.totalCount == 10)
        #expect(Array(list).map(\.rawValue) == Array(0..<8))
    }

    @Test("zone events order by time, then exit < enter < dwell, then tag, then zone")
    func eventOrder() {
        let e = { (t: Double, k: ZoneEvent.Kind, tag: TagID, z: ZoneID) in ZoneEvent(timeSeconds: t, tag: tag, floor: "F", zone: z, kind: k) }
        let events = [e(2, .enter, "A", "z"), e(1, .dwell, "A", "z"), e(1, .enter, "B", "a"), e(1, .enter, "A", "b"),
                      e(1, .exit, "C", "z"), e(1, .enter, "A", "a")]
        let sorted = events.sorted(by: ZoneEvent.precedes)
        #expect(sorted.map { "\($0.timeSeconds) \($0.kind) \($0.tag) \($0.zone)" } ==
                ["1.0 exit C z", "1.0 enter A a", "1.0 enter A b", "1.0 enter B a", "1.0 dwell A z", "2.0 enter A z"])
    }

    @Test("the seeded generator repeats its sequence for a seed")
    func seeded() {
        var a = SeededGenerator(seed: 42), b = SeededGenerator(seed: 42)
        #expect((0..<10).map { _ in a.next() } == (0..<10).map { _ in b.next() })
    }
}

@Suite("English counts in messages")
struct PluralTests {
    @Test("plural takes the singular for exactly 1, the plural otherwise, with an irregular form when given")
    func forms() {
        #expect(plural(1, "zone") == "1 zone")
        #expect(plural(0, "zone") == "0 zones")
        #expect(plural(2, "range row") == "2 range rows")
        #expect(plural(1, "fix", "fixes") == "1 fix")
        #expect(plural(3, "fix", "fixes") == "3 fixes")
    }

    @Test("a polygon with one distinct vertex says so in the singular")
    func polygonMessage() {
        #expect(PolygonProblem.tooFewVertices(distinct: 1).message == "polygon has 1 distinct vertex, needs at least 3")
        #expect(PolygonProblem.tooFewVertices(distinct: 2).message == "polygon has 2 distinct vertices, needs at least 3")
    }
}
