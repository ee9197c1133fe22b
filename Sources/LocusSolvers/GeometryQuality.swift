import LocusCore
import LocusNumerics

/// Dilution of precision at one point: how range noise maps to position noise for a geometry.
public struct DilutionOfPrecision: Sendable, Equatable {
    /// HDOP √(Q₁₁ + Q₂₂).
    public var hdop: Double
    /// VDOP √Q₃₃ (spatial mode only).
    public var vdop: Double?
    /// PDOP √trace Q (planar: equals HDOP).
    public var pdop: Double

    /// Memberwise initialiser.
    init(hdop: Double, vdop: Double?, pdop: Double) {
        self.hdop = hdop
        self.vdop = vdop
        self.pdop = pdop
    }
}

/// Geometry quality of a locator layout: DOP with Q = (HᵀH)⁻¹ over unit line-of-sight rows
/// (planar rows (dx/r, dy/r) with r the 3-D distance to the tag at its known height; spatial rows
/// (dx, dy, dz)/r). The basis of `locus geometry`.
///
/// Both the single point and the grid use the C kernel `locus_tril_dop` (any number of locators,
/// O(n) per point, no allocation per point): per point the work is a 2×2/3×3 inverse, where a
/// LAPACKE call would cost more in call overhead than the whole computation.
public enum GeometryQuality {
    /// DOP at `point` (planar: `point.z` is replaced by `tagHeightMeters`).
    /// `.automatic` resolves by `TrilaterationConfiguration.planarHeightSpreadRatio`'s rule.
    /// Complexity O(n).
    /// - Throws: E4001 fewer locators than unknowns + 0 (2 planar, 3 spatial), E4002 when HᵀH is
    ///   singular or PDOP > `configuration.maximumDOP`.
    public static func dop(locators: [Point3], at point: Point3, mode: TrilaterationMode,
                            tagHeightMeters: Double,
                            configuration: TrilaterationConfiguration = .standard) throws(LocusError) -> DilutionOfPrecision {
        var outcome: Result<DilutionOfPrecision, LocusError> = .failure(LocusError(.tooFewRanges, "no locators"))
        locators.withUnsafeBufferPointer { lp in
            outcome = dop(locators: lp, at: point, mode: mode, tagHeightMeters: tagHeightMeters,
                          configuration: configuration)
        }
        return try outcome.get()
    }

    private static func dop(locators: UnsafeBufferPointer<Point3>, at point: Point3, mode: TrilaterationMode,
                            tagHeightMeters: Double,
                            configuration: TrilaterationConfiguration) -> Result<DilutionOfPrecision, LocusError> {
        let model = TrilaterationKernel.chooseModel(locators: locators.span, requested: mode.kernelModel,
                                                    planarHeightSpreadRatio: configuration.planarHeightSpreadRatio)
        guard locators.count >= model.unknowns else {
            return .failure(LocusError(.tooFewRanges, "too few locators for a DOP: \(model.unknowns) needed"))
        }
        do throws(LocusError) {
            let d = try TrilaterationKernel.dop(
                locators: locators.span, model: model, tagHeightMeters: tagHeightMeters, at: point,
                minimumReciprocalCondition: configuration.minimumReciprocalCondition, maximumDOP: configuration.maximumDOP)
            return .success(DilutionOfPrecision(hdop: d.hdop, vdop: model == .spatial ? d.vdop : nil, pdop: d.pdop))
        } catch {
            return .failure(error)
        }
    }

    /// DOP at each of `points` (x, y; z = `tagHeightMeters`, which planar mode also uses as the
    /// tag height); nil where the geometry is degenerate (E4001/E4002 at that point).
    /// Complexity O(n · points.count); one allocation (the result).
    static func dopGrid(locators: [Point3], points: [Point2], mode: TrilaterationMode,
                                tagHeightMeters: Double,
                                configuration: TrilaterationConfiguration = .standard) -> [DilutionOfPrecision?] {
        var result: [DilutionOfPrecision?] = []
        result.reserveCapacity(points.count)
        locators.withUnsafeBufferPointer { lp in
            for q in points {
                let at = Point3(x: q.x, y: q.y, z: tagHeightMeters)
                switch dop(locators: lp, at: at, mode: mode, tagHeightMeters: tagHeightMeters, configuration: configuration) {
                case .success(let d): result.append(d)
                case .failure: result.append(nil)
                }
            }
        }
        return result
    }
}
