// SolverExample: the solver without an engine, from Swift — one epoch's fix, a layout's DOP and a floor's
// geometry report: the same search and figures as `locus_solve`, `locus_dop` and `locus_geometry` of the C ABI.
//
//   swift run SolverExample
//
// Eight locators around a 20 m × 12 m hall at 2.5 m, a tag at 1.1 m: ranges with 5 cm of error and
// one locator read 1.6 m long (no line of sight). Prints the fix, which range the robust search
// rejected, a coarse HDOP map of the layout and the floor's geometry report. Exits 0; 1 if a solve fails.
import Glibc
import Locus

let hall: [Point3] = [(0, 0), (20, 0), (20, 12), (0, 12), (10, 0), (20, 6), (10, 12), (0, 6)]
    .map { Point3(x: $0.0, y: $0.1, z: 2.5) }
let tag = Point3(x: 6.4, y: 8.2, z: 1.1)
let errors = [0.03, -0.05, 0.04, 0.01, -0.02, 1.6, 0.05, -0.04]  // metres; locator 5 is behind a wall
let ranges = zip(hall, errors).map { $0.distance(to: tag) + $1 }

func text(_ value: Double, _ decimals: Int = 3) -> String {
    let scale = [1.0, 10, 100, 1000][decimals]
    return "\((value * scale).rounded() / scale)"
}

// A planar solve: the tag's height is known, x and y are fitted. Keep the solver and the workspace
// across epochs and a solve allocates nothing.
let solver = Trilaterator(configuration: TrilaterationConfiguration(mode: .planar, tagHeightMeters: 1.1, sigmaMeters: 0.05))
var workspace = TrilaterationWorkspace()
do throws(LocusError) {
    let fix = try solver.solve(locators: hall.span, rangesMeters: ranges.span, workspace: &workspace)
    let rejected = (0..<hall.count).filter { fix.rejectedMask & (1 << UInt64($0)) != 0 }
    print("fix (\(text(fix.position.x)), \(text(fix.position.y))) m, error \(text(fix.position.distance(to: tag))) m")
    print("  ±\(text((fix.covariance.xx + fix.covariance.yy).squareRoot())) m (1σ), HDOP \(text(fix.hdop, 2)), " +
          "residual RMS \(text(fix.residualRMSMeters)) m, \(fix.locatorsUsed) ranges used, rejected: \(rejected)")

    // The same epoch without NLOS rejection: the long range pulls the fix.
    var plain = solver.configuration
    plain.isRobust = false
    let pulled = try Trilaterator(configuration: plain).solve(locators: hall, rangesMeters: ranges)
    print("without rejection: error \(text(pulled.position.distance(to: tag))) m")

    // HDOP of the layout on a 4 m grid (what `locus geometry` maps per cell).
    print("HDOP at the tag's height:")
    for y in stride(from: 10.0, through: 2.0, by: -4) {
        let row = stride(from: 2.0, through: 18.0, by: 4).map { x -> String in
            guard let d = try? GeometryQuality.dop(locators: hall, at: Point3(x: x, y: y, z: 1.1), mode: .planar,
                                                   tagHeightMeters: 1.1) else { return "  -  " }
            return text(d.hdop, 2).padding(5)
        }
        var line = "  y=\(Int(y))".padding(7) + row.joined(separator: " ")
        while line.hasSuffix(" ") { line.removeLast() }
        print(line)
    }

    // The whole floor judged as `locus geometry` does: DOP map, coverage, verdict, warnings, and where a
    // ninth locator would help most.
    let locators = hall.enumerated().map { k, p in Locator(address: LocatorAddress(UInt16(0x100 + k)), position: p) }
    let floor = Floor(id: "1F", widthMeters: 20, heightMeters: 12, tagHeightMeters: 1.1, locators: locators)
    let report = try GeometryReport(floor: floor, options: GeometryReportOptions(gridMeters: 0.5))
    let s = report.statistics
    print("geometry: \(report.verdict), \(text(100 * s.coverage, 1)) % of \(s.cells) cells covered, " +
          "HDOP p95 \(text(s.hdopP95 ?? .nan, 2)), \(report.warnings.count) warnings")
    let ninth = try report.suggestion()
    print("a ninth locator at (\(text(ninth.position.x, 1)), \(text(ninth.position.y, 1))) m: HDOP p95 " +
          "\(text(ninth.after.hdopP95 ?? .nan, 2))\(ninth.improves ? "" : " (not worth it)")")
} catch {
    print("SolverExample: error: \(error)")
    exit(1)
}

extension String {
    /// Left-justified to `width` characters.
    func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}
