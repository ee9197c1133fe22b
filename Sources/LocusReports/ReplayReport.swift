#if canImport(Glibc)
import Glibc
#endif
import LocusCore
import LocusEvaluation
import LocusIO
import LocusNumerics
import LocusZones

/// `locus replay --truth … --report OUT.svg`: one self-contained SVG of a replay judged against truth,
/// readable when printed (white background, units on every axis).
///
/// Top to bottom: the title with the run's figures; per floor, the map (floor outline, zones,
/// locators) with each tag's estimated track drawn over its truth track (grey, dashed); the
/// horizontal error over time, one line per tag; the error CDF with p50 and p95 marked; the zone
/// score; the per-tag table (fixes, compared, RMSE, p50, p95, max — the `--json` `per_tag` values).
/// Elements carry `class` (and `data-tag`, `data-column`) attributes so that tools and tests can
/// read the report structurally. Tracks and error series are thinned to at most 1,500 points per
/// tag (every k-th fix); at most 12 tags are drawn (all are in the table).
enum ReplayReport {
    static let maximumPoints = 1_500
    static let maximumDrawnTags = 12
    static let palette = ["#1F77B4", "#D62728", "#2CA02C", "#9467BD", "#FF7F0E", "#17BECF",
                          "#8C564B", "#E377C2", "#7F7F7F", "#BCBD22", "#393B79", "#AD494A"]

