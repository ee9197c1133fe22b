@testable import LocusCommandLine
@testable import LocusEvaluation
@testable import LocusReports
@testable import LocusCore
@testable import LocusSolvers
import Testing

/// The heatmap's parts on their own: the fitted colour scale, the verdict, wrapping, clipping, label placement.
@Suite("geometry heatmap parts")
struct GeometryHeatmapPartsTests {
    /// A report over a 4 × 4 m floor with the given locators (planar, 1 m grid).
    static func report(_ locators: [(Double, Double)], width: Double = 4, height: Double = 4) throws -> GeometryReport {
        var floor = Floor(id: FloorID("F"))
        floor.widthMeters = width
        floor.heightMeters = height
        floor.tagHeightMeters = 1
        floor.locators = locators.enumerated().map { i, p in
            Locator(address: LocatorAddress(UInt16(i + 1)), position: Point3(x: p.0, y: p.1, z: 2.5))
        }
        var options = GeometryReportOptions.standard
        options.gridMeters = 1
        return try GeometryReport(floor: floor, options: options)
    }

    @Test("nice steps: the finest 1, 2 or 5 × 10ᵏ with at most 10 intervals")
    func niceSteps() {
        #expect(GeometryHeatScale.niceStep(0.13, maximumIntervals: 10) == 0.02)
        #expect(GeometryHeatScale.niceStep(4.1, maximumIntervals: 10) == 0.5)
        #expect(GeometryHeatScale.niceStep(1.05, maximumIntervals: 10) == 0.2)
        #expect(GeometryHeatScale.niceStep(10, maximumIntervals: 10) == 1)
        #expect(GeometryHeatScale.niceStep(31, maximumIntervals: 10) == 5)
    }

    @Test("a good layout's scale spans its own range in greens; yellow and red keep their HDOP")
    func scaleFitsTheData() throws {
        let good = try Self.report([(0, 0), (4, 0), (4, 4), (0, 4)])
        let scale = GeometryHeatScale(report: good, sigmaMeters: nil)
        let hdops = good.cells.compactMap(\.hdop)
        #expect(scale.lower <= hdops.min()! && scale.upper >= hdops.max()!)
        #expect(scale.upper < 2 && !scale.hasAbove)
        // Every class is a green (more green than red): nothing on a covered map looks like a warning.
        for k in 0..<GeometryHeatScale.classes {
            let c = scale.rgb(scale.value(ofClass: k))
            #expect(c.1 > c.0, "class \(k): \(c)")
        }
        #expect(scale.colourClass(hdops.min()!) == 0 || scale.colourClass(hdops.min()!) < scale.colourClass(hdops.max()!))
        #expect(scale.colourClass(nil) == GeometryHeatScale.noFixClass)
        // On a scale that reaches beyond the coverage limit, 2 is yellow, 5 red (absolute).
        var wide = scale
        (wide.lower, wide.upper, wide.step, wide.decimals) = (0.5, 5, 0.5, 1)
        #expect(GeometryHeatScale.hex(wide.rgb(2).0, wide.rgb(2).1, wide.rgb(2).2) == "#FEE08B")
        #expect(GeometryHeatScale.hex(wide.rgb(5).0, wide.rgb(5).1, wide.rgb(5).2) == "#D73027")
        #expect(GeometryHeatScale.hex(wide.rgb(3).0, wide.rgb(3).1, wide.rgb(3).2) == "#FDAE61")
        let ticks = wide.ticks(words: true)
        #expect(ticks.contains { $0.isCoverageLimit && $0.label == "2.0  coverage limit" })
        #expect(ticks.contains { $0.label == "5.0  poor" })
    }

