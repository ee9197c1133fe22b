import LocusCore

/// One trilateration result: the weighted least-squares position and its figures, as the kernel
/// (`TrilaterationKernel.solve`) and the difference solver (LocusSolvers) give it. The engine maps it
/// to a `PositionFix` (`fixQuality(address:)` gives the `FixQuality`); LocusSolvers adds its `mode`.
public struct TrilaterationSolution: Sendable, Equatable {
    /// Position p̂, metres; planar: z = the configured tag height.
    public var position: Point3
    /// Position covariance (JᵀWJ)⁻¹ · max(1, s²) at p̂, m², with s² = χ²/(m − p) the a-posteriori
    /// variance factor (1 when m = p): the formal covariance, inflated when the residuals say the
    /// σ's were optimistic, never shrunk. Planar: z entries 0.
    public var covariance: SymmetricMatrix3
    /// The model solved in (LocusSolvers' `mode`: never `.automatic`).
    var model: TrilaterationKernel.Model
    /// HDOP √(Q₁₁ + Q₂₂), Q = (HᵀH)⁻¹ over unit line-of-sight rows of the used locators
    /// (planar rows (dx/r, dy/r), r the 3-D distance).
    public var hdop: Double
    /// VDOP √Q₃₃, spatial mode only.
    public var vdop: Double?
    /// PDOP √trace Q (planar: equals HDOP).
    public var pdop: Double
    /// √(Σ eᵢ²/m) over the used ranges, eᵢ = rᵢ − r̂ᵢ(p̂), metres.
    public var residualRMSMeters: Double
    /// χ² = Σ (eᵢ/σᵢ)² over the used ranges.
    public var chiSquare: Double
    /// m − p.
    var degreesOfFreedom: Int
    /// Bit i set: range i was rejected as an outlier (indices below 64; see `rejectedCount`).
    public var rejectedMask: UInt64
    /// Number of rejected ranges.
    public var rejectedCount: Int
    /// m: ranges in the final fit.
    public var locatorsUsed: Int
    /// Gauss–Newton steps of the final fit.
    public var iterations: Int
    /// True when the final fit's last step was within the tolerance.
    public var isConverged: Bool

    /// Memberwise initialiser.
    init(position: Point3, covariance: SymmetricMatrix3, model: TrilaterationKernel.Model, hdop: Double,
                 vdop: Double?, pdop: Double, residualRMSMeters: Double, chiSquare: Double, degreesOfFreedom: Int,
                 rejectedMask: UInt64, rejectedCount: Int, locatorsUsed: Int, iterations: Int, isConverged: Bool) {
        self.position = position
        self.covariance = covariance
        self.model = model
        self.hdop = hdop
        self.vdop = vdop
        self.pdop = pdop
        self.residualRMSMeters = residualRMSMeters
        self.chiSquare = chiSquare
        self.degreesOfFreedom = degreesOfFreedom
        self.rejectedMask = rejectedMask
        self.rejectedCount = rejectedCount
        self.locatorsUsed = locatorsUsed
        self.iterations = iterations
        self.isConverged = isConverged
    }

    /// True when range `index` was rejected (indices below 64).
    func isRejected(index: Int) -> Bool {
        index >= 0 && index < 64 && (rejectedMask >> UInt64(index)) & 1 == 1
    }

    /// The fix figures, naming rejected locators through `address` (input index → address).
    /// Allocation-free.
    func fixQuality(address: (Int) -> LocatorAddress) -> FixQuality {
        var rejected = LocatorList()
        var mask = rejectedMask
        while mask != 0 {
            let index = mask.trailingZeroBitCount
            rejected.append(address(index))
            mask &= mask - 1
        }
        return FixQuality(hdop: hdop, vdop: vdop, pdop: pdop, residualRMSMeters: residualRMSMeters,
                          locatorsUsed: locatorsUsed, rejected: rejected)
    }

    /// The engine's raw (unfiltered) fix for this solution: position, covariance and figures, with
    /// rejected locators named through `address` (input index → address). Allocation-free.
    package func positionFix(timeSeconds: Double, tag: TagID, floor: FloorID,
                             address: (Int) -> LocatorAddress) -> PositionFix {
        PositionFix(timeSeconds: timeSeconds, tag: tag, floor: floor, position: position, velocity: nil,
                    covariance: covariance, quality: fixQuality(address: address))
    }
}
