// Users of `import Locus` see the vocabulary: LocusCore's public declarations (Site, Floor, Locator,
// LocatorAddress, Zone, ZoneRules, TagID/FloorID/ZoneID, Point2/Point3/Vector3, SymmetricMatrix3,
// RangeMeasurement, PositionFix/FixQuality, ZoneEvent, LocusError/LocusErrorCode, LocusVersion).
// Everything else in LocusCore is `package` where another module uses it (TagClock, SkipReason/SkipTally,
// LocatorList, SeededGenerator, helpers), internal otherwise: invisible to users either way.
@_exported import LocusCore
