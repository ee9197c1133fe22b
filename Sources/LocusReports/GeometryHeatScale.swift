import LocusSolvers

/// The heatmap's colour scale, fitted to the map's own range: which colour a cell gets, and the
/// legend's bar, ticks and marks.
///
/// The quantity is HDOP (unitless) or, with `--accuracy σ`, the expected horizontal accuracy
/// HDOP · σ in centimetres (`factor` = σ · 100 cm per unit of HDOP). The bar runs from `lower` (the
/// smallest value on the map, floored to the tick step) to `upper` (the largest, ceiled, but at most
/// the poor limit); the step is the finest 1, 2 or 5 × 10ᵏ giving at most 10 intervals. Cells above
/// the poor limit share one "very poor" colour (`hasAbove` says whether the map has any, and only
/// then does the legend show that band).
///
/// Colours keep an absolute meaning where it matters and a relative one where it helps:
/// - at and above the coverage limit (HDOP 2) they are absolute — yellow at the limit, orange a third
///   of the way to the poor limit (HDOP 3), red at the poor limit (HDOP 5), dark red above it;
/// - below the coverage limit the ColorBrewer RdYlGn greens are stretched over the map's range:
///   dark green at `lower`, and up to light green at `upper` when the whole map is covered (or up to
///   the yellow of the limit when the map goes beyond it). A good layout (HDOP 0.71–0.83) thus shows
///   where it is relatively weaker instead of one flat green, and never turns yellow or red.
///
/// Values are quantised to `classes` equal classes over [lower, upper] (the colour of a class is the
/// colour at its centre), so runs of equal colour can be merged into rectangles.
struct GeometryHeatScale: Equatable {
    /// Legend title: "HDOP" or "accuracy (cm)".
    var title: String
    /// The range σ of `--accuracy`, metres (nil: the scale shows HDOP).
    var sigmaMeters: Double?
    /// Value units per unit of HDOP: 1, or σ · 100 (centimetres).
    var factor: Double
    /// Value at the bar's start (best end), value units.
    var lower: Double
    /// Value at the bar's end, value units (≤ `poorLimit`).
    var upper: Double
    /// Tick step, value units (1, 2 or 5 × 10ᵏ).
    var step: Double
    /// Digits after the point in tick labels (enough for `step`).
    var decimals: Int
    /// The coverage limit (HDOP 2) in value units.
    var coverageLimit: Double
    /// The poor limit (HDOP 5) in value units.
    var poorLimit: Double
    /// The poor limit in HDOP, for the class test (exactly as the report counts poor cells).
    var poorHDOP: Double
    /// Whether some cell has HDOP above the poor limit (the legend then shows the "very poor" band).
    var hasAbove: Bool

    /// Colour classes along the bar.
    static let classes = 40
    /// Class of cells above the poor limit.
    static let aboveClass = classes
    /// Class of cells without a fix.
    static let noFixClass = classes + 1
    /// Colour of cells above the poor limit.
    static let aboveColour = "#7F0000"
    /// Colour of cells without a fix.
    static let noFixColour = "#C4C4C4"

    /// RdYlGn stops: dark green, green, light green, yellow (coverage limit), orange, red (poor limit).
    static let darkGreen = (0x00, 0x68, 0x37), green = (0x1A, 0x98, 0x50), lightGreen = (0xA6, 0xD9, 0x6A)
    static let yellow = (0xFE, 0xE0, 0x8B), orange = (0xFD, 0xAE, 0x61), red = (0xD7, 0x30, 0x27)

    /// The scale for `report`'s solvable cells; HDOP, or accuracy in cm when `sigmaMeters` is given.
    /// A map without any solvable cell gets the fixed 0.5–5 HDOP range.
    init(report: GeometryReport, sigmaMeters: Double?) {
        self.sigmaMeters = sigmaMeters
        factor = sigmaMeters.map { $0 * 100 } ?? 1
        title = sigmaMeters == nil ? "HDOP" : "accuracy (cm)"
        poorHDOP = report.options.poorHDOP
        coverageLimit = report.options.coverageHDOP * factor
        poorLimit = report.options.poorHDOP * factor
        var smallest = Double.infinity, largest = -Double.infinity
        for hdop in report.hdopMap.hdop {
            guard let h = hdop else { continue }
            smallest = min(smallest, h)
            largest = max(largest, h)
        }
        if !smallest.isFinite { (smallest, largest) = (0.5, report.options.poorHDOP) }
        hasAbove = largest > report.options.poorHDOP
        var low = smallest * factor
        let high = min(largest * factor, poorLimit)
        // A map of (nearly) one value still gets a bar: at least 10 % of its value wide.
        let minimumSpan = 0.1 * max(high, 1e-6)
        if high - low < minimumSpan { low = max(0, high - minimumSpan) }
        step = Self.niceStep(high - low, maximumIntervals: 10)
        lower = max(0, (low / step + 1e-9).rounded(.down) * step)
        var top = (high / step - 1e-9).rounded(.up) * step
        if top <= lower { top = lower + step }
        upper = min(top, max(poorLimit, lower + step))
        var d = 0, s = step
        while s < 1 - 1e-9 && d < 6 { s *= 10; d += 1 }
        decimals = d
    }

    /// The finest step 1, 2 or 5 × 10ᵏ that cuts `span` into at most `maximumIntervals` intervals
    /// (10ᵏ formed exactly, so 0.02 is 2 / 100, not 0.1 · 0.2).
    static func niceStep(_ span: Double, maximumIntervals: Double) -> Double {
        guard span > 0, span.isFinite else { return 1 }
        func step(_ m: Double, _ e: Int) -> Double {
            var power = 1.0
            for _ in 0..<abs(e) { power *= 10 }
            return e >= 0 ? m * power : m / power
        }
        // e: the smallest power of ten that fits; then 2 or 5 × 10^(e−1) may fit too.
        var e = 0
        while span / step(1, e) > maximumIntervals && e < 300 { e += 1 }
        while e > -12 && span / step(1, e - 1) <= maximumIntervals { e -= 1 }
        for m in [2.0, 5.0] where span / step(m, e - 1) <= maximumIntervals { return step(m, e - 1) }
        return step(1, e)
    }

