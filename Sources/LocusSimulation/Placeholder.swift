// LocusSimulation: see README.md
