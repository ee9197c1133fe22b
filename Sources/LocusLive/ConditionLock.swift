import Glibc

/// A value guarded by a mutex with one condition variable, for the waits `Mutex` cannot do: a
/// consumer waiting for a message with a timeout, a publisher waiting for acknowledgements.
///
/// `@unchecked Sendable` because the state is only ever touched with the mutex held; the mutex and
/// the condition live at stable heap addresses, freed in `deinit`. The condition waits on
/// `CLOCK_MONOTONIC`, so a change of the wall clock does not stretch or cut a timeout.
final class ConditionLock<State>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var state: State

    /// A lock around `state`.
    init(_ state: State) {
        self.state = state
        mutex = .allocate(capacity: 1)
        condition = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with the state, the mutex held. Call `broadcast()` after a change that waiters
    /// may be waiting for.
    func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }

    /// Wakes every thread waiting in `wait(until:timeoutMilliseconds:then:)`; call after changing
    /// what they wait for.
    func broadcast() {
        pthread_cond_broadcast(condition)
    }

    /// Waits until `ready(state)` holds or `timeoutMilliseconds` pass (negative: no limit), then runs
    /// `body` with the mutex still held and `ready`'s last answer.
    func wait<R>(until ready: (State) -> Bool, timeoutMilliseconds: Int,
                 then body: (inout State, Bool) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        if timeoutMilliseconds < 0 {
            while !ready(state) { pthread_cond_wait(condition, mutex) }
            return try body(&state, true)
        }
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        deadline.tv_sec += timeoutMilliseconds / 1000
        deadline.tv_nsec += (timeoutMilliseconds % 1000) * 1_000_000
        if deadline.tv_nsec >= 1_000_000_000 {
            deadline.tv_sec += 1
            deadline.tv_nsec -= 1_000_000_000
        }
        var isReady = ready(state)
        while !isReady {
            if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT {
                isReady = ready(state)
                break
            }
            isReady = ready(state)
        }
        return try body(&state, isReady)
    }
}
