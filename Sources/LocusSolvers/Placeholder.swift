// LocusSolvers: see README.md
