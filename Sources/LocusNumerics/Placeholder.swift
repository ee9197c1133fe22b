// LocusNumerics: see README.md
