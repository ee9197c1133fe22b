import BenchHarness

Bench.banner("SolverBench")
