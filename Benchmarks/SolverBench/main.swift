import BenchHarness

Bench.banner("SolverBench")
GeometryBench.run()