    static func svg(site: Site, summary: ReplaySummary, evaluation e: ReplayEvaluation, trace: String) -> [UInt8] {
        let width = 1_100.0, left = 70.0
        let drawn = Array(e.tagOrder.prefix(maximumDrawnTags))
        let colour = Dictionary(uniqueKeysWithValues: drawn.enumerated().map { ($1, palette[$0 % palette.count]) })
        let floors = site.floors.filter { f in e.tagOrder.contains { e.tags[$0]?.floor == f.id } }

        // Layout: every panel's top, then the height.
        var y = 96.0
        var mapFrames: [(floor: Floor, top: Double, scale: Double, bounds: (x0: Double, y0: Double, x1: Double, y1: Double))] = []
        for floor in floors {
            let b = bounds(floor: floor, evaluation: e)
            let scale = min(640 / max(0.1, b.x1 - b.x0), 420 / max(0.1, b.y1 - b.y0))
            mapFrames.append((floor, y + 24, scale, b))
            y += 24 + (b.y1 - b.y0) * scale + 60
        }
        let errorTop = y + 24, errorHeight = 190.0
        y = errorTop + errorHeight + 56
        let cdfTop = y + 24, cdfHeight = 220.0
        y = cdfTop + cdfHeight + 56
        let tableTop = y + 24
        let rows = min(e.tagOrder.count, 60)
        let height = tableTop + 22 * Double(rows + 1) + (e.tagOrder.count > rows ? 24 : 0) + 30

        var svg = SVGDocument(width: width, height: height.rounded(.up))
        svg.rect(x: 0, y: 0, width: width, height: height.rounded(.up), [("fill", .text("#FFFFFF"))])
        let small: [(String, SVGDocument.Value)] = [("font-size", .number(11)), ("fill", .text("#333333"))]
        // Map labels sit on tracks: a white outline painted under the glyphs keeps them readable
        // wherever a track crosses (as the geometry heatmap's labels).
        let halo: [(String, SVGDocument.Value)] = [("stroke", .text("#FFFFFF")), ("stroke-width", .number(3)),
                                                   ("stroke-linejoin", .text("round")), ("paint-order", .text("stroke"))]
        let heading: [(String, SVGDocument.Value)] = [("font-size", .number(14)), ("font-weight", .text("bold")), ("fill", .text("#111111"))]

        // Title and figures.
        svg.text("Locus replay report — \(trace)", x: left, y: 32, [("font-size", .number(18)), ("font-weight", .text("bold")), ("fill", .text("#111111"))])
        let accuracy = e.accuracyHeading
        func m(_ v: Double?) -> String { v.map { DecimalText.string($0, decimals: 3) } ?? "n/a" }
        var line = "\(plural(summary.fixes, "fix", "fixes")) of \(plural(e.tagOrder.count, "tag")) · filter \(summary.filter)\(summary.smooth ? " + smoother" : "")"
        line += " · \(plural(accuracy.compared, "fix", "fixes")) compared with truth"
        if summary.skipped.total > 0 { line += " · \(plural(summary.skipped.total, "row")) skipped" }
        svg.text(line, x: left, y: 54, [("font-size", .number(12.5)), ("fill", .text("#444444"))])
        svg.text(accuracy.errors,
                 x: left, y: 74, [("font-size", .number(13)), ("font-weight", .text("bold")), ("fill", .text("#1F2D5A")), ("class", .text("figures"))])

        // Maps.
        for frame in mapFrames {
            let (floor, top, scale, b) = frame
            func X(_ x: Double) -> Double { left + (x - b.x0) * scale }
            func Y(_ yy: Double) -> Double { top + (b.y1 - yy) * scale }
            svg.text("Floor \(floor.id)\(floor.name.isEmpty ? "" : " (\(floor.name))"): estimated tracks over truth (grey, dashed)", x: left, y: top - 8, heading)
            svg.open("g", [("class", .text("map")), ("data-floor", .text(floor.id.rawValue))])
            svg.rect(x: X(b.x0), y: Y(b.y1), width: (b.x1 - b.x0) * scale, height: (b.y1 - b.y0) * scale,
                     [("fill", .text("#FAFAFA")), ("stroke", .text("#BBBBBB"))])
            if floor.widthMeters > 0 && floor.heightMeters > 0 {
                svg.rect(x: X(floor.originX), y: Y(floor.originY + floor.heightMeters), width: floor.widthMeters * scale,
                         height: floor.heightMeters * scale, [("fill", .text("none")), ("stroke", .text("#333333")), ("stroke-width", .number(1.5))])
            }
            axes(&svg, x0: X(b.x0), y0: Y(b.y0), x1: X(b.x1), y1: Y(b.y1), xRange: (b.x0, b.x1), yRange: (b.y0, b.y1),
                 xLabel: "x (m)", yLabel: "y (m)")
            for zone in floor.zones {
                svg.polygon(zone.polygon.map { (X($0.x), Y($0.y)) },
                            [("fill", .text("#E8EEF8")), ("fill-opacity", .number(0.6)), ("stroke", .text("#1F2D5A")),
                             ("stroke-dasharray", .text("6 3")), ("class", .text("zone"))])
            }
            for tag in drawn where e.tags[tag]?.floor == floor.id {
                let track = thinned(e.tags[tag]?.track ?? [])
                let truthPoints = track.compactMap { $0.truth.map { (X($0.x), Y($0.y)) } }
                if truthPoints.count > 1 {
                    svg.polygon(truthPoints, closed: false, [("fill", .text("none")), ("stroke", .text("#888888")), ("stroke-width", .number(1)),
                                                              ("stroke-dasharray", .text("3 2")), ("class", .text("truth-track")),
                                                              ("data-tag", .text(tag.rawValue))])
                }
                svg.polygon(track.map { (X($0.x), Y($0.y)) }, closed: false,
                            [("fill", .text("none")), ("stroke", .text(colour[tag] ?? "#000000")), ("stroke-width", .number(1.3)),
                             ("class", .text("track")), ("data-tag", .text(tag.rawValue))])
            }
            for l in floor.locators {
                svg.circle(cx: X(l.position.x), cy: Y(l.position.y), r: 5, [("fill", .text("#111111")), ("stroke", .text("#FFFFFF")),
                                                                              ("class", .text("locator"))])
            }
            // The labels last, over the tracks, each with its halo.
            for zone in floor.zones {
                let cx = zone.polygon.reduce(0) { $0 + $1.x } / Double(max(1, zone.polygon.count))
                let cy = zone.polygon.reduce(0) { $0 + $1.y } / Double(max(1, zone.polygon.count))
                svg.text(zone.name.isEmpty ? zone.id.rawValue : zone.name, x: X(cx), y: Y(cy),
                         small + halo + [("text-anchor", .text("middle")), ("font-style", .text("italic")), ("class", .text("zone-label"))])
            }
            for l in floor.locators {
                svg.text(l.address.description, x: X(l.position.x) + 7, y: Y(l.position.y) - 6, small + halo + [("class", .text("locator-label"))])
            }
            svg.close()
            // The tags' colours beside the map (clear of the locators' labels at its right edge).
            let lx = left + (b.x1 - b.x0) * scale + 70
            var ly = top + 10
            for tag in drawn where e.tags[tag]?.floor == floor.id {
                svg.line(x1: lx, y1: ly - 4, x2: lx + 24, y2: ly - 4, [("stroke", .text(colour[tag] ?? "#000000")), ("stroke-width", .number(3))])
                svg.text(tag.rawValue, x: lx + 30, y: ly, small)
                ly += 18
            }
            svg.line(x1: lx, y1: ly - 4, x2: lx + 24, y2: ly - 4, [("stroke", .text("#888888")), ("stroke-dasharray", .text("3 2"))])
            svg.text("truth", x: lx + 30, y: ly, small)
            if e.tagOrder.count > drawn.count {
                svg.text("(\(e.tagOrder.count - drawn.count) more tags in the table)", x: lx, y: ly + 20, small)
            }
        }

        // Error over time.
        let span = e.timeSpanSeconds
        // 2 % of the span on each side: the first and last points stay clear of the axes' lines.
        let first = span?.first ?? 0, last = max(span?.last ?? 1, first + 1e-3)
        let t0 = first - 0.02 * (last - first), t1 = last + 0.02 * (last - first)
        let maxError = max(1e-3, e.sortedErrors.last ?? 0.1)
        let plotWidth = 960.0
        svg.text("Horizontal error over time", x: left, y: errorTop - 8, heading)
        func TX(_ t: Double) -> Double { left + (t - t0) / (t1 - t0) * plotWidth }
        func EY(_ v: Double) -> Double { errorTop + errorHeight - v / maxError * errorHeight }
        axes(&svg, x0: left, y0: errorTop + errorHeight, x1: left + plotWidth, y1: errorTop, xRange: (t0, t1), yRange: (0, maxError),
             xLabel: "time (s)", yLabel: "error (m)")
        for tag in drawn {
            let series = thinned(e.tags[tag]?.track ?? []).compactMap { p in p.error.map { (TX(p.t), EY($0)) } }
            guard series.count > 1 else { continue }
            svg.polygon(series, closed: false, [("fill", .text("none")), ("stroke", .text(colour[tag] ?? "#000000")), ("stroke-width", .number(1)),
                                                ("class", .text("error-series")), ("data-tag", .text(tag.rawValue))])
        }

        // CDF with p50 and p95.
        let cdfWidth = 440.0
        let sorted = e.sortedErrors
        svg.text("Error CDF (all fixes compared)", x: left, y: cdfTop - 8, heading)
        func CX(_ v: Double) -> Double { left + v / maxError * cdfWidth }
        func CY(_ q: Double) -> Double { cdfTop + cdfHeight - q * cdfHeight }
        axes(&svg, x0: left, y0: cdfTop + cdfHeight, x1: left + cdfWidth, y1: cdfTop, xRange: (0, maxError), yRange: (0, 1),
             xLabel: "horizontal error (m)", yLabel: "fraction of fixes")
        if !sorted.isEmpty {
            let stride = max(1, sorted.count / 600)
            var points: [(x: Double, y: Double)] = [(CX(0), CY(0))]
            var k = 0
            while k < sorted.count {
                points.append((CX(sorted[k]), CY(Double(k + 1) / Double(sorted.count))))
                k += stride
            }
            points.append((CX(sorted[sorted.count - 1]), CY(1)))
            svg.polygon(points, closed: false, [("fill", .text("none")), ("stroke", .text("#1F2D5A")), ("stroke-width", .number(2)), ("class", .text("cdf"))])
            for (q, name) in [(0.5, "p50"), (0.95, "p95")] {
                guard let v = Quantile.nearestRank(sorted: sorted, q) else { continue }
                svg.line(x1: CX(v), y1: CY(0), x2: CX(v), y2: CY(q), [("stroke", .text("#B2182B")), ("stroke-dasharray", .text("4 3")),
                                                                        ("class", .text("cdf-marker")), ("data-q", .number(q))])
                svg.line(x1: CX(0), y1: CY(q), x2: CX(v), y2: CY(q), [("stroke", .text("#B2182B")), ("stroke-dasharray", .text("4 3"))])
                // The curve rises through (v, q): nothing of it lies below-right of that point (errors
                // above v are reached at fractions above q) nor above-left; the label goes below-right,
                // or above-left when it would leave the plot on the right.
                let text = "\(name) \(DecimalText.string(v, decimals: 3)) m"
                let fits = CX(v) + 5 + LabelPlacer.textWidth(text, fontSize: 11, bold: true) <= left + cdfWidth
                svg.text(text, x: fits ? CX(v) + 5 : CX(v) - 5, y: fits ? CY(q) + 14 : CY(q) - 5,
                         halo + [("font-size", .number(11)), ("fill", .text("#B2182B")), ("font-weight", .text("bold")),
                                 ("text-anchor", .text(fits ? "start" : "end")), ("class", .text("cdf-label"))])
            }
        }

        // Zone score beside the CDF.
        let zx = left + cdfWidth + 70
        svg.text("Zone transitions vs truth", x: zx, y: cdfTop - 8, heading)
        // A site without zones has no transition to score: one line says so, rather than a panel of zeros.
        let hasZones = floors.contains { !$0.zones.isEmpty }
        let lines = !hasZones ? ["The site has no zones on these floors: no zone transitions to score."] : e.zoneScoreLines
        for (k, text) in lines.enumerated() {
            svg.text(text, x: zx, y: cdfTop + 16 + 22 * Double(k), [("font-size", .number(12.5)), ("fill", .text("#222222")), ("class", .text("zone-score"))])
        }

        // Per-tag table.
        svg.text("Per tag", x: left, y: tableTop - 8, heading)
        let columns: [(key: String, title: String, x: Double)] = [("tag", "tag", 0), ("floor", "floor", 150), ("fixes", "fixes", 260),
                                                                  ("compared", "compared", 350), ("rmse_m", "RMSE (m)", 460),
                                                                  ("p50_m", "p50 (m)", 560), ("p95_m", "p95 (m)", 660), ("max_m", "max (m)", 760)]
        for c in columns {
            svg.text(c.title, x: left + c.x, y: tableTop + 12, [("font-size", .number(12)), ("font-weight", .text("bold")), ("fill", .text("#111111"))])
        }
        svg.line(x1: left, y1: tableTop + 17, x2: left + 840, y2: tableTop + 17, [("stroke", .text("#333333"))])
        for (k, tag) in e.tagOrder.prefix(rows).enumerated() {
            guard let f = e.tags[tag] else { continue }
            let h = f.horizontal
            func cell(_ v: Double?) -> String { h == nil ? "n/a" : m(v) }
            let values: [String: String] = [
                "tag": tag.rawValue, "floor": f.floor?.rawValue ?? "", "fixes": "\(f.fixes)", "compared": "\(f.compared)",
                "rmse_m": cell(h?.rmse), "p50_m": cell(h?.p50), "p95_m": cell(h?.p95), "max_m": cell(h?.max),
            ]
            let rowY = tableTop + 34 + 22 * Double(k)
            if k % 2 == 1 { svg.rect(x: left - 4, y: rowY - 15, width: 848, height: 22, [("fill", .text("#F3F3F3"))]) }
            for c in columns {
                svg.text(values[c.key] ?? "", x: left + c.x, y: rowY,
                         [("font-size", .number(12)), ("fill", .text(c.key == "tag" ? colour[tag] ?? "#111111" : "#111111")),
                          ("class", .text("table-cell")), ("data-tag", .text(tag.rawValue)), ("data-column", .text(c.key))])
            }
        }
        if e.tagOrder.count > rows {
            svg.text("… and \(e.tagOrder.count - rows) more tags (all in --json per_tag)", x: left, y: tableTop + 34 + 22 * Double(rows), small)
        }
        return svg.bytes
    }

