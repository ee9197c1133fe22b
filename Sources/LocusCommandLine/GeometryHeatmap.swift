import LocusCore
import LocusIO
import LocusSolvers

/// Draws a `GeometryReport` as an SVG heatmap a person reads at a glance: HDOP per cell on a
/// green–yellow–red scale (ColorBrewer RdYlGn, 0.5 dark green, 1 green, 2 yellow, 5 red, above 5
/// dark red, no fix grey), a legend colour bar with ticks and the coverage limit, the floor outline
/// with metre ticks (y up), zones outlined and labelled, locators with their addresses, the
/// suggested locator as a blue star, a scale bar, and a title with the summary numbers.
///
/// Cells are quantised to 50 colour classes (10 per segment between the anchors) and same-class
/// runs are merged into rectangles, along rows and then across identical runs of consecutive rows,
/// so a 0.5 m map of a 40 × 25 m hall is a few hundred rectangles. Output bytes depend only on
/// the report (fixed decimals, fixed order).
enum GeometryHeatmap {
    /// HDOP anchors of the colour scale and their colours (RdYlGn).
    static let anchors: [(hdop: Double, rgb: (Double, Double, Double))] = [
        (0.5, (0x00, 0x68, 0x37)), (1.0, (0x1A, 0x98, 0x50)), (1.5, (0xA6, 0xD9, 0x6A)),
        (2.0, (0xFE, 0xE0, 0x8B)), (3.0, (0xFD, 0xAE, 0x61)), (5.0, (0xD7, 0x30, 0x27)),
    ]
    static let classesPerSegment = 10
    static let aboveColour = "#7F0000"
    static let noFixColour = "#C4C4C4"

    /// Colour class of an HDOP: 0 … 49 on the scale, 50 above the last anchor, 51 no fix.
    static func colourClass(_ hdop: Double?) -> Int {
        guard let h = hdop else { return 51 }
        let last = anchors.count - 1
        if h > anchors[last].hdop { return 50 }
        var segment = 0
        while segment < last - 1 && h > anchors[segment + 1].hdop { segment += 1 }
        let lo = anchors[segment].hdop, hi = anchors[segment + 1].hdop
        let t = min(max((h - lo) / (hi - lo), 0), 0.999_999)
        return segment * classesPerSegment + Int(t * Double(classesPerSegment))
    }

    /// `#RRGGBB` of a colour class (the colour at the class's centre).
    static func colour(ofClass k: Int) -> String {
        if k == 50 { return aboveColour }
        if k >= 51 { return noFixColour }
        let segment = k / classesPerSegment
        let t = (Double(k % classesPerSegment) + 0.5) / Double(classesPerSegment)
        let a = anchors[segment].rgb, b = anchors[segment + 1].rgb
        return hex(a.0 + t * (b.0 - a.0), a.1 + t * (b.1 - a.1), a.2 + t * (b.2 - a.2))
    }

    static func hex(_ r: Double, _ g: Double, _ b: Double) -> String {
        let digits = Array("0123456789ABCDEF")
        var s = "#"
        for v in [r, g, b] {
            let n = Int(min(max(v.rounded(), 0), 255))
            s.append(digits[n / 16]); s.append(digits[n % 16])
        }
        return s
    }

    /// A "nice" tick step (1, 2 or 5 × 10ᵏ metres) giving at most `maximumTicks` intervals over `length`.
    static func tickStep(_ length: Double, maximumTicks: Double = 10) -> Double {
        var step = 0.1
        while length / step > maximumTicks {
            for m in [2.0, 2.5, 2.0] {
                step *= m
                if length / step <= maximumTicks { return step }
            }
        }
        return step
    }

    static func n(_ x: Double, _ d: Int) -> String { DecimalText.string(x, decimals: d) }

