import LocusCore
import LocusIO
import Synchronization

/// A provider that plays a recorded trace (SPEC §2: ranges, range differences or both) into a session, as fast as possible or in
/// real time. Rows go in time order (ties in file order), exactly as `locus replay` feeds them, so
/// the session's positions and events equal the command line's.
public final class TraceProvider: PositioningProvider {
    /// How fast the trace is played.
    public enum Pace: Sendable, Hashable {
        /// As fast as the session takes the rows (in chunks).
        case asFastAsPossible
        /// At `speed` × the recording's own pace (1 = real time): a row at tₖ is delivered
        /// (tₖ − t₀)/speed seconds after the first.
        case realTime(speed: Double)
    }

    /// Sleeps for the given seconds (injectable, so tests need no wall clock).
    public typealias Sleeper = @Sendable (Double) async -> Void

    private let measurements: [Measurement]
    private let lines: [Int]
    private let pace: Pace
    private let sleeper: Sleeper
    private let task = Mutex<Task<Void, Never>?>(nil)
    /// Rows per delivery when playing as fast as possible.
    private static let chunk = 4096

    /// A provider over the trace file at `path`.
    /// - Throws: `E5001`, `E5003`, `E5004` from the trace reader; `E1003` for a speed that is not positive.
    public convenience init(path: String, pace: Pace = .asFastAsPossible, sleeper: Sleeper? = nil) throws(LocusError) {
        try self.init(trace: try TraceReader.read(path: path), pace: pace, sleeper: sleeper)
    }

    /// A provider over ranges in memory (played in time order, ties in the given order).
    /// - Throws: `E1003` for a speed that is not positive.
    public convenience init(ranges: [RangeMeasurement], pace: Pace = .asFastAsPossible, sleeper: Sleeper? = nil) throws(LocusError) {
        let order = ranges.indices.sorted { ranges[$0].timeSeconds < ranges[$1].timeSeconds || (ranges[$0].timeSeconds == ranges[$1].timeSeconds && $0 < $1) }
        try self.init(measurements: order.map { .range(ranges[$0]) }, lines: order.map { $0 + 1 }, pace: pace, sleeper: sleeper)
    }

    /// A provider over a parsed trace.
    convenience init(trace: RangeTrace, pace: Pace = .asFastAsPossible, sleeper: Sleeper? = nil) throws(LocusError) {
        let order = trace.timeOrder()
        try self.init(measurements: order.map { trace[$0] }, lines: order.map { Int(trace.rows[$0].line) }, pace: pace, sleeper: sleeper)
    }

    private init(measurements: [Measurement], lines: [Int], pace: Pace, sleeper: Sleeper?) throws(LocusError) {
        if case .realTime(let speed) = pace, !(speed > 0 && speed.isFinite) {
            throw LocusError(.invalidArgument, "the playback speed must be a positive number, not \(speed)")
        }
        self.measurements = measurements
        self.lines = lines
        self.pace = pace
        self.sleeper = sleeper ?? { seconds in try? await Task.sleep(for: .seconds(seconds)) }
    }

    /// The number of rows the trace plays.
    public var count: Int { measurements.count }

    /// The data time the trace spans, seconds (last row − first row; 0 when empty).
    public var durationSeconds: Double {
        guard let first = measurements.first, let last = measurements.last else { return 0 }
        return last.timeSeconds - first.timeSeconds
    }

    /// Starts delivering into `output` (see `PositioningProvider`).
    public func start(output: ProviderOutput) {
        let measurements = self.measurements, lines = self.lines, pace = self.pace, sleeper = self.sleeper
        let playing = Task {
            switch pace {
            case .asFastAsPossible:
                var i = 0
                while i < measurements.count, output.isOpen, !Task.isCancelled {
                    let end = min(i + Self.chunk, measurements.count)
                    output.ingest(contentsOf: Array(measurements[i..<end]), lines: Array(lines[i..<end]))
                    i = end
                }
            case .realTime(let speed):
                guard let t0 = measurements.first?.timeSeconds else { return }
                var playedSeconds = 0.0
                var i = 0
                while i < measurements.count, output.isOpen, !Task.isCancelled {
                    let due = (measurements[i].timeSeconds - t0) / speed
                    if due > playedSeconds {
                        await sleeper(due - playedSeconds)
                        playedSeconds = due
                    }
                    var end = i + 1
                    while end < measurements.count, measurements[end].timeSeconds == measurements[i].timeSeconds { end += 1 }
                    output.ingest(contentsOf: Array(measurements[i..<end]), lines: Array(lines[i..<end]))
                    i = end
                }
            }
        }
        task.withLock { $0 = playing }
    }

    /// Stops delivering (see `PositioningProvider`).
    public func stop() { task.withLock { $0 }?.cancel() }

    /// Returns when the whole trace has been delivered (or playback was stopped).
    public func finished() async {
        await task.withLock { $0 }?.value
    }
}
