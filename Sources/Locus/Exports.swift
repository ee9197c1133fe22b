// Users of `import Locus` see the vocabulary (Site, Floor, Zone, PositionFix, ZoneEvent, LocusError, …).
@_exported import LocusCore