    /// The SVG bytes for `report`, with `suggestion` drawn when given.
    /// `title` is the first title line (e.g. building and floor names).
    static func svg(report: GeometryReport, suggestion: GeometrySuggestion?, title: String, survey: [SurveyMark] = []) -> [UInt8] {
        let floor = report.floor, grid = report.grid, stats = report.statistics
        let w = floor.widthMeters, h = floor.heightMeters
        let scale = min(1000 / w, 560 / h)
        let mapW = w * scale, mapH = h * scale
        // Legend beside a map tall enough for it, below a flat one (a corridor).
        let sideLegend = mapH >= 330
        let left = 64.0, top = 108.0, bottom = 84.0
        let width = (left + mapW + (sideLegend ? 36 + 210 : 40)).rounded(.up)
        // Warnings listed under the drawing (at most 5 lines, each cut to the width).
        var warningLines = report.warnings.prefix(5).map { "⚠ " + $0.description }
        if report.warnings.count > 5 { warningLines.append("… and \(report.warnings.count - 5) more (see the text or --json summary)") }
        let mapBlockBottom = top + (sideLegend ? mapH + bottom : mapH + 100 + 96)
        let warningsTop = max(mapBlockBottom, sideLegend ? top + 450 + 24 : 0) + 6
        let height = (warningLines.isEmpty ? max(mapBlockBottom, sideLegend ? top + 450 + bottom : 0)
                      : warningsTop + 18 * Double(warningLines.count) + 10).rounded(.up)
        func X(_ x: Double) -> Double { left + (x - floor.originX) * scale }
        func Y(_ y: Double) -> Double { top + (floor.originY + h - y) * scale }
        let halo: [(String, SVGDocument.Value)] = [("stroke", .text("#FFFFFF")), ("stroke-width", .number(3)),
                                                    ("stroke-linejoin", .text("round")), ("paint-order", .text("stroke"))]
        var svg = SVGDocument(width: width, height: height)
        svg.rect(x: 0, y: 0, width: width, height: height, [("fill", .text("#FFFFFF"))])

        // Title: what, the numbers, and the verdict.
        svg.text(title, x: left, y: 30, [("font-size", .number(17)), ("font-weight", .text("bold")), ("fill", .text("#111111"))])
        var line2 = "\(report.mode == .spatial ? "spatial (3-D)" : "planar (2-D)") · \(grid.columns) × \(grid.rows) cells of "
        line2 += "\(n(grid.cellWidthMeters, 2)) m · range \(n(report.options.maximumRangeMeters, 0)) m · \(plural(report.locators.count, "locator"))"
        svg.text(line2, x: left, y: 52, [("font-size", .number(12.5)), ("fill", .text("#444444"))])
        var line3 = "HDOP p50 \(opt(stats.hdopP50)) · p95 \(opt(stats.hdopP95)) · max \(opt(stats.hdopMax))"
        if let v = stats.vdopMax { line3 += " · VDOP max \(n(v, 2))" }
        line3 += " · coverage \(n(100 * stats.coverage, 1)) % · \(plural(report.warnings.count, "warning"))"
        svg.text(line3, x: left, y: 72, [("font-size", .number(13.5)), ("font-weight", .text("bold")),
                                         ("fill", .text(stats.coverage >= 0.95 ? "#1A6B3A" : (stats.coverage >= 0.8 ? "#8A5A00" : "#B2182B")))])
        if let s = suggestion {
            var line4 = "+1 locator at (\(n(s.position.x, 1)), \(n(s.position.y, 1))) m: p95 \(opt(s.before.hdopP95)) → \(opt(s.after.hdopP95)), "
            line4 += "coverage \(n(100 * s.before.coverage, 1)) → \(n(100 * s.after.coverage, 1)) %"
            if !s.improves { line4 += " — marginal gain" }
            svg.text(line4, x: left, y: 91, [("font-size", .number(12.5)), ("font-weight", .text("bold")), ("fill", .text("#2166AC"))])
        }

        // Heat cells, merged into rectangles.
        svg.open("g", [("shape-rendering", .text("crispEdges")), ("stroke", .text("none"))])
        struct Run: Equatable { var i0: Int; var i1: Int; var k: Int; var j0: Int }
        var active: [Run] = []
        func emit(_ r: Run, untilRow j1: Int) {
            let x0 = grid.originX + Double(r.i0) * grid.cellWidthMeters, x1 = grid.originX + Double(r.i1 + 1) * grid.cellWidthMeters
            let y0 = grid.originY + Double(r.j0) * grid.cellHeightMeters, y1 = grid.originY + Double(j1 + 1) * grid.cellHeightMeters
            svg.rect(x: X(x0), y: Y(y1), width: X(x1) - X(x0), height: Y(y0) - Y(y1), [("fill", .text(colour(ofClass: r.k)))])
        }
        for j in 0..<grid.rows {
            var runs: [Run] = []
            var i = 0
            while i < grid.columns {
                let k = colourClass(report.cells[j * grid.columns + i].hdop)
                var e = i
                while e + 1 < grid.columns && colourClass(report.cells[j * grid.columns + e + 1].hdop) == k { e += 1 }
                runs.append(Run(i0: i, i1: e, k: k, j0: j))
                i = e + 1
            }
            var next: [Run] = []
            for var r in runs {
                if let a = active.first(where: { $0.i0 == r.i0 && $0.i1 == r.i1 && $0.k == r.k }) { r.j0 = a.j0 }
                next.append(r)
            }
            for a in active where !next.contains(where: { $0.i0 == a.i0 && $0.i1 == a.i1 && $0.k == a.k && $0.j0 == a.j0 }) {
                emit(a, untilRow: j - 1)
            }
            active = next
        }
        for a in active { emit(a, untilRow: grid.rows - 1) }
        svg.close()

        // Floor outline and metre ticks (x along the bottom, y up the left side).
        svg.rect(x: X(floor.originX), y: Y(floor.originY + h), width: mapW, height: mapH,
                 [("fill", .text("none")), ("stroke", .text("#222222")), ("stroke-width", .number(1.5))])
        let step = tickStep(w, maximumTicks: max(2, (mapW / 70).rounded(.down)))
        let stepY = tickStep(h, maximumTicks: max(2, (mapH / 45).rounded(.down)))
        let axis: [(String, SVGDocument.Value)] = [("font-size", .number(11)), ("fill", .text("#333333"))]
        let decimals = step < 1 ? 1 : 0, decimalsY = stepY < 1 ? 1 : 0
        // Ticks at whole multiples of the step inside the floor (the origin need not be one).
        var k = (floor.originX / step - 1e-9).rounded(.up)
        while k * step <= floor.originX + w + 1e-9 {
            let x = k * step
            svg.line(x1: X(x), y1: Y(floor.originY), x2: X(x), y2: Y(floor.originY) + 5, [("stroke", .text("#222222"))])
            svg.text(n(x, decimals), x: X(x), y: Y(floor.originY) + 18, axis + [("text-anchor", .text("middle"))])
            k += 1
        }
        k = (floor.originY / stepY - 1e-9).rounded(.up)
        while k * stepY <= floor.originY + h + 1e-9 {
            let y = k * stepY
            svg.line(x1: X(floor.originX) - 5, y1: Y(y), x2: X(floor.originX), y2: Y(y), [("stroke", .text("#222222"))])
            svg.text(n(y, decimalsY), x: X(floor.originX) - 8, y: Y(y) + 4, axis + [("text-anchor", .text("end"))])
            k += 1
        }
        svg.text("x (m)", x: X(floor.originX) + mapW / 2, y: Y(floor.originY) + 34, axis + [("text-anchor", .text("middle"))])
        svg.text("y (m)", x: 16, y: top + mapH / 2, axis + [("text-anchor", .text("middle")),
                                                            ("transform", .text("rotate(-90 16 \(n(top + mapH / 2, 2)))"))])

        // Scale bar: two alternating segments of one tick step each.
        let barY = Y(floor.originY) + 52, barX = X(floor.originX)
        for s in 0..<2 {
            svg.rect(x: barX + Double(s) * step * scale, y: barY, width: step * scale, height: 6,
                     [("fill", .text(s == 0 ? "#222222" : "#FFFFFF")), ("stroke", .text("#222222")), ("stroke-width", .number(1))])
        }
        svg.text("0", x: barX, y: barY + 20, axis + [("text-anchor", .text("middle"))])
        svg.text("\(n(2 * step, decimals)) m", x: barX + 2 * step * scale, y: barY + 20, axis + [("text-anchor", .text("middle"))])

        // Zones: dashed outline, label at the vertex mean.
        for zone in floor.zones {
            svg.polygon(zone.polygon.map { (X($0.x), Y($0.y)) },
                        [("fill", .text("#FFFFFF")), ("fill-opacity", .number(0.08)), ("stroke", .text("#1F2D5A")),
                         ("stroke-width", .number(1.6)), ("stroke-dasharray", .text("6 3"))])
        }
        for zone in floor.zones {
            let cx = zone.polygon.reduce(0) { $0 + $1.x } / Double(zone.polygon.count)
            let cy = zone.polygon.reduce(0) { $0 + $1.y } / Double(zone.polygon.count)
            svg.text(zone.name.isEmpty ? zone.id.rawValue : zone.name, x: X(cx), y: Y(cy) + 4,
                     halo + [("font-size", .number(11)), ("font-style", .text("italic")), ("fill", .text("#1F2D5A")),
                             ("text-anchor", .text("middle"))])
        }

        // Locators: dark dots with their addresses.
        for l in floor.locators {
            let x = X(l.position.x), y = Y(l.position.y)
            svg.circle(cx: x, cy: y, r: 5.5, [("fill", .text("#111111")), ("stroke", .text("#FFFFFF")), ("stroke-width", .number(1.5))])
            let right = l.position.x < floor.originX + 0.8 * w
            svg.text(l.address.description, x: x + (right ? 8 : -8), y: y - 7,
                     halo + [("font-size", .number(10.5)), ("fill", .text("#111111")), ("text-anchor", .text(right ? "start" : "end"))])
        }

        // Flagged locators (the survey check of `--trace`): a red ring, a dashed line to the position
        // the recording fits, a red hollow dot there.
        for mark in survey {
            let x0 = X(mark.surveyed.x), y0 = Y(mark.surveyed.y), x1 = X(mark.fitted.x), y1 = Y(mark.fitted.y)
            let red: [(String, SVGDocument.Value)] = [("stroke", .text("#B2182B")), ("stroke-width", .number(2)), ("fill", .text("none"))]
            svg.circle(cx: x0, cy: y0, r: 9, red)
            svg.line(x1: x0, y1: y0, x2: x1, y2: y1, red + [("stroke-dasharray", .text("4 3"))])
            svg.circle(cx: x1, cy: y1, r: 5, red)
            let right = mark.fitted.x < floor.originX + 0.8 * w
            svg.text("\(mark.address) fits \(n(mark.offsetMeters, 2)) m away", x: x1 + (right ? 9 : -9), y: y1 + 15,
                     halo + [("font-size", .number(10.5)), ("font-weight", .text("bold")), ("fill", .text("#B2182B")),
                             ("text-anchor", .text(right ? "start" : "end"))])
        }

        // The suggested locator: a blue star.
        if let s = suggestion {
            let cx = X(s.position.x), cy = Y(s.position.y)
            svg.polygon(star(cx: cx, cy: cy, outer: 11, inner: 4.6), [("fill", .text("#2166AC")), ("stroke", .text("#FFFFFF")), ("stroke-width", .number(1.5))])
            let right = s.position.x < floor.originX + 0.7 * w
            svg.text("+1 suggested", x: cx + (right ? 13 : -13), y: cy + 4,
                     halo + [("font-size", .number(11)), ("font-weight", .text("bold")), ("fill", .text("#2166AC")),
                             ("text-anchor", .text(right ? "start" : "end"))])
        }

        if sideLegend {
            verticalLegend(&svg, x: left + mapW + 40, top: top, report: report, withSuggestion: suggestion != nil, withSurvey: !survey.isEmpty)
        } else {
            horizontalLegend(&svg, x: left, top: top + mapH + 100, report: report, withSuggestion: suggestion != nil, withSurvey: !survey.isEmpty)
        }
        if !warningLines.isEmpty {
            let maximumCharacters = max(40, Int((width - left - 12) / 6.4))
            for (i, line) in warningLines.enumerated() {
                let text = line.count > maximumCharacters ? String(line.prefix(maximumCharacters - 1)) + "…" : line
                svg.text(text, x: left, y: warningsTop + 18 * Double(i) + 12,
                         [("font-size", .number(11)), ("fill", .text("#B2182B"))])
            }
        }
        return svg.bytes
    }

