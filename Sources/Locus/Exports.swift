// Users of `import Locus` see the vocabulary: LocusCore's public declarations (Site, Floor, Locator,
// LocatorAddress, Zone, ZoneRules, TagID/FloorID/ZoneID, Point2/Point3/Vector3, SymmetricMatrix3,
// RangeMeasurement, PositionFix/FixQuality, ZoneEvent, LocusError/LocusErrorCode, LocusVersion).
// Everything else in LocusCore (TagClock, SkipReason/SkipTally, LocatorList, SeededGenerator,
// HorizontalAccuracy, helpers) is `package`: shared by the package's modules, invisible to users.
@_exported import LocusCore
