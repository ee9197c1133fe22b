// LocusIO: see README.md