    /// The vertical legend beside the map: stepped colour bar, HDOP 0.5 at the bottom to > 5 at the top.
    static func verticalLegend(_ svg: inout SVGDocument, x lx: Double, top: Double, report: GeometryReport, withSuggestion: Bool,
                               withSurvey: Bool) {
        let legendBarHeight = 300.0
        let ly = top + 18
        svg.text("HDOP", x: lx, y: top + 4, [("font-size", .number(13)), ("font-weight", .text("bold")), ("fill", .text("#111111"))])
        let segments = anchors.count - 1
        let segmentHeight = (legendBarHeight - 30) / Double(segments)
        let barBottom = ly + legendBarHeight
        for c in 0..<(segments * classesPerSegment) {
            let y = barBottom - Double(c + 1) * segmentHeight / Double(classesPerSegment)
            svg.rect(x: lx, y: y, width: 20, height: segmentHeight / Double(classesPerSegment) + 0.3,
                     [("fill", .text(colour(ofClass: c))), ("shape-rendering", .text("crispEdges"))])
        }
        svg.rect(x: lx, y: ly, width: 20, height: 26, [("fill", .text(aboveColour))])
        svg.rect(x: lx, y: ly, width: 20, height: legendBarHeight, [("fill", .text("none")), ("stroke", .text("#333333"))])
        let tick: [(String, SVGDocument.Value)] = [("font-size", .number(11)), ("fill", .text("#222222"))]
        for (i, a) in anchors.enumerated() {
            let y = barBottom - Double(i) * segmentHeight
            svg.line(x1: lx + 20, y1: y, x2: lx + 25, y2: y, [("stroke", .text("#333333"))])
            svg.text(tickLabel(a.hdop, report: report), x: lx + 29, y: y + 4, tick)
            if a.hdop == report.options.coverageHDOP {
                svg.line(x1: lx - 4, y1: y, x2: lx + 24, y2: y, [("stroke", .text("#111111")), ("stroke-width", .number(2))])
            }
        }
        svg.text("> 5  very poor", x: lx + 29, y: ly + 17, tick)
        markerLegend(&svg, x: lx, y: barBottom + 30, rowHeight: 22, columns: false, report: report, withSuggestion: withSuggestion, withSurvey: withSurvey)
    }

