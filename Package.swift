// swift-tools-version:6.0
// Locus — UWB ranges to positions and zone events.
// Targets are listed in dependency order: C below, the vocabulary next, the stages, the facade, the edges.
import PackageDescription

let package = Package(
    name: "Locus",
    products: [
        .library(name: "Locus", targets: ["Locus"]),
        .executable(name: "locus", targets: ["locus"]),
        // liblocus.so: the C ABI (header include/locus.h) for C, C++, Python and ROS stacks.
        .library(name: "locus-c", type: .dynamic, targets: ["LocusC"]),
    ],
    targets: [
        // System library: LAPACKE + CBLAS (Debian: liblapacke-dev, libopenblas-dev).
        .systemLibrary(name: "CLapacke", path: "Sources/CLapacke"),
        // System library: zlib (Debian: zlib1g-dev), for gzip-compressed traces (LocusIO only).
        .systemLibrary(name: "CZlib", path: "Sources/CZlib"),
        // System library: libmosquitto (Debian: libmosquitto-dev), the MQTT client of `locus stream` (LocusLive only).
        .systemLibrary(name: "CMosquitto", path: "Sources/CMosquitto"),
        // Fixed-size, allocation-free C kernels for the per-fix hot path.
        .target(name: "CLocusKernels", path: "Sources/CLocusKernels", exclude: ["README.md"]),
        .target(name: "LocusCore", exclude: ["README.md"]),
        .target(name: "LocusNumerics", dependencies: ["LocusCore", "CLapacke", "CLocusKernels"], exclude: ["README.md"]),
        .target(name: "LocusSolvers", dependencies: ["LocusCore", "LocusNumerics", "CLocusKernels"], exclude: ["README.md"]),
        .target(name: "LocusZones", dependencies: ["LocusCore", "LocusNumerics"], exclude: ["README.md"]),
        .target(name: "LocusIO", dependencies: ["LocusCore", "CZlib"], exclude: ["README.md"]),
        .target(name: "LocusSimulation", dependencies: ["LocusCore"], exclude: ["README.md"]),
        // Network I/O of `locus stream`: endpoint URIs, a UDP receiver, an MQTT client over libmosquitto.
        .target(name: "LocusLive", dependencies: ["LocusCore", "CMosquitto"], exclude: ["README.md"]),
        .target(name: "Locus", dependencies: ["LocusCore", "LocusNumerics", "LocusSolvers", "LocusZones", "LocusIO"], exclude: ["README.md"]),
        // Whole-recording runs as a library: replay, accuracy and zone scoring against truth, summaries, the verdict.
        .target(name: "LocusEvaluation", dependencies: ["Locus", "LocusCore", "LocusNumerics", "LocusSolvers", "LocusZones", "LocusIO"], exclude: ["README.md"]),
        // SVG drawings: the replay report, the geometry heatmap, and their label and clipping helpers.
        .target(name: "LocusReports", dependencies: ["LocusEvaluation", "LocusCore", "LocusNumerics", "LocusSolvers", "LocusZones", "LocusIO"], exclude: ["README.md"]),
        // The browser view of `locus serve`: the page (compiled in) and the feed's messages.
        .target(name: "LocusServe", dependencies: ["Locus", "LocusCore", "LocusIO", "LocusSolvers", "LocusLive"], exclude: ["README.md"],
                resources: [.embedInCode("Page/index.html"), .embedInCode("Page/app.js"), .embedInCode("Page/app.css")]),
        .target(name: "LocusCommandLine", dependencies: ["Locus", "LocusCore", "LocusNumerics", "LocusSolvers", "LocusZones", "LocusIO", "LocusSimulation", "LocusLive", "LocusEvaluation", "LocusReports", "LocusServe"], exclude: ["README.md"]),
        .executableTarget(name: "locus", dependencies: ["LocusCommandLine", "LocusNumerics", "LocusIO"]),
        // The C ABI: exported `locus_*` functions over the engine and the solver.
        .target(name: "LocusC", dependencies: ["Locus", "LocusCore", "LocusSolvers", "LocusIO", "LocusZones", "LocusEvaluation", "LocusReports"],
                exclude: ["README.md"]),
        // A runnable example: a FloorSession fed by a TraceProvider.
        .executableTarget(name: "FloorSessionExample", dependencies: ["Locus"], path: "Examples/FloorSessionExample"),
        .executableTarget(name: "SolverExample", dependencies: ["Locus"], path: "Examples/SolverExample"),
        .executableTarget(name: "CalibrationExample", dependencies: ["Locus"], path: "Examples/CalibrationExample"),
        // The child process of the durable-spool kill test (Tests/LocusTests/SpoolKillTests.swift).
        .executableTarget(name: "SpoolChild", dependencies: ["Locus"], path: "Tests/SpoolChild"),
        .target(name: "BenchHarness", path: "Benchmarks/BenchHarness"),
        .executableTarget(name: "SolverBench", dependencies: ["BenchHarness", "LocusCore", "LocusNumerics", "LocusSolvers"],
                          path: "Benchmarks/SolverBench"),
        .executableTarget(name: "FilterBench", dependencies: ["BenchHarness", "CLocusKernels", "LocusCore", "LocusNumerics", "LocusSolvers"],
                          path: "Benchmarks/FilterBench"),
        .executableTarget(name: "ZonesBench", dependencies: ["BenchHarness", "LocusCore", "LocusZones"],
                          path: "Benchmarks/ZonesBench"),
        .executableTarget(name: "PipelineBench", dependencies: ["BenchHarness", "Locus", "LocusCore", "LocusIO", "LocusSolvers", "LocusZones", "LocusSimulation", "LocusNumerics"],
                          path: "Benchmarks/PipelineBench"),

        // The soak run of issue #9 (scripts/soak): simulated hours of many tags through the engine.
        .executableTarget(name: "StreamBench", dependencies: ["BenchHarness", "LocusCore", "LocusIO", "LocusLive", "LocusSimulation", "LocusTestSupport"],
                          path: "Benchmarks/StreamBench"),
        .executableTarget(name: "LocusSoak", dependencies: ["Locus", "LocusCore", "LocusSimulation", "LocusTestSupport"], path: "Fuzz/Soak"),

        .target(name: "LocusTestSupport", dependencies: ["LocusCore"], path: "Tests/LocusTestSupport"),
        .testTarget(name: "LocusCoreTests", dependencies: ["LocusCore", "LocusTestSupport"]),
        .testTarget(name: "LocusSolversTests", dependencies: ["LocusCore", "LocusNumerics", "LocusSolvers", "LocusTestSupport", "LocusSimulation"]),
        .testTarget(name: "LocusZonesTests", dependencies: ["LocusCore", "LocusZones"]),
        .testTarget(name: "LocusIOTests", dependencies: ["LocusCore", "LocusIO", "LocusTestSupport"]),
        .testTarget(name: "LocusTests", dependencies: ["Locus", "LocusCore", "LocusNumerics", "LocusSolvers", "LocusIO", "LocusSimulation", "LocusTestSupport"]),
        .testTarget(name: "LocusLiveTests", dependencies: ["LocusCore", "LocusLive", "LocusTestSupport"]),
        // CZlib: the heatmap tests decode the PNGs rsvg-convert renders.
        .testTarget(name: "LocusCommandLineTests", dependencies: ["LocusCommandLine", "LocusEvaluation", "LocusReports", "Locus", "LocusCore", "LocusIO", "LocusLive", "LocusZones", "LocusSimulation", "LocusServe", "LocusTestSupport", "CZlib"]),
    ]
)

