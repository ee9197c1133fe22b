// LocusCommandLine: see README.md