    @Test("the accuracy scale is the HDOP scale × σ in cm")
    func accuracyScale() throws {
        let good = try Self.report([(0, 0), (4, 0), (4, 4), (0, 4)])
        let cm = GeometryHeatScale(report: good, sigmaMeters: 0.1)
        #expect(cm.title == "accuracy (cm)" && cm.factor == 10 && cm.coverageLimit == 20 && cm.poorLimit == 50)
        let hdops = good.cells.compactMap(\.hdop)
        #expect(cm.lower <= 10 * hdops.min()! && cm.upper >= 10 * hdops.max()!)
        #expect(cm.coverageNote == "all ≤ 20 cm: covered")
    }

    @Test("the verdict is the worse of coverage and max HDOP")
    func verdict() throws {
        let options = GeometryReportOptions.standard
        func statistics(_ hdops: [Double?]) -> GeometryStatistics {
            GeometryStatistics(cells: hdops.map { GeometryCell(locatorsInRange: 4, hdop: $0, vdop: nil) }, unknowns: 2, options: options)
        }
        #expect(GeometryVerdict(statistics: statistics(Array(repeating: 0.8, count: 20)), options: options) == .good)
        #expect(GeometryVerdict(statistics: statistics(Array(repeating: 0.8, count: 99) + [2.2]), options: options) == .fair)
        #expect(GeometryVerdict(statistics: statistics(Array(repeating: 0.8, count: 99) + [42]), options: options) == .poor)
        #expect(GeometryVerdict(statistics: statistics(Array(repeating: 0.8, count: 8) + [1.9, 2.5]), options: options) == .fair)
        #expect(GeometryVerdict(statistics: statistics([nil, nil]), options: options) == .poor)
    }

    @Test("wrapping breaks at spaces, indents continuations, cuts only words longer than a line")
    func wrapping() {
        let lines = TextWrapping.lines("one two three four five six", width: 10, indent: "  ")
        #expect(lines == ["one two", "  three", "  four", "  five six"])
        #expect(TextWrapping.lines("short", width: 10) == ["short"])
        #expect(TextWrapping.lines("abcdefghijkl", width: 5, indent: " ") == ["abcde", " fghi", " jkl"])
        #expect(TextWrapping.lines("", width: 5) == [""])
    }

    @Test("clipping to the floor keeps the inside part, drops a polygon wholly outside")
    func clipping() {
        let square = [Point2(x: -1, y: -1), Point2(x: 1, y: -1), Point2(x: 1, y: 1), Point2(x: -1, y: 1)]
        let clipped = RectangleClipping.clip(square, minX: 0, minY: 0, maxX: 4, maxY: 4)
        #expect(abs(abs(RectangleClipping.area(clipped)) - 1) < 1e-12)
        #expect(clipped.allSatisfy { $0.x >= 0 && $0.y >= 0 })
        #expect(RectangleClipping.clip(square, minX: 5, minY: 5, maxX: 9, maxY: 9).isEmpty)
        #expect(RectangleClipping.clip(square, minX: -2, minY: -2, maxX: 2, maxY: 2).count == 4)
    }

    @Test("the placer moves a label that would overlap, and reports when nothing is free")
    func placement() {
        var placer = LabelPlacer(bounds: PixelBox(minX: 0, minY: 0, maxX: 400, maxY: 200))
        placer.reserve(PixelBox.around(x: 100, y: 100, radius: 6))
        let a = placer.place("0x1008", fontSize: 10.5, x: 100, y: 100, clearance: 8, directions: [.northEast, .southEast])
        let b = placer.place("+1 suggested", fontSize: 11, bold: true, x: 100, y: 100, clearance: 8, directions: [.northEast, .southEast])
        #expect(!a.collides && !b.collides && !a.box.intersects(b.box))
        #expect(a.textAnchor == "start" && a.box.maxY <= 100 && b.box.minY >= 100)
        var tight = LabelPlacer(bounds: PixelBox(minX: 0, minY: 0, maxX: 20, maxY: 20))
        #expect(tight.place("far too long for this box", fontSize: 11, x: 10, y: 10, clearance: 0, directions: [.centre]).collides)
    }
}
