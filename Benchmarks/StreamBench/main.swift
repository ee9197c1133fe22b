// StreamBench: `locus stream` end to end, as a live deployment runs it (issue 16).
//
// A simulated site (`ManyTagScenario`: 8 locators, 50 zones) and N tags ranging every locator once
// per 0.25 s are sent **in real time** to a `locus stream` child process — over UDP (one datagram
// per round: its 8 CSV rows) or over MQTT (one QoS 1 message per round: a JSON array of its 8
// rows) through a private `mosquitto` on 127.0.0.1 —, and the child's positions (CSV on its
// stdout) are read back as they come. Latency of a fix = the time its line is read − the time its
// round's last range was sent (one monotonic clock: both ends are in this process). Reported:
// p50/p99/max after a warm-up, rounds sent, fixes received, loss, the child's CPU time, and how far
// the sender fell behind its schedule.
//
//   swift build -c release --product locus --product StreamBench
//   .build/release/StreamBench [--transport udp|mqtt|both] [--tags 10000] [--seconds 30] [--warmup 5]
//                              [--locus .build/release/locus] [--tick-ms 100] [--smoke]
//                              [--serve [--viewers N [--viewer-mode page|feed]]]
//
// `--serve` runs `locus serve --input … --positions -` in place of `locus stream` (the same engine,
// plus the feed and its HTTP server), and `--viewers N` opens N pages of it in one headless Chromium
// (scripts/browser/viewers.py) for the run: the latency is still the engine's (send → positions line),
// and the viewers report their frame rate and long frames (issue #43).
#if canImport(Glibc)
import Glibc
#endif
import BenchHarness
import Foundation
import LocusCore
import LocusIO
import LocusLive
import LocusSimulation
import LocusTestSupport

struct Options {
    var transports = ["udp", "mqtt"]
    var tags = 10_000
    var seconds = 30.0
    var warmup = 5.0
    var locus = ".build/release/locus"
    var tickMilliseconds = 100
    /// Rounds sent together in one message (a gateway that forwards every B ms); 0: one per round.
    var batchMilliseconds = 0.0
    /// `locus serve` in place of `locus stream`, and the browser pages watching it.
    var serve = false
    var viewers = 0
    /// `page`: headless Chromium pages; `feed`: plain SSE readers (scripts/browser/viewers.py).
    var viewerMode = "page"

    init(_ arguments: [String]) {
        var i = 1
        func value() -> String { i += 1; return i < arguments.count ? arguments[i] : "" }
        while i < arguments.count {
            switch arguments[i] {
            case "--transport": let v = value(); transports = v == "both" ? ["udp", "mqtt"] : [v]
            case "--tags": tags = Int(value()) ?? tags
            case "--seconds": seconds = Double(value()) ?? seconds
            case "--warmup": warmup = Double(value()) ?? warmup
            case "--locus": locus = value()
            case "--tick-ms": tickMilliseconds = Int(value()) ?? tickMilliseconds
            case "--batch-ms": batchMilliseconds = Double(value()) ?? batchMilliseconds
            case "--serve": serve = true
            case "--viewers": viewers = Int(value()) ?? viewers; serve = true
            case "--viewer-mode": viewerMode = value()
            default: break
            }
            i += 1
        }
        if Bench.isSmoke { tags = 200; seconds = 3; warmup = 1 }
    }
}

func monotonic() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

/// Appends `value` with `decimals` decimals (value ≥ 0), without Foundation's formatter.
func appendFixed(_ value: Double, decimals: Int, to out: inout [UInt8]) {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let n = UInt64((value * scale).rounded())
    let whole = n / UInt64(scale), fraction = n % UInt64(scale)
    out.append(contentsOf: String(whole).utf8)
    out.append(UInt8(ascii: "."))
    let digits = String(fraction)
    for _ in digits.count..<decimals { out.append(UInt8(ascii: "0")) }
    out.append(contentsOf: digits.utf8)
}

/// The result of one run.
struct Outcome {
    var transport: String
    var rounds = 0
    var measuredRounds = 0
    var fixes = 0
    var measuredFixes = 0
    var latencies: [Double] = []
    var childCPUSeconds = 0.0
    var wallSeconds = 0.0
    var senderBehindMax = 0.0
    var childSummary = ""
    /// The viewers' report (scripts/browser/viewers.py's JSON), with --viewers.
    var viewerReport = ""
}

