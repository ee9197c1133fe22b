import Foundation
import LocusCore

/// Threads for the shards of a `ShardedEngine`: a small pool of `workers` threads plus the caller,
/// taking tasks from one queue. `run(_:_:)` queues one task per shard and returns when they are
/// done, the caller taking tasks too while it waits — a fork and a join per phase of a block.
/// `spawn(_:)` queues a task on the side (the next block's reading and parsing) that runs alongside
/// the shards' phases and is awaited with `wait(_:)`: with more shards than threads, whichever
/// thread is free takes the next task, so the side task and the shards share the cores evenly.
/// Dedicated threads, not the shared dispatch pool, which is as wide as the machine and busy
/// elsewhere.
final class ShardWorkers: @unchecked Sendable {
    /// A set of tasks to wait for.
    final class Group: @unchecked Sendable {
        fileprivate var remaining: Int
        fileprivate init(_ remaining: Int) { self.remaining = remaining }
    }

    private struct Task {
        let work: @Sendable () -> Void
        let group: Group
    }

    /// Guarded by `condition`.
    private var queue = FIFOQueue<Task>()
    private var stopped = false
    private let condition = NSCondition()
    private let workers: Int

    /// `workers` threads (besides the caller's).
    init(workers: Int) {
        self.workers = max(0, workers)
        for k in 0..<self.workers {
            let thread = Thread { [self] in self.loop() }
            thread.name = "locus-shard-\(k + 1)"
            thread.start()
        }
    }

    /// Runs `job(k)` for k = 0..<count on the pool and the calling thread; returns when all are done.
    func run(_ count: Int, _ job: @escaping @Sendable (Int) -> Void) {
        guard workers > 0 else {
            for k in 0..<count { job(k) }
            return
        }
        let group = Group(count)
        condition.lock()
        for k in 0..<count { queue.append(Task(work: { job(k) }, group: group)) }
        condition.broadcast()
        condition.unlock()
        wait(group)
    }

    /// Queues `work` to run alongside the next `run`s (at once, on the caller, without workers).
    func spawn(_ work: @escaping @Sendable () -> Void) -> Group {
        let group = Group(1)
        guard workers > 0 else {
            work()
            group.remaining = 0
            return group
        }
        condition.lock()
        queue.append(Task(work: work, group: group))
        condition.broadcast()
        condition.unlock()
        return group
    }

    /// Returns when `group`'s tasks are done, running queued tasks meanwhile.
    func wait(_ group: Group) {
        condition.lock()
        while group.remaining > 0 {
            if !runQueued() { condition.wait() }
        }
        condition.unlock()
    }

    /// Ends the threads (they hold the pool until then).
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }


    /// Runs the next queued task, the lock released meanwhile (held on entry and on return), and
    /// counts it done; false when the queue is empty.
    private func runQueued() -> Bool {
        guard let task = queue.popFirst() else { return false }
        condition.unlock()
        task.work()
        condition.lock()
        task.group.remaining -= 1
        if task.group.remaining == 0 { condition.broadcast() }
        return true
    }

    private func loop() {
        condition.lock()
        while !stopped {
            if !runQueued() { condition.wait() }
        }
        condition.unlock()
    }
}
