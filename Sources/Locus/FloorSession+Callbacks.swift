import LocusCore
import Synchronization

// The session's outputs as callbacks, the debug log and `AsyncStream`s.
extension FloorSession {
    /// Called with every position, in (time, tag) order.
    public var onPosition: PositionHandler? {
        get { state.withLock { $0.handlers.position } }
        set { state.withLock { $0.handlers.position = newValue } }
    }
    /// Called when a tag enters a zone (SPEC §4.2).
    public var onZoneEnter: ZoneHandler? {
        get { state.withLock { $0.handlers.zoneEnter } }
        set { state.withLock { $0.handlers.zoneEnter = newValue } }
    }
    /// Called when a tag leaves a zone (SPEC §4.3).
    public var onZoneExit: ZoneHandler? {
        get { state.withLock { $0.handlers.zoneExit } }
        set { state.withLock { $0.handlers.zoneExit = newValue } }
    }
    /// Called at each dwell time k·dwellSeconds after entry (SPEC §4.4) with the seconds since entry.
    public var onZoneDwell: DwellHandler? {
        get { state.withLock { $0.handlers.zoneDwell } }
        set { state.withLock { $0.handlers.zoneDwell = newValue } }
    }

    /// Installs the debug-log hook: it receives each message at `minimumLevel` or above.
    public func setDebugLog(minimumLevel: LogLevel = .log, _ hook: LogHandler?) {
        state.withLock {
            $0.handlers.log = hook
            $0.handlers.minimumLevel = minimumLevel
        }
    }

    /// Chooses the language of log texts: `"en"`, `"ko"` or `"ja"`; nil means the process locale
    /// (`LC_ALL`, `LC_MESSAGES`, `LANG`).
    /// - Throws: `E1003` for another language.
    public func setLanguage(_ code: String?) throws(LocusError) {
        var language: LogLanguage? = nil
        if let code {
            guard let l = LogLanguage(code: code) else {
                throw LocusError(.invalidArgument, "no log texts in '\(code)': use en, ko or ja")
            }
            language = l
        }
        state.withLock { $0.handlers.language = language }
    }

    /// A stream of every position from now on; it finishes at `end()`.
    public func positionStream() -> AsyncStream<PositionFix> { makeStream(\.positionContinuations) }

    /// A stream of every zone event (enter, dwell, exit) from now on; it finishes at `end()`.
    public func zoneEventStream() -> AsyncStream<ZoneEvent> { makeStream(\.eventContinuations) }

    /// A new stream registered in the continuation table at `table`, removed from it when the
    /// consumer stops listening.
    private func makeStream<Element: Sendable>(
        _ table: WritableKeyPath<State, [Int: AsyncStream<Element>.Continuation]> & Sendable
    ) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream()
        let id = state.withLock { s in
            s.nextContinuation += 1
            s[keyPath: table][s.nextContinuation] = continuation
            return s.nextContinuation
        }
        continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0[keyPath: table].removeValue(forKey: id) } }
        return stream
    }
}