    /// The horizontal legend below a flat map: colour bar left to right, markers to its right.
    static func horizontalLegend(_ svg: inout SVGDocument, x lx: Double, top: Double, report: GeometryReport, withSuggestion: Bool,
                                 withSurvey: Bool) {
        let barWidth = 330.0, barHeight = 16.0
        let segments = anchors.count - 1
        let segmentWidth = (barWidth - 34) / Double(segments)
        svg.text("HDOP", x: lx, y: top - 8, [("font-size", .number(13)), ("font-weight", .text("bold")), ("fill", .text("#111111"))])
        for c in 0..<(segments * classesPerSegment) {
            svg.rect(x: lx + Double(c) * segmentWidth / Double(classesPerSegment), y: top,
                     width: segmentWidth / Double(classesPerSegment) + 0.3, height: barHeight,
                     [("fill", .text(colour(ofClass: c))), ("shape-rendering", .text("crispEdges"))])
        }
        svg.rect(x: lx + barWidth - 30, y: top, width: 30, height: barHeight, [("fill", .text(aboveColour))])
        svg.rect(x: lx, y: top, width: barWidth, height: barHeight, [("fill", .text("none")), ("stroke", .text("#333333"))])
        let tick: [(String, SVGDocument.Value)] = [("font-size", .number(11)), ("fill", .text("#222222")), ("text-anchor", .text("middle"))]
        for (i, a) in anchors.enumerated() {
            let x = lx + Double(i) * segmentWidth
            svg.line(x1: x, y1: top + barHeight, x2: x, y2: top + barHeight + 5, [("stroke", .text("#333333"))])
            svg.text(n(a.hdop, a.hdop == a.hdop.rounded() ? 0 : 1), x: x, y: top + barHeight + 17, tick)
            if a.hdop == report.options.coverageHDOP {
                svg.line(x1: x, y1: top - 4, x2: x, y2: top + barHeight + 4, [("stroke", .text("#111111")), ("stroke-width", .number(2))])
                svg.text("coverage limit", x: x, y: top + barHeight + 31, tick)
            }
        }
        svg.text("> 5", x: lx + barWidth - 15, y: top + barHeight + 17, tick)
        markerLegend(&svg, x: lx + barWidth + 40, y: top + 12, rowHeight: 22, columns: true, report: report, withSuggestion: withSuggestion, withSurvey: withSurvey)
    }

