import Locus
import LocusCore
import LocusSolvers
import Synchronization

/// What one C engine handle owns: the positioning engine and the released output not yet polled.
struct EngineState: Sendable {
    /// The engine as every single-engine face drives it (smoothing, when asked, replaces the positions).
    var driver: EngineDriver
    /// The driven engine, to read.
    var engine: PositioningEngine { driver.engine }
    /// Released fixes; those before `fixRead` were polled.
    var fixes: [PositionFix] = []
    var fixRead = 0
    /// Released events; those before `eventRead` were polled.
    var events: [ZoneEvent] = []
    var eventRead = 0
    /// True after `locus_engine_finish`.
    var isFinished = false
    /// Ranges that joined an epoch.
    var rangesAccepted = 0
    /// What `locus_engine_summary` reports, counted as the queues fill (`EngineRun`).
    var run = EngineRun()

    init(driver: EngineDriver) {
        self.driver = driver
    }

    /// Whether the positions are smoothed offline (`LOCUS_OPTION_SMOOTH`).
    var isSmoothing: Bool { driver.smoothing != .none }

    /// Offers a row to the engine (and records it for the smoother).
    mutating func ingest(_ m: RangeMeasurement) {
        run.rowsRead += 1
        driver.ingest(m)
    }

    /// One range difference, by id.
    mutating func ingest(_ d: RangeDifference) {
        run.rowsRead += 1
        driver.ingest(d)
    }

    /// Finishes the engine; with smoothing, the held fixes are smoothed and released.
    /// - Throws: E4005 when the smoother's numbers go non-finite.
    mutating func finish() throws(LocusError) {
        try driver.finish()
        isFinished = true
        run.elapsedSeconds = RunResult.seconds(since: run.started)
    }

    /// Moves what the driver released into the poll queues (dropping what was polled).
    mutating func collect() {
        if driver.pendingFixCount > 0 {
            if fixRead > 0 { fixes.removeFirst(fixRead); fixRead = 0 }
            let before = fixes.count
            fixes.append(contentsOf: driver.drainFixes())
            run.add(fixes[before...])
        }
        if !driver.engine.events.isEmpty {
            if eventRead > 0 { events.removeFirst(eventRead); eventRead = 0 }
            let before = events.count
            events.append(contentsOf: driver.drainEvents())
            run.add(events[before...])
        }
    }

    /// Positions released and not yet polled (with smoothing: none before `finish()`).
    var pendingFixes: Int { fixes.count - fixRead + driver.pendingFixCount }
    /// Events released and not yet polled.
    var pendingEvents: Int { events.count - eventRead + driver.engine.events.count }
}

final class EngineBox: Sendable {
    let state: Mutex<EngineState>

    init(driver: EngineDriver) { state = Mutex(EngineState(driver: driver)) }
}

/// The live handles. A handle is `Unmanaged<EngineBox>` as an opaque pointer; a call first looks it
/// up here, so a destroyed (or never created) handle is an error, not a crash — unless its address
/// was reused by a newer engine.
enum EngineRegistry {
    private static let live = Mutex<Set<UInt>>([])

    /// Registers a new engine and returns its handle (retained until `remove`).
    static func insert(_ box: EngineBox) -> OpaquePointer {
        let raw = Unmanaged.passRetained(box).toOpaque()
        live.withLock { _ = $0.insert(UInt(bitPattern: raw)) }
        return OpaquePointer(raw)
    }

    /// The engine of a live handle (a strong reference: the engine outlives the call even if
    /// another thread destroys the handle meanwhile).
    /// - Throws: E1003 for NULL, E1002 for a handle that is not live.
    static func box(_ handle: OpaquePointer?) throws(LocusError) -> EngineBox {
        guard let handle else { throw LocusError(.invalidArgument, "engine is NULL") }
        let raw = UnsafeMutableRawPointer(handle)
        let found: EngineBox? = live.withLock { set in
            guard set.contains(UInt(bitPattern: raw)) else { return nil }
            return Unmanaged<EngineBox>.fromOpaque(raw).takeUnretainedValue()
        }
        guard let found else {
            throw LocusError(.callOrder, "not a live engine (destroyed, or never created by locus_engine_create_*)")
        }
        return found
    }

    /// Unregisters a handle and releases the registry's reference.
    /// - Throws: E1002 for a handle that is not live.
    static func remove(_ handle: OpaquePointer) throws(LocusError) {
        let raw = UnsafeMutableRawPointer(handle)
        let removed = live.withLock { $0.remove(UInt(bitPattern: raw)) != nil }
        guard removed else { throw LocusError(.callOrder, "not a live engine (already destroyed?)") }
        Unmanaged<EngineBox>.fromOpaque(raw).release()
    }

    /// Runs `body` on the state of a live handle, under its lock.
    /// - Throws: the lookup's errors and `body`'s.
    static func withState(_ handle: OpaquePointer?, _ body: (inout EngineState) throws(LocusError) -> Void) throws(LocusError) {
        let box = try box(handle)
        let outcome: LocusError? = box.state.withLock { state in
            do throws(LocusError) {
                try body(&state)
                return nil
            } catch {
                return error
            }
        }
        if let outcome { throw outcome }
    }
}
