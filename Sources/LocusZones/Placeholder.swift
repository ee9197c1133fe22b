// LocusZones: see README.md
