import LocusCore

extension PositionFix {
    /// The fix's numbers as bit patterns (time, position, covariance, velocity, HDOP, residual RMS,
    /// locators used and rejected): for tests that compare two paths bit for bit, telling −0 from 0.
    public var bitPatterns: [UInt64] {
        var bits = [timeSeconds, position.x, position.y, covariance.xx, covariance.xy, covariance.yy,
                    quality.hdop, quality.residualRMSMeters].map(\.bitPattern)
        if let v = velocity { bits += [v.x.bitPattern, v.y.bitPattern] }
        bits.append(UInt64(quality.locatorsUsed))
        bits += quality.rejected.map { UInt64($0.rawValue) }
        return bits
    }
}