// Fuzz targets (libFuzzer; issue #9). They define `LLVMFuzzerTestOneInput` and no `main` (libFuzzer
// brings it), so a plain `swift build` could not link them: they exist only when LOCUS_FUZZ is set,
// as `scripts/fuzz` does (`LOCUS_FUZZ=1 swift build --sanitize=fuzzer --scratch-path .build-fuzz`).
if Context.environment["LOCUS_FUZZ"] != nil {
    package.targets += [
        .executableTarget(name: "FuzzSiteDecoder", dependencies: ["Locus", "LocusCore", "LocusIO"],
                          path: "Fuzz/FuzzSiteDecoder"),
        .executableTarget(name: "FuzzTraceReader", dependencies: ["Locus", "LocusCore", "LocusIO", "LocusTestSupport"],
                          path: "Fuzz/FuzzTraceReader"),
        .executableTarget(name: "FuzzSolver", dependencies: ["LocusCore", "LocusSolvers"],
                          path: "Fuzz/FuzzSolver"),
        .executableTarget(name: "FuzzLiveStream", dependencies: ["Locus", "LocusCore", "LocusIO", "LocusServe", "LocusTestSupport"],
                          path: "Fuzz/FuzzLiveStream"),
    ]
}

// The tests' build in CI (scripts/test sets LOCUS_OPTIMIZED_TESTS=1): the package's own modules compiled
// with -O, their assertions kept (-assert-config Debug), the test modules left at -Onone; still a debug
// build, so `@testable` works. On 2 cores the suite ran 991 s → 140 s for 5 → 9 min of build. A plain
// `swift build` / `swift test`, and any package depending on Locus, never see these flags (switching
// between the two rebuilds .build/debug); release builds are untouched.
if Context.environment["LOCUS_OPTIMIZED_TESTS"] == "1" {
    for target in package.targets where target.type != .test && target.type != .system {
        if target.name == "CLocusKernels" {
            target.cSettings = [.unsafeFlags(["-O2"], .when(configuration: .debug))]
        } else {
            target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-O", "-assert-config", "Debug"], .when(configuration: .debug))]
        }
    }
}