    /// Swatches for no fix, locator, zone and suggested locator, in a column or two columns.
    static func markerLegend(_ svg: inout SVGDocument, x lx: Double, y y0: Double, rowHeight: Double, columns: Bool,
                             report: GeometryReport, withSuggestion: Bool, withSurvey: Bool) {
        let tick: [(String, SVGDocument.Value)] = [("font-size", .number(11)), ("fill", .text("#222222"))]
        var items = 0
        func position() -> (Double, Double) {
            defer { items += 1 }
            if columns { return (lx + Double(items / 2) * 200, y0 + Double(items % 2) * (rowHeight + 14)) }
            return (lx, y0 + Double(items) * rowHeight + (items > 0 ? 18 : 0))
        }
        var (x, y) = position()
        svg.rect(x: x, y: y - 12, width: 20, height: 14, [("fill", .text(noFixColour)), ("stroke", .text("#333333"))])
        svg.text("no fix: < \(report.locatorsNeeded) locators", x: x + 29, y: y, tick)
        svg.text("in range or degenerate", x: x + 29, y: y + 14, tick)
        (x, y) = position()
        svg.circle(cx: x + 10, cy: y - 4, r: 5.5, [("fill", .text("#111111")), ("stroke", .text("#FFFFFF")), ("stroke-width", .number(1.5))])
        svg.text("locator", x: x + 29, y: y, tick)
        (x, y) = position()
        svg.rect(x: x + 1, y: y - 12, width: 18, height: 13, [("fill", .text("none")), ("stroke", .text("#1F2D5A")),
                                                               ("stroke-width", .number(1.6)), ("stroke-dasharray", .text("6 3"))])
        svg.text("zone", x: x + 29, y: y, tick)
        if withSuggestion {
            (x, y) = position()
            svg.polygon(star(cx: x + 10, cy: y - 4, outer: 9, inner: 3.8), [("fill", .text("#2166AC"))])
            svg.text("suggested locator", x: x + 29, y: y, tick)
        }
        if withSurvey {
            (x, y) = position()
            let red: [(String, SVGDocument.Value)] = [("stroke", .text("#B2182B")), ("stroke-width", .number(2)), ("fill", .text("none"))]
            svg.circle(cx: x + 4, cy: y - 4, r: 5, red)
            svg.line(x1: x + 4, y1: y - 4, x2: x + 16, y2: y - 4, red + [("stroke-dasharray", .text("3 2"))])
            svg.circle(cx: x + 17, cy: y - 4, r: 3, red)
            svg.text("flagged locator → where", x: x + 29, y: y, tick)
            svg.text("the recording fits it", x: x + 29, y: y + 14, tick)
        }
    }

