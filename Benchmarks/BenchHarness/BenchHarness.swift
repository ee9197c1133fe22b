import Foundation

/// A small benchmark harness: warm-up, then ≥ 10 timed runs; median and p90 per item; one JSON
/// line per measurement on stdout. Setup stays outside the timed closure. Results are passed to
/// `blackHole` so the optimiser cannot drop the work.
public enum Bench {
    /// True in a release build (benchmarks in debug print a loud banner and mean nothing).
    public static var isRelease: Bool {
        #if DEBUG
        return false
        #else
        return true
        #endif
    }

    /// Smoke mode (`--smoke` or `LOCUS_BENCH_SMOKE=1`): one short run of everything, so CI keeps
    /// every benchmark compiling and running without measuring anything.
    public static let isSmoke: Bool =
        CommandLine.arguments.contains("--smoke") || ProcessInfo.processInfo.environment["LOCUS_BENCH_SMOKE"] == "1"

    /// Prints the banner once: build mode, machine, date.
    public static func banner(_ name: String) {
        if !isRelease {
            FileHandle.standardError.write(Data("""
            ************************************************************
            *  \(name): DEBUG BUILD — figures are meaningless.          *
            *  Run with: swift run -c release \(name)                    *
            ************************************************************

            """.utf8))
        }
        let cpu = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("model name") }?
            .split(separator: ":").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown CPU"
        let date = ISO8601DateFormatter().string(from: Date())
        FileHandle.standardError.write(Data("# \(name) — \(cpu), \(ProcessInfo.processInfo.activeProcessorCount) cores, \(date)\(isSmoke ? ", smoke mode" : "")\n".utf8))
    }

    /// Keeps a value alive so the work that produced it is not optimised away.
    @inline(never) public static func blackHole<T>(_ value: T) {
        withUnsafePointer(to: value) { sink = UnsafeRawPointer($0).hashValue &+ sink }
    }
    nonisolated(unsafe) static var sink = 0

    /// Monotonic time in nanoseconds.
    @inline(__always) public static func nowNanoseconds() -> UInt64 {
        DispatchTime.now().uptimeNanoseconds
    }

    /// The statistics of one measured item.
    public struct Result: Sendable {
        public var name: String
        /// Nanoseconds per operation: median and 90th percentile over the runs.
        public var medianNanosecondsPerOp: Double
        public var p90NanosecondsPerOp: Double
        public var operationsPerRun: Int
        public var runs: Int
        public var opsPerSecond: Double { medianNanosecondsPerOp > 0 ? 1e9 / medianNanosecondsPerOp : 0 }
    }

    /// Times `body`, which performs `operations` operations per call: warm-up runs, then `runs`
    /// timed runs (fewer in smoke mode). Prints a JSON line with `ns_per_op` (median, p90) and
    /// `ops_per_s`, plus `extra` fields, and returns the result.
    @discardableResult
    public static func measure(_ name: String, operations: Int, runs: Int = 15, warmup: Int = 3,
                               extra: [String: String] = [:], derived: ((Result) -> [String: String])? = nil,
                               _ body: () -> Void) -> Result {
        let timedRuns = isSmoke ? 1 : max(10, runs)
        for _ in 0..<(isSmoke ? 0 : warmup) { body() }
        var perOp: [Double] = []
        perOp.reserveCapacity(timedRuns)
        for _ in 0..<timedRuns {
            let t0 = nowNanoseconds()
            body()
            let t1 = nowNanoseconds()
            perOp.append(Double(t1 - t0) / Double(max(1, operations)))
        }
        perOp.sort()
        let median = perOp[perOp.count / 2]
        let p90 = perOp[min(perOp.count - 1, Int((Double(perOp.count) * 0.9).rounded(.up)) - 1)]
        let result = Result(name: name, medianNanosecondsPerOp: median, p90NanosecondsPerOp: p90,
                            operationsPerRun: operations, runs: timedRuns)
        var fields: [(String, String)] = [
            ("bench", "\"\(name)\""),
            ("ns_per_op", fmt(median)),
            ("ns_per_op_p90", fmt(p90)),
            ("ops_per_s", fmt(result.opsPerSecond)),
            ("ops_per_run", "\(operations)"),
            ("runs", "\(timedRuns)"),
            ("build", isRelease ? "\"release\"" : "\"debug\""),
        ]
        var all = extra
        if let derived { for (k, v) in derived(result) { all[k] = v } }
        for key in all.keys.sorted() { fields.append((key, all[key] ?? "")) }
        print("{" + fields.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}")
        return result
    }

    /// Per-fix figures against the 4 Hz budget for a result whose operation is one fix:
    /// fixes/s per core = 10⁹ / ns_per_fix; tags at 4 Hz per core = fixes/s ÷ 4; headroom against
    /// the 250 ms per tag-fix budget = 250 ms ÷ ns_per_fix (how many times over one core could do it).
    public static func perFix(_ r: Result) -> [String: String] {
        let ns = max(r.medianNanosecondsPerOp, 1e-9)
        return ["unit": "\"fix\"", "ns_per_fix": fmt(ns), "ns_per_fix_p90": fmt(r.p90NanosecondsPerOp),
                "fixes_per_s": fmt(1e9 / ns), "tags_at_4hz_per_core": fmt(1e9 / ns / 4),
                "headroom_x": fmt(250e6 / ns)]
    }

    /// Prints one JSON line of already-computed fields (keys sorted), for figures that are not
    /// timings (memory, latency percentiles, accuracy).
    public static func record(_ name: String, _ fields: [String: String]) {
        var parts = ["\"bench\": \"\(name)\""]
        for key in fields.keys.sorted() { parts.append("\"\(key)\": \(fields[key] ?? "null")") }
        parts.append("\"build\": \(isRelease ? "\"release\"" : "\"debug\"")")
        print("{" + parts.joined(separator: ", ") + "}")
    }

    /// Fixed formatting for figures: up to 4 significant decimals, no exponent for normal sizes.
    public static func fmt(_ x: Double) -> String {
        if x >= 1000 { return String(format: "%.0f", x) }
        if x >= 1 { return String(format: "%.2f", x) }
        return String(format: "%.4g", x)
    }
}
