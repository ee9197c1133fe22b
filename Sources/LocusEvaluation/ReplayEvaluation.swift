import Locus
import LocusCore
import LocusIO
import LocusNumerics
import LocusZones

/// A replay judged against truth, fix by fix in release order: the run's accuracy (`AccuracyReport`,
/// the same arithmetic and order as before), each tag's (RMSE, percentiles, per-axis RMSE), the
/// error CDF, the zone transitions scored against those the same rules raise on the true positions
/// (`ZoneEventMatching`), and — for `--report` — each tag's track beside its truth.
///
/// Reference events: every fix's truth at its time (plus the truth shift) goes, in the fixes' order,
/// through zone judges of its own (one per floor, the engine's options), as the pipeline's fixes go
/// through the engine's; fixes without truth only move those judges' clock.
package struct ReplayEvaluation {
    /// One tag's figures.
    package struct TagFigures {
        package var fixes = 0
        var errors: [Double] = []
        var sumX = 0.0, sumY = 0.0, sumZ = 0.0
        /// Whether z was solved (a fix with z variance): then the z error counts.
        var solvesZ = false
        var firstSeconds = Double.infinity, lastSeconds = -Double.infinity
        /// The track for the report (every fix when kept): time, estimate, truth (nil when none).
        package var track: [(t: Double, x: Double, y: Double, truth: Point2?, error: Double?)] = []
        package var floor: FloorID?

        package var compared: Int { errors.count }
        func rmse(_ sum: Double) -> Double { compared > 0 ? (sum / Double(compared)).squareRoot() : 0 }

        /// The horizontal error figures `per_tag` and the replay report's table give, metres: RMSE
        /// √(Σ(dx² + dy²)/n), the nearest-rank p50, p95 and p99 and the largest error; nil when no fix
        /// was compared (figures of nothing are not measured). O(n log n): the errors are sorted once.
        package var horizontal: (rmse: Double, p50: Double?, p95: Double?, p99: Double?, max: Double?)? {
            guard compared > 0 else { return nil }
            let sorted = errors.sorted()
            return (rmse(sumX + sumY), Quantile.nearestRank(sorted: sorted, 0.5), Quantile.nearestRank(sorted: sorted, 0.95),
                    Quantile.nearestRank(sorted: sorted, 0.99), sorted.last)
        }
    }

    private var accuracy = AccuracyReport.Accumulator()
    package private(set) var tags: [TagID: TagFigures] = [:]
    /// Tags in order of first fix.
    package private(set) var tagOrder: [TagID] = []
    private var allErrors: [Double] = []
    private var referenceJudges: FloorJudges
    private var referenceTag: [TagID: Int] = [:]
    private(set) var reference: [ZoneEvent] = []
    private(set) var pipeline: [ZoneEvent] = []
    private let site: Site
    private let truth: GroundTruth
    private let shiftSeconds: Double
    private let keepsTracks: Bool
    /// Matching window of the zone score, seconds.
    let windowSeconds: Double

    /// - Throws: the zone judges' errors (the site was valid for the engine, so none in practice).
    package init(site: Site, truth: GroundTruth, shiftSeconds: Double, rateHertz: Double, keepsTracks: Bool, windowSeconds: Double) throws(LocusError) {
        self.site = site
        self.truth = truth
        self.shiftSeconds = shiftSeconds
        self.keepsTracks = keepsTracks
        self.windowSeconds = windowSeconds
        referenceJudges = try FloorJudges(floors: site.floors, options: ZoneJudgeOptions(positionPeriodSeconds: 1 / rateHertz))
    }

    /// One released fix, in release order.
    package mutating func add(_ fix: PositionFix) {
        let p = truth.position(tag: fix.tag, at: fix.timeSeconds + shiftSeconds)
        accuracy.add(fix, truth: p)
        if tags[fix.tag] == nil { tagOrder.append(fix.tag) }
        var figures = tags[fix.tag] ?? TagFigures()
        figures.fixes += 1
        figures.firstSeconds = min(figures.firstSeconds, fix.timeSeconds)
        figures.lastSeconds = max(figures.lastSeconds, fix.timeSeconds)
        figures.floor = figures.floor ?? fix.floor
        if fix.covariance.zz > 0 { figures.solvesZ = true }
        var error: Double? = nil
        if let p {
            let dx = fix.position.x - p.x, dy = fix.position.y - p.y, dz = fix.position.z - p.z
            let e = (dx * dx + dy * dy).squareRoot()
            figures.errors.append(e)
            figures.sumX += dx * dx
            figures.sumY += dy * dy
            figures.sumZ += dz * dz
            allErrors.append(e)
            error = e
        }
        if keepsTracks {
            figures.track.append((fix.timeSeconds, fix.position.x, fix.position.y, p.map { Point2(x: $0.x, y: $0.y) }, error))
        }
        tags[fix.tag] = figures
        // The reference: the same rules on the truth at the fix's time (without truth, only the clock).
        let tagIndex = referenceTag[fix.tag] ?? {
            let k = referenceTag.count
            referenceTag[fix.tag] = k
            return k
        }()
        let point = p.map { Point2(x: $0.x, y: $0.y) } ?? fix.position.horizontal
        try? referenceJudges.judge(ZoneFix(timeSeconds: fix.timeSeconds, tag: fix.tag, point: point), tag: TagIndex(tagIndex),
                                   floor: p == nil ? nil : site.floorIndex(of: fix.floor)?.rawValue ?? 0, into: &reference)
    }

    /// One event the pipeline released.
    package mutating func add(_ event: ZoneEvent) { pipeline.append(event) }

    /// Ends the reference judgement (no synthetic exit, SPEC §4.6).
    package mutating func finish() { referenceJudges.finish(into: &reference) }

    /// The run's accuracy (as `AccuracyReport(fixes:truth:)` computes it).
    var accuracyReport: AccuracyReport { accuracy.report }

    /// The accuracy as the replay report's heading prints it: the fixes compared with truth, and
    /// "horizontal error: RMSE 0.123 m · p50 … m · p95 … m · max … m" (3 decimals; "n/a" for each
    /// figure when nothing was compared: figures of nothing are not measured).
    package var accuracyHeading: (compared: Int, errors: String) {
        let a = accuracyReport
        func m(_ v: Double?) -> String { v.map { DecimalText.string($0, decimals: 3) } ?? "n/a" }
        return (a.compared, "horizontal error: RMSE \(m(a.measured?.rmseMeters)) m · p50 \(m(a.measured?.p50Meters)) m · "
                + "p95 \(m(a.measured?.p95Meters)) m · max \(m(a.measured?.maxMeters)) m")
    }

    /// The zone transitions scored (after `finish()`).
    var zoneScore: ZoneEventMatching { ZoneEventMatching(reference: reference, pipeline: pipeline, windowSeconds: windowSeconds) }

    /// Hours of tag time: Σ over tags of (last fix − first fix).
    var tagHours: Double { tags.values.reduce(0) { $0 + max(0, $1.lastSeconds - $1.firstSeconds) } / 3600 }

    /// Every compared error, sorted, metres.
    package var sortedErrors: [Double] { allErrors.sorted() }

    /// The earliest and the latest fix of any tag, seconds; nil before the first fix (the replay
    /// report's time axis).
    package var timeSpanSeconds: (first: Double, last: Double)? {
        let figures = tags.values
        guard let first = figures.map(\.firstSeconds).min(), let last = figures.map(\.lastSeconds).max() else { return nil }
        return (first, last)
    }

    // MARK: JSON

    /// `per_tag`: keyed by tag id — `fixes`, `compared`, `rmse_m`, `p50_m`, `p95_m`, `p99_m`, `max_m`,
    /// `rmse_x_m`, `rmse_y_m`, and `rmse_z_m` where z is solved (null figures when nothing compared).
    var perTagJSON: JSONValue {
        .object(tagOrder.map { tag in
            let f = tags[tag]!
            let h = f.horizontal
            func figure(_ v: Double?) -> JSONValue { f.compared > 0 ? v.map { .number($0, .fixed(4)) } ?? .null : .null }
            var members: [(String, JSONValue)] = [
                ("fixes", .integer(f.fixes)), ("compared", .integer(f.compared)),
                ("rmse_m", figure(h?.rmse)),
                ("p50_m", figure(h?.p50)), ("p95_m", figure(h?.p95)),
                ("p99_m", figure(h?.p99)), ("max_m", figure(h?.max)),
                ("rmse_x_m", figure(f.rmse(f.sumX))), ("rmse_y_m", figure(f.rmse(f.sumY))),
            ]
            if f.solvesZ { members.append(("rmse_z_m", figure(f.rmse(f.sumZ)))) }
            return (tag.rawValue, JSONValue.object(members))
        })
    }

    /// `cdf`: the error at each percent, `[{"p": 0.01, "error_m": …}, … {"p": 1, …}]` (nearest rank).
    var cdfJSON: JSONValue {
        let sorted = sortedErrors
        guard !sorted.isEmpty else { return .array([]) }
        return .array((1...100).map { k in
            let q = Double(k) / 100
            return .object([("p", .number(q, .fixed(2))), ("error_m", .number(Quantile.nearestRank(sorted: sorted, q) ?? 0, .fixed(4)))])
        })
    }

    /// `zone_score`: `reference`, `matched`, `missed`, `spurious`, `spurious_per_tag_hour`,
    /// `delay_p50_s`, `delay_p95_s` (null without matched pairs), per kind `enter`/`exit` delays,
    /// `window_s`, `tag_hours`.
    var zoneScoreJSON: JSONValue {
        let s = zoneScore
        func seconds(_ v: Double?) -> JSONValue { v.map { .number($0, .fixed(3)) } ?? .null }
        let hours = tagHours
        return .object([
            ("reference", .integer(s.reference)), ("matched", .integer(s.matched)),
            ("missed", .integer(s.missed)), ("spurious", .integer(s.spurious)),
            ("spurious_per_tag_hour", hours > 0 ? .number(Double(s.spurious) / hours, .fixed(3)) : .null),
            ("delay_p50_s", seconds(s.delaySeconds(quantile: 0.5))),
            ("delay_p95_s", seconds(s.delaySeconds(quantile: 0.95))),
            ("enter_delay_p50_s", seconds(s.delaySeconds(quantile: 0.5, of: .enter))),
            ("exit_delay_p50_s", seconds(s.delaySeconds(quantile: 0.5, of: .exit))),
            ("window_s", .number(windowSeconds, .fixed(3))),
            ("tag_hours", .number(hours, .fixed(4))),
        ])
    }

    /// The zone score as the replay report's panel prints it, one line each: reference transitions,
    /// matched within the window, missed, spurious (with the rate per tag-hour when there is tag
    /// time), the delays' p50 and p95, the enter and exit delays' p50 ("n/a" without matched pairs),
    /// and the tag time in hours.
    package var zoneScoreLines: [String] {
        let s = zoneScore
        let hours = tagHours
        func sec(_ v: Double?) -> String { v.map { DecimalText.string($0, decimals: 2) + " s" } ?? "n/a" }
        return [
            "reference transitions (same rules on truth): \(s.reference)",
            "matched within ±\(DecimalText.string(windowSeconds, decimals: 1)) s: \(s.matched)",
            "missed: \(s.missed)",
            "spurious (flicker): \(s.spurious)" + (hours > 0 ? " — \(DecimalText.string(Double(s.spurious) / hours, decimals: 2)) per tag-hour" : ""),
            "delay p50 \(sec(s.delaySeconds(quantile: 0.5))), p95 \(sec(s.delaySeconds(quantile: 0.95)))",
            "enter delay p50 \(sec(s.delaySeconds(quantile: 0.5, of: .enter))), exit delay p50 \(sec(s.delaySeconds(quantile: 0.5, of: .exit)))",
            "tag time: \(DecimalText.string(hours, decimals: 3)) h",
        ]
    }

    /// The zone score in one line of words.
    var zoneScoreText: String {
        let s = zoneScore
        func f(_ v: Double?) -> String { v.map { DecimalText.string($0, decimals: 2) + " s" } ?? "n/a" }
        let hours = tagHours
        var out = "zone transitions vs truth (±\(DecimalText.string(windowSeconds, decimals: 1)) s): \(s.reference) reference, \(s.matched) matched, "
        out += "\(s.missed) missed, \(s.spurious) spurious"
        if hours > 0 { out += " (\(DecimalText.string(Double(s.spurious) / hours, decimals: 2)) per tag-hour)" }
        out += "; delay p50 \(f(s.delaySeconds(quantile: 0.5))), p95 \(f(s.delaySeconds(quantile: 0.95)))"
        return out
    }
}
