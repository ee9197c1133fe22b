import LocusIO
import LocusSolvers

/// Which marker swatches the heatmap's legend lists.
struct LegendItems {
    /// Locators a cell needs in range (3 planar, 4 spatial), for the "no fix" swatch.
    var locatorsNeeded: Int
    /// A suggested locator is drawn.
    var suggestion: Bool
    /// Flagged locators of the survey check are drawn.
    var survey: Bool
    /// Some locator or zone lies (partly) off the floor.
    var offFloor: Bool
    /// The locators' hull is outlined (a TDoA map).
    var hull: Bool
    /// The map is of differences: no-fix cells hear too few locators rather than range to too few.
    var tdoa: Bool

    init(report: GeometryReport, suggestion: Bool, survey: Bool, offFloor: Bool, hull: Bool = false) {
        locatorsNeeded = report.locatorsNeeded
        self.suggestion = suggestion
        self.survey = survey
        self.offFloor = offFloor
        self.hull = hull
        tdoa = report.options.measurement == .tdoa
    }
}

extension GeometryHeatmap {
    static let legendTick: Style = [("font-size", .number(11)), ("fill", .text("#222222"))]
    static let legendNote: Style = [("font-size", .number(10.5)), ("fill", .text("#444444"))]

    /// Lines under the legend title: the accuracy's definition, what the greens mean.
    static func legendNotes(_ heat: GeometryHeatScale, tdoa: Bool = false) -> [String] {
        var notes: [String] = []
        if let sigma = heat.sigmaMeters { notes.append("= HDOP × \(tdoa ? "arrival" : "range") σ \(n(sigma * 100, 1)) cm") }
        notes.append(heat.coverageNote)
        return notes
    }

    /// The vertical legend beside the map: the stepped colour bar, best at the bottom, the "very poor"
    /// band on top when the map has such cells, ticks with the coverage limit marked, then the marker
    /// swatches. Returns the legend's lowest y, px.
    @discardableResult
    static func verticalLegend(_ svg: inout SVGDocument, x lx: Double, top: Double, heat: GeometryHeatScale, items: LegendItems) -> Double {
        svg.text(heat.title, x: lx, y: top + 4, [("font-size", .number(13)), ("font-weight", .text("bold")), ("fill", .text("#111111"))])
        let notes = legendNotes(heat, tdoa: items.tdoa)
        for (i, note) in notes.enumerated() { svg.text(note, x: lx, y: top + 19 + 14 * Double(i), legendNote) }
        let barTop = (top + 19 + 14 * Double(notes.count - 1) + 10).rounded(), barBottom = barTop + 300
        let band = heat.hasAbove ? 26.0 : 0
        let length = barBottom - barTop - band
        // Whole-pixel class edges shared by neighbours, as in the map.
        svg.open("g", [("id", .text("legend-bar")), ("shape-rendering", .text("crispEdges"))])
        for c in 0..<GeometryHeatScale.classes {
            let y0 = (barBottom - Double(c) / Double(GeometryHeatScale.classes) * length).rounded()
            let y1 = (barBottom - Double(c + 1) / Double(GeometryHeatScale.classes) * length).rounded()
            svg.rect(x: lx, y: y1, width: 20, height: y0 - y1, [("fill", .text(heat.colour(ofClass: c)))])
        }
        if heat.hasAbove { svg.rect(x: lx, y: barTop, width: 20, height: band, [("fill", .text(GeometryHeatScale.aboveColour))]) }
        svg.close()
        svg.rect(x: lx, y: barTop, width: 20, height: barBottom - barTop, [("fill", .text("none")), ("stroke", .text("#333333"))])
        if heat.hasAbove { svg.text(heat.aboveLabel, x: lx + 29, y: barTop + 17, legendTick) }
        for tick in heat.ticks(words: true) {
            let y = barBottom - heat.fraction(tick.value) * length
            svg.line(x1: lx + 20, y1: y, x2: lx + 25, y2: y, [("stroke", .text("#333333"))])
            svg.text(tick.label, x: lx + 29, y: y + 4, legendTick)
            if tick.isCoverageLimit {
                svg.line(x1: lx - 4, y1: y, x2: lx + 24, y2: y,
                         [("class", .text("coverage-limit")), ("stroke", .text("#111111")), ("stroke-width", .number(2))])
            }
        }
        return markerLegend(&svg, x: lx, y: barBottom + 30, rowHeight: 22, columns: false, items: items)
    }