    /// What a floor's map shows: the floor rectangle when it has one, else the locators, zones and
    /// tracks, with a margin; metres.
    static func bounds(floor: Floor, evaluation e: ReplayEvaluation) -> (x0: Double, y0: Double, x1: Double, y1: Double) {
        var xs: [Double] = [], ys: [Double] = []
        if floor.widthMeters > 0 && floor.heightMeters > 0 {
            xs += [floor.originX, floor.originX + floor.widthMeters]
            ys += [floor.originY, floor.originY + floor.heightMeters]
        }
        for l in floor.locators { xs.append(l.position.x); ys.append(l.position.y) }
        for z in floor.zones { for p in z.polygon { xs.append(p.x); ys.append(p.y) } }
        for tag in e.tagOrder where e.tags[tag]?.floor == floor.id {
            for p in thinned(e.tags[tag]?.track ?? []) { xs.append(p.x); ys.append(p.y) }
        }
        let x0 = (xs.min() ?? 0) - 0.5, x1 = (xs.max() ?? 1) + 0.5, y0 = (ys.min() ?? 0) - 0.5, y1 = (ys.max() ?? 1) + 0.5
        return (x0, y0, x1, y1)
    }

    /// At most `maximumPoints` of `track`: every k-th point, and the last.
    static func thinned<T>(_ track: [T]) -> [T] {
        guard track.count > maximumPoints else { return track }
        let stride = (track.count + maximumPoints - 1) / maximumPoints
        var out: [T] = []
        var k = 0
        while k < track.count { out.append(track[k]); k += stride }
        if let last = track.last, (track.count - 1) % stride != 0 { out.append(last) }
        return out
    }