    /// Colour class of a cell's HDOP: 0 ..< `classes` along the bar, `aboveClass` above the poor
    /// limit, `noFixClass` without a fix.
    func colourClass(_ hdop: Double?) -> Int {
        guard let h = hdop else { return Self.noFixClass }
        if h > poorHDOP { return Self.aboveClass }
        let t = (h * factor - lower) / (upper - lower)
        return min(max(Int((t * Double(Self.classes)).rounded(.down)), 0), Self.classes - 1)
    }

    /// Value (value units) at the centre of class `k`.
    func value(ofClass k: Int) -> Double {
        lower + (Double(k) + 0.5) / Double(Self.classes) * (upper - lower)
    }

    /// `#RRGGBB` of a colour class.
    func colour(ofClass k: Int) -> String {
        if k == Self.aboveClass { return Self.aboveColour }
        if k >= Self.noFixClass { return Self.noFixColour }
        let c = rgb(value(ofClass: k))
        return Self.hex(c.0, c.1, c.2)
    }

    /// The colour of a value (value units) on this scale, before quantisation.
    func rgb(_ v: Double) -> (Double, Double, Double) {
        let c = coverageLimit, p = poorLimit
        if upper <= c {
            return Self.ramp([Self.darkGreen, Self.green, Self.lightGreen], (v - lower) / (upper - lower))
        }
        if v <= c {
            guard c > lower else { return Self.ramp([Self.yellow], 0) }
            return Self.ramp([Self.darkGreen, Self.green, Self.lightGreen, Self.yellow], (v - lower) / (c - lower))
        }
        let orangeAt = c + (p - c) / 3
        if v <= orangeAt { return Self.ramp([Self.yellow, Self.orange], (v - c) / (orangeAt - c)) }
        return Self.ramp([Self.orange, Self.red], (v - orangeAt) / (p - orangeAt))
    }

    /// Piecewise-linear interpolation through equally spaced `stops` at t ∈ [0, 1] (clamped).
    static func ramp(_ stops: [(Int, Int, Int)], _ t: Double) -> (Double, Double, Double) {
        guard stops.count > 1 else { return (Double(stops[0].0), Double(stops[0].1), Double(stops[0].2)) }
        let u = min(max(t.isFinite ? t : 0, 0), 1) * Double(stops.count - 1)
        let i = min(Int(u.rounded(.down)), stops.count - 2)
        let f = u - Double(i)
        let a = stops[i], b = stops[i + 1]
        return (Double(a.0) + f * Double(b.0 - a.0), Double(a.1) + f * Double(b.1 - a.1), Double(a.2) + f * Double(b.2 - a.2))
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

    /// A legend tick: its value (value units), its label, and whether it is the coverage limit.
    struct Tick: Equatable {
        var value: Double
        var label: String
        var isCoverageLimit: Bool
    }

    /// The legend's ticks from `lower` to `upper`: the multiples of `step`, the coverage limit when it
    /// lies within the bar (its line is drawn there), and `upper` when it is not a multiple (a bar
    /// capped at the poor limit). A multiple closer than 0.6 steps to one of those two is dropped so
    /// labels do not collide. Labels: the number, plus "coverage limit" and "poor" at those limits
    /// when `words` is true.
    func ticks(words: Bool) -> [Tick] {
        let tolerance = 1e-6 * step
        var forced: [Double] = []
        if coverageLimit > lower + tolerance && coverageLimit <= upper + tolerance { forced.append(coverageLimit) }
        let lastMultiple = (upper / step + 1e-9).rounded(.down) * step
        if abs(lastMultiple - upper) > tolerance { forced.append(upper) }
        var values = forced
        var k = (lower / step - 1e-9).rounded(.up)
        while k * step <= upper + tolerance {
            let v = k * step
            if !forced.contains(where: { abs($0 - v) < 0.6 * step && abs($0 - v) > tolerance }) && !values.contains(where: { abs($0 - v) <= tolerance }) {
                values.append(v)
            }
            k += 1
        }
        values.sort()
        return values.map { v in
            let isCoverage = abs(v - coverageLimit) <= tolerance
            var label = GeometryHeatmap.n(v, decimals)
            if words && isCoverage { label += "  coverage limit" }
            if words && abs(v - poorLimit) <= tolerance { label += "  poor" }
            return Tick(value: v, label: label, isCoverageLimit: isCoverage)
        }
    }

    /// Position of value `v` along the bar, 0 at `lower` … 1 at `upper`.
    func fraction(_ v: Double) -> Double { (v - lower) / (upper - lower) }

    /// The "very poor" band's label: "> 5  very poor" (value units).
    var aboveLabel: String { "> \(GeometryHeatmap.n(poorLimit, poorLimit == poorLimit.rounded() ? 0 : decimals))  very poor" }

    /// A line under the legend title that says what the greens mean here: "all ≤ 2: covered" when the
    /// whole bar is below the coverage limit, else "≤ 2 covered".
    var coverageNote: String {
        let limit = GeometryHeatmap.n(coverageLimit, coverageLimit == coverageLimit.rounded() ? 0 : decimals)
        let unit = sigmaMeters == nil ? "" : " cm"
        return upper <= coverageLimit ? "all ≤ \(limit)\(unit): covered" : "≤ \(limit)\(unit): covered"
    }
}