    /// The horizontal legend below a flat map: the colour bar left to right (best first, the "very
    /// poor" band at the right end when present), markers to its right. Returns its lowest y, px.
    @discardableResult
    static func horizontalLegend(_ svg: inout SVGDocument, x lx: Double, top: Double, heat: GeometryHeatScale, items: LegendItems) -> Double {
        let barWidth = 330.0, barHeight = 16.0
        let band = heat.hasAbove ? 30.0 : 0
        let length = barWidth - band
        svg.text(heat.title, x: lx, y: top - 8, [("font-size", .number(13)), ("font-weight", .text("bold")), ("fill", .text("#111111"))])
        svg.text(legendNotes(heat, tdoa: items.tdoa).joined(separator: " · "), x: lx + LabelPlacer.textWidth(heat.title, fontSize: 13, bold: true) + 10,
                 y: top - 8, legendNote)
        svg.open("g", [("id", .text("legend-bar")), ("shape-rendering", .text("crispEdges"))])
        for c in 0..<GeometryHeatScale.classes {
            let x0 = (lx + Double(c) / Double(GeometryHeatScale.classes) * length).rounded()
            let x1 = (lx + Double(c + 1) / Double(GeometryHeatScale.classes) * length).rounded()
            svg.rect(x: x0, y: top, width: x1 - x0, height: barHeight, [("fill", .text(heat.colour(ofClass: c)))])
        }
        if heat.hasAbove { svg.rect(x: lx + length, y: top, width: band, height: barHeight, [("fill", .text(GeometryHeatScale.aboveColour))]) }
        svg.close()
        svg.rect(x: lx, y: top, width: barWidth, height: barHeight, [("fill", .text("none")), ("stroke", .text("#333333"))])
        let tick: Style = legendTick + [("text-anchor", .text("middle"))]
        // Numbers under the ticks; one that would touch a label already kept is left out (the coverage
        // limit's is kept first).
        let ticks = heat.ticks(words: false)
        func span(_ t: GeometryHeatScale.Tick) -> (Double, Double) {
            let x = lx + heat.fraction(t.value) * length, half = LabelPlacer.textWidth(t.label, fontSize: 11, bold: false) / 2
            return (x - half - 2, x + half + 2)
        }
        var kept = ticks.filter(\.isCoverageLimit).map(span)
        let aboveText = "> \(n(heat.poorLimit, heat.poorLimit == heat.poorLimit.rounded() ? 0 : heat.decimals))"
        if heat.hasAbove {
            let half = LabelPlacer.textWidth(aboveText, fontSize: 11, bold: false) / 2
            kept.append((lx + barWidth - band / 2 - half - 2, lx + barWidth - band / 2 + half + 2))
        }
        for t in ticks {
            let x = lx + heat.fraction(t.value) * length
            svg.line(x1: x, y1: top + barHeight, x2: x, y2: top + barHeight + 5, [("stroke", .text("#333333"))])
            let s = span(t)
            if !t.isCoverageLimit {
                guard !kept.contains(where: { s.0 < $0.1 && $0.0 < s.1 }) else { continue }
                kept.append(s)
            }
            svg.text(t.label, x: x, y: top + barHeight + 17, tick)
            if t.isCoverageLimit {
                svg.line(x1: x, y1: top - 4, x2: x, y2: top + barHeight + 4,
                         [("class", .text("coverage-limit")), ("stroke", .text("#111111")), ("stroke-width", .number(2))])
                svg.text("coverage limit", x: x, y: top + barHeight + 31, tick)
            }
        }
        if heat.hasAbove {
            svg.text(aboveText, x: lx + barWidth - band / 2, y: top + barHeight + 17, tick)
            svg.text("very poor", x: lx + barWidth - band / 2, y: top + barHeight + 31, tick)
        }
        let markersBottom = markerLegend(&svg, x: lx + barWidth + 40, y: top + 12, rowHeight: 22, columns: true, items: items)
        return max(top + barHeight + 35, markersBottom)
    }

