import BenchHarness

Bench.banner("ZonesBench")
