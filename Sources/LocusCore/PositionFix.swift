#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One position of one tag at one time, with its uncertainty and how it was obtained.
///
/// Produced by the solver (raw per-epoch fixes), the filter and the smoother. Every number is
/// finite: the engine never lets a NaN out.
public struct PositionFix: Sendable, Hashable {
    /// Time of the fix, seconds (the data's clock).
    public var timeSeconds: Double
    public var tag: TagID
    public var floor: FloorID
    /// Position in the floor frame, metres. In planar mode `z` is the floor's tag height.
    public var position: Point3
    /// Velocity, m/s, when a filter produced the fix; nil for raw solver fixes.
    public var velocity: Vector3?
    /// Position covariance, m². In planar mode the z entries are 0.
    public var covariance: SymmetricMatrix3
    /// Geometry and residual figures of the solve behind this fix.
    public var quality: FixQuality

    public init(timeSeconds: Double, tag: TagID, floor: FloorID, position: Point3, velocity: Vector3? = nil,
                covariance: SymmetricMatrix3, quality: FixQuality) {
        self.timeSeconds = timeSeconds
        self.tag = tag
        self.floor = floor
        self.position = position
        self.velocity = velocity
        self.covariance = covariance
        self.quality = quality
    }

    /// Horizontal accuracy, 1σ as DRMS: √(σx² + σy²), metres.
    public var horizontalAccuracyMeters: Double { HorizontalAccuracy.drms(covariance) }

    /// Horizontal accuracy at 95 %: the radius of the circle around the fix holding the true
    /// position with probability 0.95 under the Gaussian covariance, metres.
    public var horizontalAccuracy95Meters: Double { HorizontalAccuracy.radius95(covariance) }

    /// Speed over ground √(vx² + vy²), m/s, when a velocity is known.
    public var speedMetersPerSecond: Double? { velocity.map { $0.horizontalNorm } }

    /// Course: direction of travel, radians counter-clockwise from +x in (−π, π]; nil when unknown
    /// or when the tag is practically still (speed below 5 cm/s).
    public var courseRadians: Double? {
        guard let v = velocity, v.horizontalNorm >= 0.05 else { return nil }
        return atan2(v.y, v.x)
    }
}

/// Figures about the solve behind a fix.
public struct FixQuality: Sendable, Hashable {
    /// Horizontal dilution of precision √(Q₁₁ + Q₂₂), Q = (HᵀH)⁻¹ over unit line-of-sight rows.
    public var hdop: Double
    /// Vertical DOP √Q₃₃ (spatial mode only).
    public var vdop: Double?
    /// Position DOP √trace Q (spatial mode only; equals HDOP in planar mode).
    public var pdop: Double
    /// Root mean square of the range residuals of the used locators, metres.
    public var residualRMSMeters: Double
    /// Locators whose ranges entered the solution.
    public var locatorsUsed: Int
    /// Locators whose ranges were rejected as outliers (e.g. NLOS): the first `LocatorList.capacity`
    /// kept inline (a fix never allocates), the rest counted.
    @usableFromInline package var rejected: LocatorList

    /// Figures of a solve that rejected no locator (e.g. for a position from another positioning system).
    @inlinable public init(hdop: Double, vdop: Double? = nil, pdop: Double, residualRMSMeters: Double, locatorsUsed: Int) {
        self.init(hdop: hdop, vdop: vdop, pdop: pdop, residualRMSMeters: residualRMSMeters, locatorsUsed: locatorsUsed,
                  rejected: LocatorList())
    }

    /// Figures of a solve with the locators it rejected.
    @inlinable package init(hdop: Double, vdop: Double? = nil, pdop: Double, residualRMSMeters: Double, locatorsUsed: Int,
                 rejected: LocatorList) {
        self.hdop = hdop
        self.vdop = vdop
        self.pdop = pdop
        self.residualRMSMeters = residualRMSMeters
        self.locatorsUsed = locatorsUsed
        self.rejected = rejected
    }

    /// The locators whose ranges were rejected as outliers (e.g. NLOS), at most 8 (the rest are only
    /// counted in `rejectedCount`). Allocates an array: for reading, not for a per-fix hot path.
    public var rejectedLocators: [LocatorAddress] { Array(rejected) }

    /// How many locators' ranges were rejected as outliers, including any beyond `rejectedLocators`.
    public var rejectedCount: Int { rejected.totalCount }
}
