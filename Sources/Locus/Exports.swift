// Users of `import Locus` see the vocabulary: LocusCore's public declarations (Site, Floor, Locator,
// LocatorAddress, Zone, ZoneRules, TagID/FloorID/ZoneID, Point2/Point3/Vector3, SymmetricMatrix3,
// RangeMeasurement, PositionFix/FixQuality, ZoneEvent, LocusError/LocusErrorCode, LocusVersion,
// SkipReason/SkipTally).
// Everything else in LocusCore is `package` where another module uses it (TagClock, LocatorList,
// SeededGenerator, helpers), internal otherwise: invisible to users either way.
//
// And LocusSolvers' public declarations: the solver without an engine — the search `locus_solve` and
// `locus_dop` of the C ABI run — one epoch's weighted least-squares fix (`Trilaterator` /
// `Trilaterating`, `TrilaterationConfiguration`, `TrilaterationMode`, `TrilaterationSolution`, and the
// `TrilaterationWorkspace` that makes repeated solves allocation-free), the dilution of precision of a
// layout at a point (`GeometryQuality.dop`, `DilutionOfPrecision`), and the calibration's result types
// (`SelfCalibration`, `SelfCalibratedLocator`, named `SiteCalibration.FloorReport`/`LocatorReport`).
//
// And LocusIO's public declarations: the SPEC files from Swift, byte for byte as `locus` reads and
// writes them — a site (`SiteDecoder` load/decode/validate, `SiteEncoder.encode`, with the input's
// address notation kept through `SiteAddressNotation`), a trace (`TraceReader.read(path:)` → `RangeTrace`:
// its measurements and the rows skipped by reason), a truth file (`GroundTruth`), positions CSV
// (`PositionsWriter`) and zone events JSON Lines (`ZoneEventWriter`).
@_exported import LocusCore
@_exported import LocusSolvers
@_exported import LocusIO
