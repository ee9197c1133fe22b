import LocusCore

/// What a recording can say about one locator's surveyed position: the principal directions of
/// the covariance of its position correction δ and the standard deviation along each (best first),
/// and the test that decides whether δ is flagged (from ranges and from range differences alike).
///
/// A range (or a difference) shifts with the locator's position along the tag's line of sight
/// (∂r/∂δᵢ = −uᵢⱼ), but the part of that shift common to all epochs is taken up by the locator's
/// bias, and more by the tags' positions: a displacement across the lines of sight is seen, one
/// along them trades against the bias. What is left is what the covariance says; a direction with
/// σ ≤ `thresholdMeters` is *checkable*.
struct SelfCalibrationPositionCheck: Sendable, Hashable {
    /// Unit directions (x, y on a planar floor; x, y, z otherwise), best determined first.
    var directions: [Vector3]
    /// σ of the correction along each direction, metres: the honest σ widened by
    /// t(ν, 0.975)/t(G − 1, 0.975) for the ν effective blocks (of G) it is estimated from (`surveyTest`).
    var sdMeters: [Double]
    /// The effective number of time blocks behind each direction's σ (`surveyTest`), [1, G − 1].
    var effectiveBlocks: [Double] = []
    /// Directions with σ at most this are checkable, metres.
    var thresholdMeters: Double
    /// Why the locator cannot be checked at all, when the redundancy, not the covariance, decides
    /// (e.g. "the other locators do not over-determine the tag"); nil otherwise.
    var notCheckableReason: String? = nil
    /// The test of δ on the checkable directions (`surveyTest`, ranges and differences alike); nil
    /// when nothing is checkable.
    var test: SurveyTest? = nil
    /// A flagged locator is moved along its checkable directions only (`SelfCalibration.surveyCheck`):
    /// per direction that is not checkable, the fitted component of δ left as surveyed; nil when not
    /// flagged.
    var remainder: [Remainder]? = nil

    /// A component of a flagged locator's fitted correction that the recording does not determine:
    /// its direction, the fitted component along it and that component's honest σ, metres.
    struct Remainder: Sendable, Hashable {
        var direction: Vector3
        var fittedMeters: Double
        var sdMeters: Double
    }

    /// The survey test of one locator (`surveyTest`): Hotelling's T² of δ
    /// projected on its p checkable directions vₖ, with the covariance from the spread of the
    /// recording's G time blocks (a jackknife floored at the formal), worth ν effective blocks,
    ///
    ///   T² = Σₖ (vₖ·δ)²/λₖ,  F = T²·(ν − p + 1)/(p·ν) ~ F(p, ν − p + 1) under "bias only",
    ///
    /// and the decision: flagged when p-value < `alpha` **and** |δ projected| ≥ `minimumEffectMeters`.
    struct SurveyTest: Sendable, Hashable {
        /// T² (dimensionless) and its degrees of freedom (p, ν − p + 1; ν the effective blocks, rounded down).
        var statistic: Double
        var degreesOfFreedom: (Int, Int)
        /// P(F(p, ν − p + 1) > F): the chance of a statistic this large on a correctly surveyed locator.
        var pValue: Double
        /// δᵀF⁻¹δ over all D directions, F the formal covariance (dimensionless): how much freeing δ
        /// lowers the fit's weighted sum of squares — what ranks flagged locators (`surveyCheck`).
        var formalGain: Double
        /// The test's level (the false-alarm rate per locator checked) and the smallest offset that is
        /// flagged, metres.
        var alpha: Double
        var minimumEffectMeters: Double
        /// |δ| projected on the checkable directions, metres.
        var offsetAlongMeters: Double
        /// Time blocks G the covariance was estimated from.
        var blocks: Int
        /// The decision.
        var flagged: Bool

        static func == (a: SurveyTest, b: SurveyTest) -> Bool {
            a.statistic == b.statistic && a.degreesOfFreedom == b.degreesOfFreedom && a.pValue == b.pValue && a.alpha == b.alpha
                && a.minimumEffectMeters == b.minimumEffectMeters && a.offsetAlongMeters == b.offsetAlongMeters
                && a.blocks == b.blocks && a.flagged == b.flagged
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(statistic); hasher.combine(pValue); hasher.combine(offsetAlongMeters); hasher.combine(flagged)
        }

        /// "offset 0.494 m along them, T² 240.1 (p < 0.0001, 1 and 19 dof): flagged" or "…: fits".
        var summary: String {
            let p = pValue < 0.0001 ? "p < 0.0001" : "p \(GeometryReport.text(pValue, 4))"
            let verdict = flagged ? "flagged"
                : pValue < alpha ? "fits (significant but under \(SelfCalibration.metres(minimumEffectMeters)) m)" : "fits"
            return "offset \(SelfCalibration.metres(offsetAlongMeters)) m along them, T² \(GeometryReport.text(statistic, 1)) "
                + "(\(p), \(degreesOfFreedom.0) and \(degreesOfFreedom.1) dof): \(verdict)"
        }
    }

    /// Whether any direction is checkable.
    var checkable: Bool { notCheckableReason == nil && (sdMeters.first ?? .infinity) <= thresholdMeters }

    /// "checkable (± 0.020 m along (1.00, 0.00), ± 0.031 m along (0.00, 1.00))", "checkable
    /// (± 0.020 m along (0.71, 0.71); not along (-0.71, 0.71): ± 0.400 m)" or "not checkable
    /// (± 0.400 m at best, along (1.00, 0.00))", the test's summary after it when there is one, and
    /// for a flagged locator what was not moved ("; moved along them only: along (0.71, 0.71) fitted
    /// -0.120 ± 0.055 m, left as surveyed").
    var summary: String {
        func text(_ v: Vector3) -> String {
            v.z == 0 && directions.count == 2 ? "(\(GeometryReport.text(v.x, 2)), \(GeometryReport.text(v.y, 2)))"
                : "(\(GeometryReport.text(v.x, 2)), \(GeometryReport.text(v.y, 2)), \(GeometryReport.text(v.z, 2)))"
        }
        func along(_ k: Int) -> String { "± \(SelfCalibration.metres(sdMeters[k])) m along \(text(directions[k]))" }
        if let reason = notCheckableReason { return "not checkable (\(reason))" }
        guard !directions.isEmpty else { return "not checkable (its bias is not determined by this recording)" }
        guard checkable else { return "not checkable (\(along(0)) at best)" }
        let good = sdMeters.indices.filter { sdMeters[$0] <= thresholdMeters }
        let loose = sdMeters.indices.filter { sdMeters[$0] > thresholdMeters }
        return "checkable (" + good.map(along).joined(separator: ", ")
            + (loose.isEmpty ? "" : "; not " + loose.map(along).joined(separator: ", ")) + ")"
            + (test.map { ": " + $0.summary } ?? "")
            + (remainder.flatMap { r in
                r.isEmpty ? nil : "; moved along them only: " + r.map {
                    "along \(text($0.direction)) fitted \(SelfCalibration.metres($0.fittedMeters)) ± \(SelfCalibration.metres($0.sdMeters)) m"
                }.joined(separator: ", ") + ", left as surveyed"
            } ?? "")
    }
}
