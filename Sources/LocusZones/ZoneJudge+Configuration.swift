import LocusCore

// A judge's zones made ready for judging: validated (`compile`), put in spatial order, and laid out
// in the flat tables and the grid of the per-fix path. For `init(floor:options:)` and `refreshZones`.
extension ZoneJudge {
    /// Validates zones: polygons (`ZonePolygon(validating:)`), rules (finite, non-negative) and ids.
    /// - Throws: `E3105` non-finite number, `E3106` negative value, `E3108`/`E3109`/`E3110` invalid
    ///   polygon, `E3103` duplicate id; the JSON path is `zones[i].field`.
    static func compile(_ zones: [Zone]) throws(LocusError) -> [CompiledZone] {
        var seen = Set<ZoneID>()
        var out: [CompiledZone] = []
        out.reserveCapacity(zones.count)
        for (i, zone) in zones.enumerated() {
            let path = "zones[\(i)]"
            guard seen.insert(zone.id).inserted else {
                throw LocusError(.siteDuplicateID, "zone id '\(zone.id)' appears more than once",
                                 context: .init(jsonPath: path + ".id"))
            }
            let r = zone.rules
            let numbers: [(String, Double)] = [("inDist", r.inDistanceMeters), ("inCountInterval", r.inCountIntervalSeconds),
                                               ("outPeriod", r.outPeriodSeconds), ("dwellSeconds", r.dwellSeconds)]
            for (name, value) in numbers {
                guard value.isFinite else {
                    throw LocusError(.siteNonFiniteNumber, "zone '\(zone.id)': \(name) is not finite",
                                     context: .init(jsonPath: "\(path).\(name)"))
                }
                guard value >= 0 else {
                    throw LocusError(.siteNegativeValue, "zone '\(zone.id)': \(name) is negative (\(value))",
                                     context: .init(jsonPath: "\(path).\(name)"))
                }
            }
            guard r.inCount >= 0 else {
                throw LocusError(.siteNegativeValue, "zone '\(zone.id)': inCount is negative (\(r.inCount))",
                                 context: .init(jsonPath: "\(path).inCount"))
            }
            let polygon = try ZonePolygon(validating: zone.polygon, zone: zone.id, jsonPath: path + ".polygon")
            out.append(CompiledZone(zone: zone, polygon: polygon))
        }
        return out
    }

    /// The zones in Morton (Z-curve) order of their bounding-box centres, ties by id, so zones near
    /// each other are near each other in the flat tables (fewer cache lines per fix). Internal zone
    /// indices follow this order; output never depends on it (events sort by id).
    static func spatiallyOrdered(_ zones: [CompiledZone]) -> [CompiledZone] {
        guard zones.count > 1 else { return zones }
        var minX = Double.infinity, minY = Double.infinity, maxX = -Double.infinity, maxY = -Double.infinity
        for z in zones {
            minX = min(minX, z.polygon.minX); minY = min(minY, z.polygon.minY)
            maxX = max(maxX, z.polygon.maxX); maxY = max(maxY, z.polygon.maxY)
        }
        let sx = 65535 / max(maxX - minX, 1e-9), sy = 65535 / max(maxY - minY, 1e-9)
        func spread(_ v: UInt32) -> UInt32 {
            var x = v & 0xFFFF
            x = (x | (x << 8)) & 0x00FF_00FF
            x = (x | (x << 4)) & 0x0F0F_0F0F
            x = (x | (x << 2)) & 0x3333_3333
            x = (x | (x << 1)) & 0x5555_5555
            return x
        }
        let keyed = zones.map { z -> (UInt32, CompiledZone) in
            let cx = 0.5 * (z.polygon.minX + z.polygon.maxX), cy = 0.5 * (z.polygon.minY + z.polygon.maxY)
            let qx = UInt32(max(0, min(65535, ((cx - minX) * sx).rounded())))
            let qy = UInt32(max(0, min(65535, ((cy - minY) * sy).rounded())))
            return (spread(qx) | (spread(qy) << 1), z)
        }
        return keyed.sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1.zone.id < $1.1.zone.id }.map(\.1)
    }

    /// Flat per-zone tables and the grid for the per-fix path.
    static func makeTables(_ zones: [CompiledZone]) -> ([ZoneRules], [ZonePolygon.Edge], ZoneGrid) {
        var edges: [ZonePolygon.Edge] = []
        var entries: [ZoneGrid.Entry] = []
        var boxes: [ZoneGrid.Box] = []
        entries.reserveCapacity(zones.count)
        boxes.reserveCapacity(zones.count)
        for (i, z) in zones.enumerated() {
            let d = z.zone.rules.inDistanceMeters, p = z.polygon
            let start = Int32(edges.count)
            edges += p.edges
            let reach = ZoneGrid.Box(minX: p.minX - d, minY: p.minY - d, maxX: p.maxX + d, maxY: p.maxY + d)
            boxes.append(reach)
            entries.append(ZoneGrid.Entry(
                reach: reach,
                reachSquaredSquareMeters: d * d, priority: z.zone.rules.priority,
                edgeStart: start, edgeEnd: Int32(edges.count), zone: Int32(i)))
        }
        return (zones.map(\.zone.rules), edges, ZoneGrid(entries: entries, boxes: boxes))
    }
}