/// Each round's send time (monotonic seconds; NaN until sent), written by the sender before the
/// send and read by the reader after the fix it caused came back through the child — the send and
/// the pipe read order the accesses.
final class SendTimes: @unchecked Sendable {
    let buffer: UnsafeMutableBufferPointer<Double>
    init(count: Int) {
        buffer = .allocate(capacity: count)
        buffer.initialize(repeating: .nan)
    }
    deinit { buffer.deallocate() }
}

final class Locked<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T
    init(_ value: T) { self.value = value }
    func with<R>(_ body: (inout T) -> R) -> R { lock.lock(); defer { lock.unlock() }; return body(&value) }
}

func run(transport: String, options: Options, sitePath: String, site: Site) throws -> Outcome {
    var outcome = Outcome(transport: transport)
    let broker: MosquittoBroker? = transport == "mqtt" ? try MosquittoBroker() : nil
    let input = transport == "mqtt" ? "mqtt://127.0.0.1:\(broker!.port)/bench/ranges" : "udp://127.0.0.1:0"

    let process = Process()
    process.executableURL = URL(fileURLWithPath: options.locus)
    process.arguments = options.serve
        ? ["serve", "--site", sitePath, "--input", input, "--tick-ms", String(options.tickMilliseconds), "--positions", "-"]
        : ["stream", "--site", sitePath, "--input", input, "--tick-ms", String(options.tickMilliseconds)]
    let stdout = Pipe(), stderr = Pipe()
    process.standardOutput = stdout
    process.standardError = stderr
    try process.run()

    // The child's first stderr line names its input (the UDP port it bound).
    let errHandle = stderr.fileHandleForReading
    var errText = ""
    while !errText.contains("\n") {
        let d = errHandle.availableData
        if d.isEmpty { break }
        errText += String(decoding: d, as: UTF8.self)
    }
    let errRest = Locked("")
    let errThread = Thread {
        while true { let d = errHandle.availableData; if d.isEmpty { break }; errRest.with { $0 += String(decoding: d, as: UTF8.self) } }
    }
    errThread.start()
    guard errText.hasPrefix("locus stream: ") || errText.hasPrefix("locus serve: ") else {
        throw NSError(domain: "StreamBench: locus did not start: \(errText)", code: 1)
    }
    // The first line names the input (`udp://127.0.0.1:PORT`) and, for serve, the page's URL.
    func port(after scheme: String) -> UInt16? {
        guard let r = errText.range(of: scheme) else { return nil }
        let rest = errText[r.upperBound...].prefix { $0 != " " && $0 != "/" && $0 != "\n" }
        return rest.split(separator: ":").last.flatMap { UInt16($0) }
    }
    var viewers: Process? = nil
    let viewerOut = Pipe()
    if options.viewers > 0, let http = port(after: "http://") {
        let v = Process()
        v.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        v.arguments = ["python3", "scripts/browser/viewers.py", "--url", "http://127.0.0.1:\(http)/", "--count", String(options.viewers),
                       "--seconds", String(options.seconds + 1), "--mode", options.viewerMode]
        let viewerErr = Pipe()
        v.standardOutput = viewerOut
        v.standardError = viewerErr
        try v.run()
        viewers = v
        // The pages load and open their feeds before the load starts ("viewers ready" on stderr).
        var said = ""
        while !said.contains("viewers ready") {
            let d = viewerErr.fileHandleForReading.availableData
            if d.isEmpty { throw NSError(domain: "StreamBench: the viewers did not start: \(said)", code: 1) }
            said += String(decoding: d, as: UTF8.self)
        }
    }

    let roundsPerTag = Int(options.seconds * 4)
    let tagCount = options.tags
    let sendTimes = SendTimes(count: roundsPerTag * tagCount)
    let warmupRound = Int(options.warmup * 4)

    // Reader: positions CSV lines → latency of (tag, round).
    let results = Locked((fixes: 0, measured: 0, latencies: [Double]()))
    let outFD = stdout.fileHandleForReading.fileDescriptor
    let reader = Thread {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var pending: [UInt8] = []
        var latencies: [Double] = []
        var fixes = 0, measured = 0
        var header = true
        while true {
            let n = buffer.withUnsafeMutableBytes { read(outFD, $0.baseAddress!, $0.count) }
            if n <= 0 { break }
            let now = monotonic()
            pending.append(contentsOf: buffer[0..<n])
            var start = 0
            for i in 0..<pending.count where pending[i] == 0x0A {
                let lineStart = start
                start = i + 1
                if header { header = false; continue }
                // t,T<j>,…: t with 3 decimals → milliseconds; j the tag's number. Bytes, no strings.
                var k = lineStart, ms = 0, j = 0
                while k < i, pending[k] != UInt8(ascii: ",") {
                    if pending[k] != UInt8(ascii: ".") { ms = ms * 10 + Int(pending[k] &- 0x30) }
                    k += 1
                }
                k += 2  // ",T"
                while k < i, pending[k] != UInt8(ascii: ",") { j = j * 10 + Int(pending[k] &- 0x30); k += 1 }
                fixes += 1
                let round = ms / 250
                guard round >= warmupRound, round < roundsPerTag, j < tagCount else { continue }
                let sent = sendTimes.buffer[round * tagCount + j]
                guard sent.isFinite else { continue }
                latencies.append(now - sent)
                measured += 1
            }
            pending.removeFirst(start)
        }
        results.with { $0 = (fixes, measured, latencies) }
    }
    reader.start()

    // Sender: rounds in real time, one datagram / message per round.
    let udp: UDPSender? = transport == "udp" ? try UDPSender(host: "127.0.0.1", port: port(after: "udp://")!) : nil
    let mqtt: MQTTClient? = transport == "mqtt" ? try MQTTClient(configuration: .standard(clientID: "stream-bench"), log: { _ in }) : nil
    if let mqtt { try mqtt.connect(host: "127.0.0.1", port: broker!.port) }
    var payload: [UInt8] = []
    payload.reserveCapacity(1024)
    var rowsInRound = 0
    var roundTag = 0, roundIndex = 0
    var behindMax = 0.0
    let n = site.floors[0].locators.count
    let start = monotonic() + 0.5
    var failure: Error? = nil
    // The message being filled: one round, or (with --batch-ms) the rounds due within B ms of its first.
    var pending: [Int] = []  // round × tags + tag of the rounds in `payload`
    var batchDue = 0.0
    let batch = options.batchMilliseconds / 1000
    func send() {
        guard !pending.isEmpty, failure == nil else { return }
        if mqtt != nil { payload.append(UInt8(ascii: "]")) }
        // Stamped before the send: the reader sees the stamp after the fix it caused.
        let stamp = monotonic()
        for r in pending { sendTimes.buffer[r] = stamp }
        do {
            if let udp { try udp.send(payload) } else { try mqtt!.publish(topic: "bench/ranges", payload: payload, qos: 1) }
        } catch { failure = error }
        pending.removeAll(keepingCapacity: true)
        payload.removeAll(keepingCapacity: true)
    }
    ManyTagScenario.generate(site: site, tags: tagCount, rounds: roundsPerTag, seed: 42,
                             epoch: { k, j, _ in
        roundTag = j; roundIndex = k; rowsInRound = 0
    }, emit: { j, slot, range, t in
        guard failure == nil else { return }
        // The round's last range is due at start + t: a batch whose window it passes goes first.
        if rowsInRound == 0, !pending.isEmpty, start + t > batchDue { send() }
        if payload.isEmpty {
            if mqtt != nil { payload.append(UInt8(ascii: "[")) }
            batchDue = start + t + batch
        }
        let anchor = String(Int(site.floors[0].locators[slot].address.rawValue))
        if mqtt != nil {
            if payload.count > 1 { payload.append(UInt8(ascii: ",")) }
            payload.append(contentsOf: "{\"t\":".utf8); appendFixed(t, decimals: 6, to: &payload)
            payload.append(contentsOf: ",\"tag\":\"T\(j)\",\"anchor\":\(anchor),\"range_m\":".utf8)
            appendFixed(range, decimals: 4, to: &payload); payload.append(UInt8(ascii: "}"))
        } else {
            appendFixed(t, decimals: 6, to: &payload)
            payload.append(contentsOf: ",T\(j),\(anchor),".utf8)
            appendFixed(range, decimals: 4, to: &payload); payload.append(0x0A)
        }
        rowsInRound += 1
        guard rowsInRound == n else { return }
        pending.append(roundIndex * tagCount + roundTag)
        // Send when the batch's window is over (at once without batching): sleep while it is over
        // 0.3 ms ahead, never spin (the sender must not take a core from the stream it measures;
        // latency counts from the actual send).
        let due = batch > 0 ? batchDue : start + t
        if batch > 0 && payload.count < 60_000 && start + t < batchDue { return }
        var now = monotonic()
        while due - now > 0.0003 {
            var ts = timespec(tv_sec: 0, tv_nsec: Int((due - now - 0.0002) * 1e9))
            nanosleep(&ts, nil)
            now = monotonic()
        }
        behindMax = max(behindMax, now - due)
        send()
    })
    send()
    if let failure { throw failure }
    let sentAll = monotonic()
    // Let the last rounds through, then drain the child.
    Thread.sleep(forTimeInterval: 1.0)
    mqtt?.close()
    // The child's CPU time so far (utime + stime, /proc/PID/stat fields 14 and 15, in clock ticks).
    let stat = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8)) ?? ""
    let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
    let ticks = fields.count > 13 ? (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0) : 0
    outcome.childCPUSeconds = ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    if let viewers {
        viewers.waitUntilExit()
        outcome.viewerReport = String(decoding: viewerOut.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }
    process.interrupt()  // SIGINT: drain
    process.waitUntilExit()
    reader.cancel()
    while !reader.isFinished { Thread.sleep(forTimeInterval: 0.01) }
    while !errThread.isFinished { Thread.sleep(forTimeInterval: 0.01) }
    outcome.wallSeconds = sentAll - start
    outcome.rounds = roundsPerTag * tagCount
    outcome.measuredRounds = (roundsPerTag - warmupRound) * tagCount
    let r = results.with { $0 }
    outcome.fixes = r.fixes
    outcome.measuredFixes = r.measured
    outcome.latencies = r.latencies.sorted()
    outcome.senderBehindMax = behindMax
    outcome.childSummary = errRest.with { $0 }
    broker?.stop()
    return outcome
}

