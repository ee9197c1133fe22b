import LocusCore

/// `PositionFix` ↔ `locus_position` and `ZoneEvent` ↔ `locus_event`, at the offsets of `CLayout`.
enum Records {
    /// Writes `fix` as a `locus_position` at `raw` (every byte written; unset fields 0).
    static func store(_ fix: PositionFix, to raw: UnsafeMutableRawPointer) {
        typealias P = CLayout.Position
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: P.size)
        func put(_ v: Double, _ offset: Int) { raw.storeBytes(of: v, toByteOffset: offset, as: Double.self) }
        put(fix.timeSeconds, P.timeSeconds)
        put(fix.position.x, P.x); put(fix.position.y, P.y); put(fix.position.z, P.z)
        var flags: Int32 = 0
        if let v = fix.velocity {
            flags |= P.hasVelocity
            put(v.x, P.vx); put(v.y, P.vy); put(v.z, P.vz); put(v.horizontalNorm, P.speed)
            if let course = fix.courseRadians { flags |= P.hasCourse; put(course, P.course) }
        }
        CLayout.store(fix.covariance, to: raw, at: P.covariance)
        put(fix.horizontalAccuracyMeters, P.accuracy)
        put(fix.horizontalAccuracy95Meters, P.accuracy95)
        put(fix.quality.hdop, P.hdop)
        if let vdop = fix.quality.vdop { flags |= P.hasVDOP; put(vdop, P.vdop) }
        put(fix.quality.pdop, P.pdop)
        put(fix.quality.residualRMSMeters, P.residualRMS)
        raw.storeBytes(of: flags, toByteOffset: P.flags, as: Int32.self)
        raw.storeBytes(of: Int32(clamping: fix.quality.locatorsUsed), toByteOffset: P.anchorsUsed, as: Int32.self)
        raw.storeBytes(of: Int32(clamping: fix.quality.rejected.totalCount), toByteOffset: P.rejectedCount, as: Int32.self)
        for (k, address) in fix.quality.rejected.enumerated() where k < CLayout.rejectedCapacity {
            raw.storeBytes(of: address.rawValue, toByteOffset: P.rejected + 2 * k, as: UInt16.self)
        }
        CLayout.storeID(fix.tag.rawValue, to: raw, at: P.tag)
        CLayout.storeID(fix.floor.rawValue, to: raw, at: P.floor)
    }

    /// Reads a `locus_position` back into a fix (the inverse of `store`, for formatting).
    /// - Throws: E1003 for an id field that is empty, unterminated or not UTF-8.
    static func loadPosition(from raw: UnsafeRawPointer) throws(LocusError) -> PositionFix {
        typealias P = CLayout.Position
        func get(_ offset: Int) -> Double { raw.loadUnaligned(fromByteOffset: offset, as: Double.self) }
        let flags = raw.loadUnaligned(fromByteOffset: P.flags, as: Int32.self)
        let rejectedCount = Int(raw.loadUnaligned(fromByteOffset: P.rejectedCount, as: Int32.self))
        var rejected = LocatorList()
        for k in 0..<min(max(rejectedCount, 0), CLayout.rejectedCapacity) {
            rejected.append(LocatorAddress(raw.loadUnaligned(fromByteOffset: P.rejected + 2 * k, as: UInt16.self)))
        }
        let quality = FixQuality(hdop: get(P.hdop), vdop: flags & P.hasVDOP != 0 ? get(P.vdop) : nil, pdop: get(P.pdop),
                                 residualRMSMeters: get(P.residualRMS),
                                 locatorsUsed: Int(raw.loadUnaligned(fromByteOffset: P.anchorsUsed, as: Int32.self)),
                                 rejected: rejected)
        let velocity = flags & P.hasVelocity != 0 ? Vector3(x: get(P.vx), y: get(P.vy), z: get(P.vz)) : nil
        return PositionFix(timeSeconds: get(P.timeSeconds),
                           tag: TagID(try CLayout.loadID(from: raw, at: P.tag, field: "position.tag")),
                           floor: FloorID(try CLayout.loadID(from: raw, at: P.floor, field: "position.floor")),
                           position: Point3(x: get(P.x), y: get(P.y), z: get(P.z)), velocity: velocity,
                           covariance: CLayout.loadMatrix(from: raw, at: P.covariance), quality: quality)
    }

    /// `enum locus_event_kind` value of a kind.
    static func kindValue(_ kind: ZoneEvent.Kind) -> Int32 {
        switch kind {
        case .exit: 0
        case .enter: 1
        case .dwell: 2
        }
    }

    /// Writes `event` as a `locus_event` at `raw`.
    static func store(_ event: ZoneEvent, to raw: UnsafeMutableRawPointer) {
        typealias E = CLayout.Event
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: E.size)
        raw.storeBytes(of: event.timeSeconds, toByteOffset: E.timeSeconds, as: Double.self)
        raw.storeBytes(of: event.dwellSeconds ?? 0, toByteOffset: E.dwellSeconds, as: Double.self)
        raw.storeBytes(of: kindValue(event.kind), toByteOffset: E.kind, as: Int32.self)
        CLayout.storeID(event.tag.rawValue, to: raw, at: E.tag)
        CLayout.storeID(event.floor.rawValue, to: raw, at: E.floor)
        CLayout.storeID(event.zone.rawValue, to: raw, at: E.zone)
    }

    /// Reads a `locus_event` back into an event (the inverse of `store`, for formatting).
    /// - Throws: E1003 for an unknown kind or a bad id field.
    static func loadEvent(from raw: UnsafeRawPointer) throws(LocusError) -> ZoneEvent {
        typealias E = CLayout.Event
        let kindValue = raw.loadUnaligned(fromByteOffset: E.kind, as: Int32.self)
        let kind: ZoneEvent.Kind
        switch kindValue {
        case 0: kind = .exit
        case 1: kind = .enter
        case 2: kind = .dwell
        default: throw LocusError(.invalidArgument, "event.kind \(kindValue) is not a locus_event_kind")
        }
        return ZoneEvent(timeSeconds: raw.loadUnaligned(fromByteOffset: E.timeSeconds, as: Double.self),
                         tag: TagID(try CLayout.loadID(from: raw, at: E.tag, field: "event.tag")),
                         floor: FloorID(try CLayout.loadID(from: raw, at: E.floor, field: "event.floor")),
                         zone: ZoneID(try CLayout.loadID(from: raw, at: E.zone, field: "event.zone")),
                         kind: kind,
                         dwellSeconds: kind == .dwell ? raw.loadUnaligned(fromByteOffset: E.dwellSeconds, as: Double.self) : nil)
    }
}
