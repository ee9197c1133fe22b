#if canImport(Glibc)
import Glibc
#endif
import Locus
import LocusCore
import LocusIO

/// `locus_calibrate`: the site's locators calibrated from measured ranges without ground truth
/// (`SiteCalibration.withoutTruth`, the calibration of `locus calibrate` without `--truth`),
/// validated on held-out blocks; `locus_calibrate_validated` with no validation result.
@c(locus_calibrate)
public func locusCalibrate(_ siteJSON: UnsafePointer<CChar>?, _ length: Int, _ ranges: UnsafeRawPointer?, _ count: Int,
                           _ options: UnsafeRawPointer?, _ locators: UnsafeMutableRawPointer?, _ capacity: Int,
                           _ summary: UnsafeMutableRawPointer?, _ siteOut: UnsafeMutablePointer<CChar>?, _ siteCapacity: Int,
                           _ siteLength: UnsafeMutablePointer<Int>?) -> Int32 {
    locusCalibrateValidated(siteJSON, length, ranges, count, options, locators, capacity, summary, nil, siteOut, siteCapacity, siteLength)
}

/// `locus_calibrate_validated` (ABI 0.3): the calibration of `locus_calibrate` and its held-out
/// validation (`SiteCalibration.Report.validation`) as `locus_calibration_validation`.
/// - Parameters: `siteJSON` (`length` bytes or `LOCUS_NUL_TERMINATED`), `ranges` (`count` of
///   them, biases not removed), `options` (NULL: defaults; `holdout_block_ms` 0: 10 s, −1: no
///   validation), `locators` (room for `capacity` results: every locator of every floor the ranges
///   reach, the whole recording's fit), `summary` (may be NULL), `validation` (may be NULL),
///   `siteOut` (the site to use — the fit when the validation accepts it or cannot judge it, else the
///   site as given — as JSON, NUL-terminated; may be NULL with `siteCapacity` 0; `siteLength` gets
///   its length without the NUL either way).
/// - Returns: 0, or E1003 (null pointer, bad option or id, capacity too small — `summary->locators`
///   and `siteLength` say what is needed), E5002 and the site codes, E3002 (unknown floor), E4001
///   (too few usable epochs on a floor), E4002.
@c(locus_calibrate_validated)
public func locusCalibrateValidated(_ siteJSON: UnsafePointer<CChar>?, _ length: Int, _ ranges: UnsafeRawPointer?, _ count: Int,
                                    _ options: UnsafeRawPointer?, _ locators: UnsafeMutableRawPointer?, _ capacity: Int,
                                    _ summary: UnsafeMutableRawPointer?, _ validation: UnsafeMutableRawPointer?,
                                    _ siteOut: UnsafeMutablePointer<CChar>?, _ siteCapacity: Int,
                                    _ siteLength: UnsafeMutablePointer<Int>?) -> Int32 {
    Status.guarded { () throws(LocusError) in
        guard let siteJSON else { throw LocusError(.invalidArgument, "site_json is NULL") }
        let bytes = length == -1 ? strlen(siteJSON) : length
        guard bytes >= 0 else { throw LocusError(.invalidArgument, "length \(length) is not a byte count") }
        let site = try SiteDecoder.decode([UInt8](UnsafeRawBufferPointer(start: siteJSON, count: bytes)), file: "<json>")
        guard count >= 0, count <= Int.max / CLayout.Range.size else { throw LocusError(.invalidArgument, "count \(count) is not a range count") }
        guard count == 0 || ranges != nil else { throw LocusError(.invalidArgument, "ranges is NULL") }
        var measurements: [RangeMeasurement] = []
        measurements.reserveCapacity(count)
        for i in 0..<count {
            let m = try RangeIngest.load(ranges! + i * CLayout.Range.size)
            guard m.timeSeconds.isFinite, m.rangeMeters.isFinite, m.rangeMeters >= 0 else {
                throw LocusError(.invalidRange, "ranges[\(i)]: time \(m.timeSeconds) s, range \(m.rangeMeters) m: not finite, or negative")
            }
            measurements.append(m)
        }
        var settings = SiteCalibration.Options()
        if let options {
            typealias O = CLayout.CalibrationOptions
            if let p = UnsafeRawPointer(bitPattern: options.loadUnaligned(fromByteOffset: O.floor, as: UInt.self)) {
                settings.defaultFloor = FloorID(try CText.identifier(p, field: "options.floor"))
            }
            settings.fitsSlope = options.loadUnaligned(fromByteOffset: O.fitSlope, as: Int32.self) != 0
            settings.fixesPositions = options.loadUnaligned(fromByteOffset: O.fixPositions, as: Int32.self) != 0
            let minimum = options.loadUnaligned(fromByteOffset: O.minimumRanges, as: Int32.self)
            guard minimum >= 0 else { throw LocusError(.invalidArgument, "options.min_ranges \(minimum) is negative") }
            if minimum > 0 { settings.minimumRanges = Int(minimum) }
            settings.holdoutBlockSeconds = try holdoutBlockSeconds(options.loadUnaligned(fromByteOffset: O.holdoutBlockMilliseconds, as: Int32.self))
        }
        let report = try SiteCalibration.withoutTruth(site: site, ranges: measurements, options: settings)
        let results = report.floors.flatMap { floor in floor.locators.map { (floor.floor, $0) } }
        if let summary {
            typealias S = CLayout.CalibrationSummary
            summary.initializeMemory(as: UInt8.self, repeating: 0, count: S.size)
            summary.storeBytes(of: report.floors.map(\.residualRMSMeters).max() ?? 0, toByteOffset: S.residualRMS, as: Double.self)
            summary.storeBytes(of: Int64(results.count), toByteOffset: S.locators, as: Int64.self)
            summary.storeBytes(of: Int64(results.filter { $0.1.biasMeters != nil }.count), toByteOffset: S.estimated, as: Int64.self)
            summary.storeBytes(of: Int64(results.filter { $0.1.isFlagged }.count), toByteOffset: S.flagged, as: Int64.self)
            summary.storeBytes(of: Int64(report.unusedRangeCount), toByteOffset: S.unusedRanges, as: Int64.self)
            summary.storeBytes(of: Int32(report.floors.allSatisfy(\.commonOffsetSeparable) ? 1 : 0), toByteOffset: S.separable, as: Int32.self)
            summary.storeBytes(of: Int32(clamping: report.floors.reduce(0) { $0 + $1.warnings.count }), toByteOffset: S.warnings, as: Int32.self)
        }
        guard capacity >= results.count else {
            throw LocusError(.invalidArgument, "capacity \(capacity) is too small: \(results.count) locator results")
        }
        guard results.isEmpty || locators != nil else { throw LocusError(.invalidArgument, "locators is NULL") }
        for (k, (floorID, l)) in results.enumerated() {
            typealias L = CLayout.LocatorCalibration
            let raw = locators! + k * L.size
            raw.initializeMemory(as: UInt8.self, repeating: 0, count: L.size)
            let floor = report.site.floors.first { $0.id == floorID }
            let locator = floor?.locators.first { $0.address == l.address }
            func put(_ v: Double, _ offset: Int) { raw.storeBytes(of: v.isFinite ? v : 0, toByteOffset: offset, as: Double.self) }
            put(l.biasMeters ?? locator?.biasMeters ?? 0, L.bias)
            put(l.biasSDMeters ?? 0, L.biasSD)
            put(l.slope ?? locator?.biasSlope ?? 0, L.slope)
            put(l.slopeSD ?? 0, L.slopeSD)
            put(l.noiseMeters ?? 0, L.noise)
            if let d = l.positionOffset { put(d.x, L.offset); put(d.y, L.offset + 8); put(d.z, L.offset + 16) }
            put(l.positionOffsetSDMeters ?? 0, L.offsetSD)
            raw.storeBytes(of: Int64(l.rangeCount), toByteOffset: L.ranges, as: Int64.self)
            CLayout.storeID(floorID.rawValue, to: raw, at: L.floor)
            raw.storeBytes(of: l.address.rawValue, toByteOffset: L.address, as: UInt16.self)
            var flags: Int32 = 0
            if l.biasMeters != nil { flags |= L.estimated }
            if l.isFlagged { flags |= L.flagged }
            if l.positionOffset != nil { flags |= L.checked }
            raw.storeBytes(of: flags, toByteOffset: L.flags, as: Int32.self)
        }
        if let validation { store(report.validation, to: validation) }
        let encoded = SiteEncoder.encode(report.site)
        siteLength?.pointee = encoded.count
        if siteOut != nil || siteCapacity > 0 {
            try CText.copy(encoded, to: siteOut, capacity: siteCapacity, length: siteLength)
        }
    }
}

