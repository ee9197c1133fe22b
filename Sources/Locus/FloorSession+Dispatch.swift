import LocusCore
import Synchronization

// Dispatch: what the engine released, and the log, go to the callbacks, the streams and the sink
// outside the lock, one thread at a time, in order.
extension FloorSession {
    func dispatch() {
        let claimed = state.withLock { s -> Bool in
            guard !s.isDispatching, !s.queue.isEmpty else { return false }
            s.isDispatching = true
            return true
        }
        guard claimed else { return }
        while true {
            let work = state.withLock { s -> (items: [Item], handlers: Handlers, positions: [AsyncStream<PositionFix>.Continuation],
                                              events: [AsyncStream<ZoneEvent>.Continuation])? in
                guard !s.queue.isEmpty else {
                    s.isDispatching = false
                    return nil
                }
                let items = s.queue
                s.queue.removeAll(keepingCapacity: true)
                return (items, s.handlers, s.positionContinuations.sorted { $0.key < $1.key }.map(\.value),
                        s.eventContinuations.sorted { $0.key < $1.key }.map(\.value))
            }
            guard let work else { return }
            for item in work.items {
                switch item {
                case .position(let fix):
                    work.handlers.position?(fix)
                    for c in work.positions { c.yield(fix) }
                case .event(let event):
                    let zone = zonesByFloor[event.floor]?[event.zone] ?? Zone(id: event.zone, polygon: [])
                    switch event.kind {
                    case .enter: work.handlers.zoneEnter?(zone, event)
                    case .exit: work.handlers.zoneExit?(zone, event)
                    case .dwell: work.handlers.zoneDwell?(zone, event.dwellSeconds ?? 0, event)
                    }
                    for c in work.events { c.yield(event) }
                case .log(let message):
                    emit(message, work.handlers)
                case .deliverPending:
                    deliverPending(work.handlers)
                case .finishStreams:
                    for c in work.positions { c.finish() }
                    for c in work.events { c.finish() }
                    state.withLock { s in
                        s.positionContinuations.removeAll()
                        s.eventContinuations.removeAll()
                    }
                }
            }
        }
    }

    /// Offers the pending batches to the sink in order; stops at the first it refuses.
    private func deliverPending(_ handlers: Handlers) {
        guard let sink else { return }
        while let batch = state.withLock({ $0.delivery.nextPending }) {
            do {
                try sink.deliver(batch)
                state.withLock { $0.delivery.acknowledge(batch.sequence) }
            } catch {
                let reason = (error as? LocusError)?.message ?? "\(error)"
                emit(LogMessage(.error, .deliveryFailed, .deliveryFailed(sequence: batch.sequence, positions: batch.positions.count,
                                                                          reason: reason)), handlers)
                return
            }
        }
    }

    func emit(_ message: LogMessage, _ handlers: Handlers) {
        guard let hook = handlers.log, message.level >= handlers.minimumLevel else { return }
        hook(message.level, message.text(in: handlers.language ?? .processLocale()))
    }
}