    /// Swatches for no fix, locator, zone, suggested locator, flagged locator and off-floor items, in
    /// one column or in columns of two rows. Returns the lowest y, px.
    static func markerLegend(_ svg: inout SVGDocument, x lx: Double, y y0: Double, rowHeight: Double, columns: Bool,
                             items: LegendItems) -> Double {
        var count = 0, bottom = y0
        var extra = 0.0   // a two-line item pushes the next one down in a column
        func position(lines: Int) -> (Double, Double) {
            defer {
                count += 1
                if !columns { extra += lines > 1 ? 14 : 0 }
            }
            let p: (Double, Double) = columns ? (lx + Double(count / 2) * 200, y0 + Double(count % 2) * (rowHeight + 14))
                                              : (lx, y0 + Double(count) * rowHeight + extra)
            bottom = max(bottom, p.1 + 14 * Double(lines - 1) + 4)
            return p
        }
        var (x, y) = position(lines: 2)
        svg.rect(x: x, y: y - 12, width: 20, height: 14, [("fill", .text(GeometryHeatScale.noFixColour)), ("stroke", .text("#333333"))])
        svg.text("no fix: < \(items.locatorsNeeded) locators", x: x + 29, y: y, legendTick)
        svg.text(items.tdoa ? "heard or degenerate" : "in range or degenerate", x: x + 29, y: y + 14, legendTick)
        (x, y) = position(lines: 1)
        svg.circle(cx: x + 10, cy: y - 4, r: 5.5, [("fill", .text(locatorColour)), ("stroke", .text("#FFFFFF")), ("stroke-width", .number(1.5))])
        svg.text("locator", x: x + 29, y: y, legendTick)
        (x, y) = position(lines: 1)
        svg.rect(x: x + 1, y: y - 12, width: 18, height: 13, [("fill", .text("none")), ("stroke", .text(zoneColour)),
                                                               ("stroke-width", .number(1.6)), ("stroke-dasharray", .text("6 3"))])
        svg.text("zone", x: x + 29, y: y, legendTick)
        if items.hull {
            (x, y) = position(lines: 2)
            svg.line(x1: x, y1: y - 4, x2: x + 20, y2: y - 4, [("stroke", .text(hullColour)), ("stroke-width", .number(1.8)),
                                                               ("stroke-dasharray", .text("10 3 2 3"))])
            svg.text("locators' hull: TDoA", x: x + 29, y: y, legendTick)
            svg.text("degrades fast outside it", x: x + 29, y: y + 14, legendTick)
        }
        if items.suggestion {
            (x, y) = position(lines: 1)
            svg.polygon(star(cx: x + 10, cy: y - 4, outer: 9, inner: 3.8), [("fill", .text(suggestionColour))])
            svg.text("suggested locator", x: x + 29, y: y, legendTick)
        }
        if items.survey {
            (x, y) = position(lines: 2)
            let red: Style = [("stroke", .text(surveyColour)), ("stroke-width", .number(2)), ("fill", .text("none"))]
            svg.circle(cx: x + 4, cy: y - 4, r: 5, red)
            svg.line(x1: x + 4, y1: y - 4, x2: x + 16, y2: y - 4, red + [("stroke-dasharray", .text("3 2"))])
            svg.circle(cx: x + 17, cy: y - 4, r: 3, red)
            svg.text("flagged locator → where", x: x + 29, y: y, legendTick)
            svg.text("the recording fits it", x: x + 29, y: y + 14, legendTick)
        }
        if items.offFloor {
            (x, y) = position(lines: 2)
            svg.polygon([(x + 17, y - 4), (x + 5, y - 11), (x + 5, y + 3)],
                        [("fill", .text(offFloorColour)), ("stroke", .text("#FFFFFF")), ("stroke-width", .number(1.2))])
            svg.text("off the floor: drawn at its", x: x + 29, y: y, legendTick)
            svg.text("edge, pointing outwards", x: x + 29, y: y + 14, legendTick)
        }
        return bottom
    }
}