/// `locus_calibration_options.holdout_block_ms` as `SiteCalibration.Options.holdoutBlockSeconds`: 0 is
/// the default (10 s), `LOCUS_CALIBRATION_NO_HOLDOUT` (−1) nil, else 1 ms – 24 h (`--holdout-block`'s range).
private func holdoutBlockSeconds(_ milliseconds: Int32) throws(LocusError) -> Double? {
    switch milliseconds {
    case 0: HoldoutBlocks.defaultBlockSeconds
    case -1: nil
    case 1...86_400_000: Double(milliseconds) / 1000
    default:
        throw LocusError(.invalidArgument, "options.holdout_block_ms \(milliseconds) is not 1 .. 86,400,000, 0 (10 s) or "
                         + "LOCUS_CALIBRATION_NO_HOLDOUT (-1)")
    }
}

/// Writes `locus_calibration_validation`: the verdict (`enum locus_calibration_verdict`), the blocks,
/// rows and figures of `v`, and its reason unless accepted (nil `v`: not validated, all else 0).
private func store(_ v: CalibrationValidation?, to raw: UnsafeMutableRawPointer) {
    typealias V = CLayout.CalibrationValidation
    raw.initializeMemory(as: UInt8.self, repeating: 0, count: V.size)
    guard let v else { return }
    let verdict: Int32 = switch v.refused {
    case .calibration?: V.refused
    case .unproven?: V.unproven
    case .positions?: V.positionsRefused
    case nil: v.judged ? V.accepted : V.notJudged
    }
    raw.storeBytes(of: verdict, toByteOffset: V.verdict, as: Int32.self)
    raw.storeBytes(of: Int32(clamping: v.blocks), toByteOffset: V.blocks, as: Int32.self)
    raw.storeBytes(of: Int32(clamping: v.heldOutBlocks), toByteOffset: V.heldOutBlocks, as: Int32.self)
    raw.storeBytes(of: Int32(clamping: v.moved.count), toByteOffset: V.moved, as: Int32.self)
    raw.storeBytes(of: v.blockSeconds, toByteOffset: V.blockSeconds, as: Double.self)
    raw.storeBytes(of: Int64(v.fitRows), toByteOffset: V.fitRanges, as: Int64.self)
    raw.storeBytes(of: Int64(v.heldOutRows), toByteOffset: V.heldOutRanges, as: Int64.self)
    raw.storeBytes(of: Int64(v.scored), toByteOffset: V.scored, as: Int64.self)
    if v.judged, let before = v.surveyed, let after = v.calibrated, before.isFinite, after.isFinite {
        raw.storeBytes(of: before, toByteOffset: V.surveyed, as: Double.self)
        raw.storeBytes(of: after, toByteOffset: V.calibrated, as: Double.self)
    }
    if verdict != V.accepted, let reason = v.reason {
        CLayout.storeText(reason, to: raw, at: V.reason, capacity: V.reasonCapacity)
    }
}
