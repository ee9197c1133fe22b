import BenchHarness

Bench.banner("PipelineBench")