Bench.banner("StreamBench")
let options = Options(CommandLine.arguments)
let site = ManyTagScenario.site(locators: 8, zones: 50, seed: 1)
let directory = NSTemporaryDirectory() + "stream-bench-\(getpid())"
try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: directory) }
let sitePath = directory + "/site.json"
_ = FileManager.default.createFile(atPath: sitePath, contents: Data(SiteEncoder.encode(site)))

for transport in options.transports {
    if transport == "mqtt" && !MosquittoBroker.isAvailable { print("# mqtt skipped: \(MosquittoBroker.unavailableMessage)"); continue }
    let o = try run(transport: transport, options: options, sitePath: sitePath, site: site)
    func q(_ p: Double) -> Double { o.latencies.isEmpty ? .nan : o.latencies[min(o.latencies.count - 1, Int(p * Double(o.latencies.count)))] * 1000 }
    let cpu = o.childCPUSeconds
    let missing = o.measuredRounds - o.measuredFixes
    var key = options.batchMilliseconds > 0 ? "\(o.transport)_batch\(Int(options.batchMilliseconds))ms" : o.transport
    if options.serve { key = "serve_\(key)_viewers\(options.viewers)\(options.viewers > 0 ? options.viewerMode : "")" }
    print(String(format: "{\"bench\":\"stream_%@\",\"batch_ms\":%g,\"transport\":\"%@\",\"tags\":%d,\"seconds\":%.0f,\"rounds\":%d,\"fixes\":%d,\"measured_rounds\":%d,\"measured_fixes\":%d,\"missing\":%d,\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f,\"locus_cpu_s\":%.2f,\"locus_cpu_per_s\":%.3f,\"sender_behind_max_ms\":%.2f}",
                 key, options.batchMilliseconds, o.transport, options.tags, options.seconds, o.rounds, o.fixes, o.measuredRounds, o.measuredFixes, missing,
                 q(0.5), q(0.99), o.latencies.last.map { $0 * 1000 } ?? .nan, cpu, cpu / max(o.wallSeconds, 1e-9), o.senderBehindMax * 1000))
    if !o.viewerReport.isEmpty { print("{\"bench\":\"stream_\(key)_pages\",\"pages\":\(o.viewerReport)}") }
    FileHandle.standardError.write(Data(("# locus said: " + o.childSummary.replacingOccurrences(of: "\n", with: " | ") + "\n").utf8))
}
