import LocusCore
import LocusEvaluation
import LocusIO
import LocusSolvers

/// Draws a `GeometryReport` as an SVG heatmap a person reads at a glance: HDOP (or, with
/// `--accuracy`, the expected horizontal accuracy in cm) per cell on a colour scale fitted to the
/// map's range (`GeometryHeatScale`), a legend colour bar with ticks and the coverage limit, the floor
/// outline with metre ticks (y up), zones outlined and labelled, locators with their addresses,
/// locators and zones off the floor drawn at its edge, the suggested locator as a blue star, a scale
/// bar, a title with the summary numbers coloured by the verdict (`GeometryVerdict`), and the
/// warnings wrapped under the drawing. A TDoA map (`--tdoa`) says so in the title and outlines the
/// locators' convex hull (dash-dotted): outside it the difference DOP grows fast, and the outline lets
/// the reader see that the colours change there.
///
/// Cells are quantised to the scale's colour classes and same-class runs are merged into rectangles,
/// along rows and then across identical runs of consecutive rows, so a 0.5 m map of a 40 × 25 m hall
/// is a few hundred rectangles. Their edges are whole pixels taken from one table per axis (each
/// column's and row's edge rounded once), so neighbouring rectangles share their edges exactly and
/// no renderer can leave a seam between them. Map labels are placed by `LabelPlacer` so they overlap
/// neither each other nor the markers. Output bytes depend only on the report (fixed decimals, fixed
/// order).
package enum GeometryHeatmap {
    /// Map-label colours: locators, off-floor markers, zones, the suggestion, flagged locators.
    static let locatorColour = "#111111", offFloorColour = "#7B3294", zoneColour = "#1F2D5A"
    static let suggestionColour = "#2166AC", surveyColour = "#B2182B"
    /// The outline of the locators' hull on a TDoA map.
    static let hullColour = "#111111"

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

    /// A style list, SVG attribute name → value.
    typealias Style = [(String, SVGDocument.Value)]

    /// The SVG bytes for `report`, with `suggestion` drawn when given and flagged locators (`survey`)
    /// marked. `title` is the first title line (e.g. building and floor names). With
    /// `accuracySigmaMeters` σ the cells show HDOP · σ in centimetres instead of HDOP.
    /// The heatmap of a geometry run: its report, suggestion, title, survey marks and accuracy σ.
    package static func svg(_ outcome: GeometryOutcome) -> [UInt8] {
        svg(report: outcome.report, suggestion: outcome.suggestion, title: outcome.title, survey: outcome.surveyMarks,
            accuracySigmaMeters: outcome.accuracySigmaMeters)
    }

    static func svg(report: GeometryReport, suggestion: GeometrySuggestion?, title: String, survey: [SurveyMark] = [],
                    accuracySigmaMeters: Double? = nil) -> [UInt8] {
        let floor = report.floor, map = report.hdopMap
        let columns = map.xEdgesMeters.count - 1, rows = map.yEdgesMeters.count - 1
        let heat = GeometryHeatScale(report: report, sigmaMeters: accuracySigmaMeters)
        let w = floor.widthMeters, h = floor.heightMeters
        let scale = min(1000 / w, 560 / h)
        let mapW = w * scale, mapH = h * scale
        // Legend beside a map tall enough for it, below a flat one (a corridor).
        let sideLegend = mapH >= 330
        let left = 64.0, top = 108.0
        func X(_ x: Double) -> Double { left + (x - floor.originX) * scale }
        func Y(_ y: Double) -> Double { top + (floor.originY + h - y) * scale }
        // Whole-pixel cell edges, one table per axis: rectangles meet exactly.
        let columnEdges = map.xEdgesMeters.map { X($0).rounded() }
        let rowEdges = map.yEdgesMeters.map { Y($0).rounded() }
        let mapLeft = columnEdges[0], mapRight = columnEdges[columns], mapTop = rowEdges[rows], mapBottom = rowEdges[0]
        let halo: Style = [("stroke", .text("#FFFFFF")), ("stroke-width", .number(3)),
                           ("stroke-linejoin", .text("round")), ("paint-order", .text("stroke"))]

        // Title: what, the numbers, and the verdict.
        let tdoa = report.options.measurement == .tdoa
        let caption = report.caption(suggestion: suggestion, accuracySigmaMeters: accuracySigmaMeters)
        let line2 = caption.map, line3 = caption.figures, line4 = caption.suggestion
        let titleWidth = max(LabelPlacer.textWidth(title, fontSize: 17, bold: true), LabelPlacer.textWidth(line2, fontSize: 12.5, bold: false),
                             LabelPlacer.textWidth(line3, fontSize: 13.5, bold: true),
                             line4.map { LabelPlacer.textWidth($0, fontSize: 12.5, bold: true) } ?? 0)
        let width = max(left + mapW + (sideLegend ? 36 + 210 : 40), left + titleWidth + 16).rounded(.up)

        // Off-floor markers go in the legend when there are any.
        let offFloorLocators = floor.locators.filter { !isOnFloor($0.position.x, $0.position.y, floor) }
        let clippedZones = floor.zones.map { zone in
            RectangleClipping.clip(zone.polygon, minX: floor.originX, minY: floor.originY, maxX: floor.originX + w, maxY: floor.originY + h)
        }
        let anyOffFloor = !offFloorLocators.isEmpty || zip(floor.zones, clippedZones).contains { zone, clipped in
            clipped.isEmpty || zone.polygon.contains { !isOnFloor($0.x, $0.y, floor) }
        }
        let hull = tdoa ? GeometryReport.locatorHull(report.locators) : []
        let items = LegendItems(report: report, suggestion: suggestion != nil, survey: !survey.isEmpty, offFloor: anyOffFloor,
                                hull: hull.count >= 3)

        // The legend's extent, from a dry run into a scratch document (the same code draws it below).
        let legendX = sideLegend ? left + mapW + 40 : left, legendTop = sideLegend ? top : mapBottom + 100
        var scratch = SVGDocument(width: 0, height: 0)
        let legendBottom = sideLegend ? verticalLegend(&scratch, x: legendX, top: legendTop, heat: heat, items: items)
                                      : horizontalLegend(&scratch, x: legendX, top: legendTop, heat: heat, items: items)

        // Warnings under the drawing (at most 5, each wrapped to the width). They are mostly lower-case
        // prose (DejaVu Sans averages about 0.5 em there): 0.6 em a character.
        let characters = max(40, Int((width - left - 12) / (11 * 0.6)))
        let findings = report.warningTexts
        var warnings = findings.prefix(5).map { TextWrapping.lines("⚠ " + $0, width: characters, indent: "    ") }
        if findings.count > 5 { warnings.append(["… and \(findings.count - 5) more (see the text or --json summary)"]) }
        let blockBottom = max(mapBottom + 84, legendBottom + 12)
        let warningsTop = blockBottom + 6
        let warningLines = warnings.reduce(0) { $0 + $1.count }
        let height = (warnings.isEmpty ? blockBottom
                      : warningsTop + 15 * Double(warningLines) + 4 * Double(warnings.count - 1) + 10).rounded(.up)

        var svg = SVGDocument(width: width, height: height)
        svg.rect(x: 0, y: 0, width: width, height: height, [("fill", .text("#FFFFFF"))])
        svg.text(title, x: left, y: 30, [("font-size", .number(17)), ("font-weight", .text("bold")), ("fill", .text("#111111"))])
        svg.text(line2, x: left, y: 52, [("font-size", .number(12.5)), ("fill", .text("#444444"))])
        let verdict = report.verdict
        svg.text(line3, x: left, y: 72, [("font-size", .number(13.5)), ("font-weight", .text("bold")), ("fill", .text(verdict.colour))])
        if let line4 {
            svg.text(line4, x: left, y: 91, [("font-size", .number(12.5)), ("font-weight", .text("bold")), ("fill", .text(suggestionColour))])
        }

        // Heat cells, merged into rectangles on the whole-pixel edges.
        svg.open("g", [("id", .text("cells")), ("shape-rendering", .text("crispEdges")), ("stroke", .text("none"))])
        struct Run: Equatable { var i0: Int; var i1: Int; var k: Int; var j0: Int }
        var active: [Run] = []
        func emit(_ r: Run, untilRow j1: Int) {
            let x0 = columnEdges[r.i0], x1 = columnEdges[r.i1 + 1], yTop = rowEdges[j1 + 1], yBottom = rowEdges[r.j0]
            guard x1 > x0, yBottom > yTop else { return }   // thinner than a pixel: its neighbours cover it
            svg.rect(x: x0, y: yTop, width: x1 - x0, height: yBottom - yTop, [("fill", .text(heat.colour(ofClass: r.k)))])
        }
        for j in 0..<rows {
            var runs: [Run] = []
            var i = 0
            while i < columns {
                let k = heat.colourClass(map.hdop[j * columns + i])
                var e = i
                while e + 1 < columns && heat.colourClass(map.hdop[j * columns + e + 1]) == k { e += 1 }
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
        for a in active { emit(a, untilRow: rows - 1) }
        svg.close()

        // Labels may use the map and its margins, but not the title, the legend or the scale bar.
        var placer = LabelPlacer(bounds: PixelBox(minX: 2, minY: line4 == nil ? 78 : 96,
                                                  maxX: sideLegend ? legendX - 6 : width - 2, maxY: mapBottom + 44))

        // Floor outline and metre ticks (x along the bottom, y up the left side).
        svg.rect(x: mapLeft, y: mapTop, width: mapRight - mapLeft, height: mapBottom - mapTop,
                 [("fill", .text("none")), ("stroke", .text("#222222")), ("stroke-width", .number(1.5))])
        let step = tickStep(w, maximumTicks: max(2, (mapW / 70).rounded(.down)))
        let stepY = tickStep(h, maximumTicks: max(2, (mapH / 45).rounded(.down)))
        let axis: Style = [("font-size", .number(11)), ("fill", .text("#333333"))]
        let decimals = step < 1 ? 1 : 0, decimalsY = stepY < 1 ? 1 : 0
        func axisText(_ text: String, x: Double, y: Double, anchor: String) {
            svg.text(text, x: x, y: y, axis + [("text-anchor", .text(anchor))])
            placer.reserve(LabelPlacer.box(text, fontSize: 11, bold: false, x: x, baseline: y, textAnchor: anchor))
        }
        // Ticks at whole multiples of the step inside the floor (the origin need not be one).
        var k = (floor.originX / step - 1e-9).rounded(.up)
        while k * step <= floor.originX + w + 1e-9 {
            let x = k * step
            svg.line(x1: X(x), y1: mapBottom, x2: X(x), y2: mapBottom + 5, [("stroke", .text("#222222"))])
            axisText(n(x, decimals), x: X(x), y: mapBottom + 18, anchor: "middle")
            k += 1
        }
        k = (floor.originY / stepY - 1e-9).rounded(.up)
        while k * stepY <= floor.originY + h + 1e-9 {
            let y = k * stepY
            svg.line(x1: mapLeft - 5, y1: Y(y), x2: mapLeft, y2: Y(y), [("stroke", .text("#222222"))])
            axisText(n(y, decimalsY), x: mapLeft - 8, y: Y(y) + 4, anchor: "end")
            k += 1
        }
        axisText("x (m)", x: X(floor.originX) + mapW / 2, y: mapBottom + 34, anchor: "middle")
        svg.text("y (m)", x: 16, y: top + mapH / 2, axis + [("text-anchor", .text("middle")),
                                                            ("transform", .text("rotate(-90 16 \(n(top + mapH / 2, 2)))"))])
        placer.reserve(PixelBox(minX: 6, minY: top + mapH / 2 - 18, maxX: 20, maxY: top + mapH / 2 + 18))

        // Scale bar: two alternating segments of one tick step each.
        let barY = mapBottom + 52, barX = mapLeft
        for s in 0..<2 {
            svg.rect(x: barX + Double(s) * step * scale, y: barY, width: step * scale, height: 6,
                     [("fill", .text(s == 0 ? "#222222" : "#FFFFFF")), ("stroke", .text("#222222")), ("stroke-width", .number(1))])
        }
        svg.text("0", x: barX, y: barY + 20, axis + [("text-anchor", .text("middle"))])
        svg.text("\(n(2 * step, decimals)) m", x: barX + 2 * step * scale, y: barY + 20, axis + [("text-anchor", .text("middle"))])

        // Zones: dashed outline of the part on the floor; a zone wholly off it gets an edge marker.
        for clipped in clippedZones where !clipped.isEmpty {
            svg.polygon(clipped.map { (X($0.x), Y($0.y)) },
                        [("fill", .text("#FFFFFF")), ("fill-opacity", .number(0.08)), ("stroke", .text(zoneColour)),
                         ("stroke-width", .number(1.6)), ("stroke-dasharray", .text("6 3"))])
        }

        // TDoA: the locators' hull, dash-dotted, clipped to the floor (outside it differences degrade fast).
        if hull.count >= 3 {
            let clipped = RectangleClipping.clip(hull, minX: floor.originX, minY: floor.originY, maxX: floor.originX + w, maxY: floor.originY + h)
            if !clipped.isEmpty {
                svg.polygon(clipped.map { (X($0.x), Y($0.y)) },
                            [("id", .text("locator-hull")), ("fill", .text("none")), ("stroke", .text(hullColour)),
                             ("stroke-width", .number(1.8)), ("stroke-dasharray", .text("10 3 2 3"))])
            }
        }

        // Markers first (they are obstacles for every label), labels after, on top.
        struct PendingLabel {
            var text: String
            var x: Double, y: Double, clearance: Double
            var style: Style
            var fontSize: Double, bold: Bool
            var colour: String
            var directions: [LabelPlacer.Direction]
        }
        var zoneLabels: [PendingLabel] = []
        let around: [LabelPlacer.Direction] = [.northEast, .northWest, .southEast, .southWest, .east, .west, .north, .south]
        func offFloorMarker(realX: Double, realY: Double, colour: String) -> (x: Double, y: Double) {
            let cx = min(max(realX, floor.originX), floor.originX + w), cy = min(max(realY, floor.originY), floor.originY + h)
            let tipX = X(cx), tipY = Y(cy)
            var ux = X(realX) - tipX, uy = Y(realY) - tipY
            let length = (ux * ux + uy * uy).squareRoot()
            (ux, uy) = length > 0 ? (ux / length, uy / length) : (0, -1)
            // A triangle pointing out of the floor, its tip on the edge, towards the real position.
            let baseX = tipX - 14 * ux, baseY = tipY - 14 * uy
            svg.polygon([(tipX, tipY), (baseX - 7 * uy, baseY + 7 * ux), (baseX + 7 * uy, baseY - 7 * ux)],
                        [("fill", .text(colour)), ("stroke", .text("#FFFFFF")), ("stroke-width", .number(1.2))])
            let centre = (x: tipX - 7 * ux, y: tipY - 7 * uy)
            placer.reserve(PixelBox.around(x: centre.x, y: centre.y, radius: 8))
            return centre
        }
        for (zone, clipped) in zip(floor.zones, clippedZones) {
            let name = shortened(zone.name.isEmpty ? zone.id.rawValue : zone.name)
            let italic: Style = [("font-style", .text("italic"))]
            if clipped.isEmpty {
                let mx = zone.polygon.reduce(0) { $0 + $1.x } / Double(max(1, zone.polygon.count))
                let my = zone.polygon.reduce(0) { $0 + $1.y } / Double(max(1, zone.polygon.count))
                let at = offFloorMarker(realX: mx, realY: my, colour: offFloorColour)
                zoneLabels.append(PendingLabel(text: "\(name): off floor, centre (\(n(mx, 1)), \(n(my, 1))) m", x: at.x, y: at.y, clearance: 10,
                                           style: italic, fontSize: 11, bold: true, colour: offFloorColour, directions: around))
            } else {
                let partly = zone.polygon.contains { !isOnFloor($0.x, $0.y, floor) }
                let cx = clipped.reduce(0) { $0 + $1.x } / Double(clipped.count), cy = clipped.reduce(0) { $0 + $1.y } / Double(clipped.count)
                zoneLabels.append(PendingLabel(text: partly ? "\(name) (partly off floor)" : name, x: X(cx), y: Y(cy), clearance: 0,
                                           style: italic, fontSize: 11, bold: false, colour: zoneColour,
                                           directions: [.centre, .north, .south, .east, .west, .northEast, .southEast, .northWest, .southWest]))
            }
        }

        // Locators: dark dots with their addresses; one off the floor: a purple arrow at the edge,
        // its address and real position.
        var locatorLabels: [PendingLabel] = [], offFloorLabels: [PendingLabel] = []
        for l in floor.locators {
            if isOnFloor(l.position.x, l.position.y, floor) {
                let x = X(l.position.x), y = Y(l.position.y)
                svg.circle(cx: x, cy: y, r: 5.5, [("fill", .text(locatorColour)), ("stroke", .text("#FFFFFF")), ("stroke-width", .number(1.5))])
                placer.reserve(PixelBox.around(x: x, y: y, radius: 6.5))
                let right = l.position.x < floor.originX + 0.8 * w
                locatorLabels.append(PendingLabel(text: l.address.description, x: x, y: y, clearance: 8, style: [], fontSize: 10.5, bold: false,
                                                  colour: locatorColour,
                                                  directions: right ? around : [.northWest, .northEast, .southWest, .southEast, .west, .east, .north, .south]))
            } else {
                let at = offFloorMarker(realX: l.position.x, realY: l.position.y, colour: offFloorColour)
                offFloorLabels.append(PendingLabel(text: "\(l.address) off floor at (\(n(l.position.x, 2)), \(n(l.position.y, 2))) m",
                                                   x: at.x, y: at.y, clearance: 10, style: [], fontSize: 10.5, bold: true,
                                                   colour: offFloorColour, directions: around))
            }
        }

        // Flagged locators (the survey check of `--trace`): a red ring, a dashed line to the position
        // the recording fits, a red hollow dot there.
        var surveyLabels: [PendingLabel] = []
        for mark in survey {
            let x0 = X(mark.surveyed.x), y0 = Y(mark.surveyed.y), x1 = X(mark.fitted.x), y1 = Y(mark.fitted.y)
            let red: Style = [("stroke", .text(surveyColour)), ("stroke-width", .number(2)), ("fill", .text("none"))]
            svg.circle(cx: x0, cy: y0, r: 9, red)
            svg.line(x1: x0, y1: y0, x2: x1, y2: y1, red + [("stroke-dasharray", .text("4 3"))])
            svg.circle(cx: x1, cy: y1, r: 5, red)
            placer.reserve(PixelBox.around(x: x0, y: y0, radius: 10))
            placer.reserve(PixelBox.around(x: x1, y: y1, radius: 6))
            let right = mark.fitted.x < floor.originX + 0.8 * w
            surveyLabels.append(PendingLabel(text: "\(mark.address) fits \(n(mark.offsetMeters, 2)) m away" + (mark.confirmed ? "" : ", not confirmed"), x: x1, y: y1, clearance: 8,
                                             style: [], fontSize: 10.5, bold: true, colour: surveyColour,
                                             directions: right ? [.southEast, .southWest, .northEast, .northWest, .east, .west, .south, .north]
                                                               : [.southWest, .southEast, .northWest, .northEast, .west, .east, .south, .north]))
        }

        // The suggested locator: a blue star.
        var suggestionLabels: [PendingLabel] = []
        if let s = suggestion {
            let cx = X(s.position.x), cy = Y(s.position.y)
            svg.polygon(star(cx: cx, cy: cy, outer: 11, inner: 4.6),
                        [("fill", .text(suggestionColour)), ("stroke", .text("#FFFFFF")), ("stroke-width", .number(1.5))])
            placer.reserve(PixelBox.around(x: cx, y: cy, radius: 11))
            let right = s.position.x < floor.originX + 0.7 * w
            suggestionLabels.append(PendingLabel(text: "+1 suggested", x: cx, y: cy, clearance: 12, style: [], fontSize: 11, bold: true,
                                                 colour: suggestionColour,
                                                 directions: right ? [.east, .southEast, .northEast, .west, .southWest, .northWest, .south, .north]
                                                                   : [.west, .southWest, .northWest, .east, .southEast, .northEast, .south, .north]))
        }

        // Labels, most constrained first: off-floor items, locators, flagged locators, the suggestion, zones.
        svg.open("g", [("id", .text("labels"))])
        for label in offFloorLabels + locatorLabels + surveyLabels + suggestionLabels + zoneLabels {
            let p = placer.place(label.text, fontSize: label.fontSize, bold: label.bold, x: label.x, y: label.y,
                                 clearance: label.clearance, directions: label.directions)
            if let leader = p.leader {
                svg.line(x1: leader.x1, y1: leader.y1, x2: leader.x2, y2: leader.y2,
                         [("stroke", .text(label.colour)), ("stroke-width", .number(0.8)), ("stroke-opacity", .number(0.8))])
            }
            var style = halo + [("font-size", .number(label.fontSize))]
            if label.bold { style.append(("font-weight", .text("bold"))) }
            style += label.style + [("fill", .text(label.colour)), ("text-anchor", .text(p.textAnchor))]
            svg.text(label.text, x: p.x, y: p.baseline, style)
        }
        svg.close()

        svg.open("g", [("id", .text("legend"))])
        if sideLegend {
            verticalLegend(&svg, x: legendX, top: legendTop, heat: heat, items: items)
        } else {
            horizontalLegend(&svg, x: legendX, top: legendTop, heat: heat, items: items)
        }
        svg.close()
        svg.open("g", [("id", .text("warnings"))])
        var y = warningsTop + 12
        for block in warnings {
            for line in block {
                svg.text(line, x: left, y: y, [("font-size", .number(11)), ("fill", .text("#B2182B"))])
                y += 15
            }
            y += 4
        }
        svg.close()
        return svg.bytes
    }

    /// A name for a map label: at most `mapLabelCharacters`, longer ones cut with "…" (the text
    /// summary and `locus lint` give them whole).
    static func shortened(_ name: String) -> String {
        name.count <= mapLabelCharacters ? name : String(name.prefix(mapLabelCharacters - 1)) + "…"
    }

    /// The longest name drawn whole on the map.
    static let mapLabelCharacters = 40

    /// Whether (x, y) lies on the floor rectangle (edges included), metres.
    static func isOnFloor(_ x: Double, _ y: Double, _ floor: Floor) -> Bool {
        x >= floor.originX && x <= floor.originX + floor.widthMeters && y >= floor.originY && y <= floor.originY + floor.heightMeters
    }

    /// A five-pointed star's ten vertices around (cx, cy), point up.
    static func star(cx: Double, cy: Double, outer: Double, inner: Double) -> [(x: Double, y: Double)] {
        (0..<10).map { i in
            let r = i % 2 == 0 ? outer : inner, angle = Double(i) * 0.1 * 2 * Double.pi
            return (cx + r * sine(angle), cy - r * cosine(angle))
        }
    }

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