    /// "2  coverage limit", "5  poor" or the plain number.
    static func tickLabel(_ hdop: Double, report: GeometryReport) -> String {
        var label = n(hdop, hdop == hdop.rounded() ? 0 : 1)
        if hdop == report.options.coverageHDOP { label += "  coverage limit" }
        if hdop == report.options.poorHDOP { label += "  poor" }
        return label
    }

    /// A five-pointed star's ten vertices around (cx, cy), point up.
    static func star(cx: Double, cy: Double, outer: Double, inner: Double) -> [(x: Double, y: Double)] {
        (0..<10).map { i in
            let r = i % 2 == 0 ? outer : inner, angle = Double(i) * 0.1 * 2 * Double.pi
            return (cx + r * sine(angle), cy - r * cosine(angle))
        }
    }

    static func opt(_ x: Double?) -> String { x.map { n($0, 2) } ?? "n/a" }

    /// sin and cos by their Taylor series after reduction to [−π, π] (enough for drawing a star,
    /// and bit-identical on every platform, unlike libm).
    static func sine(_ x: Double) -> Double {
        var a = x.truncatingRemainder(dividingBy: 2 * Double.pi)
        if a > Double.pi { a -= 2 * Double.pi } else if a < -Double.pi { a += 2 * Double.pi }
        var term = a, sum = a
        for k in 1...12 {
            term *= -a * a / Double((2 * k) * (2 * k + 1))
            sum += term
        }
        return sum
    }

    static func cosine(_ x: Double) -> Double { sine(x + Double.pi / 2) }
}

/// A locator the survey check flagged, for the heatmap: where it was surveyed, where the recording
/// fits it.
struct SurveyMark {
    var address: LocatorAddress
    var surveyed: Point2
    var fitted: Point2
    var offsetMeters: Double
}
