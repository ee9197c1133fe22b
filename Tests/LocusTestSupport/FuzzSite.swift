import LocusCore

/// The small fixed site the trace and live-stream fuzz targets run the engine on: 4 locators with
/// addresses 1…4 (easy for a fuzzer to hit), one at another height and one with a bias, two zones on
/// the first floor (a large one, and a small one with `inCount` 2), a second floor with the same
/// locators and no zones, and a third, "3F": a 6 × 6 m room with the same addresses in its corners at
/// 0.3–2.6 m and no biases, solved in 3-D (the 3-D track, its re-acquisition and the per-locator biases
/// it learns online on an uncalibrated floor: issue #42).
public enum FuzzSite {
    public static let site: Site = {
        var floor = Floor(id: FloorID("1F"), tagHeightMeters: 1.1)
        floor.locators = [
            Locator(address: LocatorAddress(1), position: Point3(x: 0, y: 0, z: 2.5)),
            Locator(address: LocatorAddress(2), position: Point3(x: 20, y: 0, z: 2.5)),
            Locator(address: LocatorAddress(3), position: Point3(x: 20, y: 15, z: 2.5)),
            Locator(address: LocatorAddress(4), position: Point3(x: 0, y: 15, z: 3.0), biasMeters: 0.1),
        ]
        var counted = ZoneRules.standard
        counted.inCount = 2
        floor.zones = [
            Zone(id: ZoneID("hall"), polygon: [Point2(x: 1, y: 1), Point2(x: 19, y: 1), Point2(x: 19, y: 14), Point2(x: 1, y: 14)]),
            Zone(id: ZoneID("desk"), polygon: [Point2(x: 5, y: 5), Point2(x: 7, y: 5), Point2(x: 6, y: 7)], rules: counted),
        ]
        var second = Floor(id: FloorID("2F"))
        second.locators = floor.locators
        var room = Floor(id: FloorID("3F"), tagHeightMeters: 1.2)
        room.locators = [
            Locator(address: LocatorAddress(1), position: Point3(x: 0, y: 0, z: 0.3)),
            Locator(address: LocatorAddress(2), position: Point3(x: 6, y: 0, z: 2.4)),
            Locator(address: LocatorAddress(3), position: Point3(x: 6, y: 6, z: 0.5)),
            Locator(address: LocatorAddress(4), position: Point3(x: 0, y: 6, z: 2.6)),
        ]
        return Site(building: Site.Building(id: "fuzz"), floors: [floor, second, room])
    }()
}
