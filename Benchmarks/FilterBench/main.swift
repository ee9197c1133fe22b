import BenchHarness

Bench.banner("FilterBench")
