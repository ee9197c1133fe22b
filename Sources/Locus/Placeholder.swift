// Locus: see README.md