    /// A frame with ticks and labels: x from x0 to x1 (pixels) for values xRange, y from y0 (bottom)
    /// to y1 (top) for yRange.
    static func axes(_ svg: inout SVGDocument, x0: Double, y0: Double, x1: Double, y1: Double,
                     xRange: (Double, Double), yRange: (Double, Double), xLabel: String, yLabel: String) {
        let tick: [(String, SVGDocument.Value)] = [("font-size", .number(10.5)), ("fill", .text("#444444"))]
        svg.rect(x: x0, y: y1, width: x1 - x0, height: y0 - y1, [("fill", .text("none")), ("stroke", .text("#666666"))])
        for (value, position) in ticks(xRange, pixels: (x0, x1), count: 10) {
            svg.line(x1: position, y1: y0, x2: position, y2: y0 + 4, [("stroke", .text("#666666"))])
            svg.text(label(value), x: position, y: y0 + 16, tick + [("text-anchor", .text("middle"))])
        }
        for (value, position) in ticks(yRange, pixels: (y0, y1), count: 6) {
            svg.line(x1: x0 - 4, y1: position, x2: x0, y2: position, [("stroke", .text("#666666"))])
            svg.text(label(value), x: x0 - 7, y: position + 4, tick + [("text-anchor", .text("end"))])
        }
        svg.text(xLabel, x: (x0 + x1) / 2, y: y0 + 32, tick + [("text-anchor", .text("middle"))])
        svg.text(yLabel, x: x0 - 48, y: (y0 + y1) / 2, tick + [("text-anchor", .text("middle")),
                                                                   ("transform", .text("rotate(-90 \(x0 - 48) \((y0 + y1) / 2))"))])
    }

    /// Ticks at a nice step (1, 2 or 5 × 10ᵏ) over `range`, with their pixel positions.
    static func ticks(_ range: (Double, Double), pixels: (Double, Double), count: Double) -> [(Double, Double)] {
        let span = range.1 - range.0
        guard span > 0, span.isFinite else { return [] }
        let raw = span / count
        let power = pow(10, (log10(raw)).rounded(.down))
        let step = [1.0, 2, 5, 10].map { $0 * power }.first { span / $0 <= count } ?? 10 * power
        var out: [(Double, Double)] = []
        var v = (range.0 / step).rounded(.up) * step
        while v <= range.1 + step * 1e-9 {
            out.append((v, pixels.0 + (v - range.0) / span * (pixels.1 - pixels.0)))
            v += step
        }
        return out
    }

    /// A tick label: as few decimals as the value needs (at most 3).
    static func label(_ v: Double) -> String {
        for d in 0...3 {
            let text = DecimalText.string(v, decimals: d)
            if abs((Double(text) ?? v) - v) < 1e-9 { return text }
        }
        return DecimalText.string(v, decimals: 3)
    }
}
