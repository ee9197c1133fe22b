import Foundation

/// Threads of their own for the shards of a `ShardedEngine`: `run(_:)` has worker k (1…n−1) and the
/// caller (0) each run the job once, and returns when all are done — a fork and a join per block of
/// rows. Dedicated threads, not the shared dispatch pool: the pool is as wide as the machine, and a
/// replay's reading and writing stages already keep its threads busy, so that its parallel loops
/// ran the shards one after the other on the caller.
final class ShardWorkers: @unchecked Sendable {
    /// Guarded by `condition`.
    private var job: (@Sendable (Int) -> Void)?
    private var generation = 0
    private var running = 0
    private var stopped = false
    private let condition = NSCondition()
    private let workers: Int

    /// `workers` threads (besides the caller's).
    init(workers: Int) {
        self.workers = max(0, workers)
        for k in 0..<self.workers {
            let thread = Thread { [self] in self.loop(worker: k + 1) }
            thread.name = "locus-shard-\(k + 1)"
            thread.start()
        }
    }

    /// Runs `job(k)` for k = 0…workers: 0 on the calling thread, the others on the workers.
    func run(_ job: @escaping @Sendable (Int) -> Void) {
        guard workers > 0 else { job(0); return }
        condition.lock()
        self.job = job
        running = workers
        generation += 1
        condition.broadcast()
        condition.unlock()
        job(0)
        condition.lock()
        while running > 0 { condition.wait() }
        self.job = nil
        condition.unlock()
    }

    /// Ends the threads (they hold the pool until then).
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    private func loop(worker k: Int) {
        var seen = 0
        while true {
            condition.lock()
            while generation == seen && !stopped { condition.wait() }
            if stopped { condition.unlock(); return }
            seen = generation
            let job = self.job
            condition.unlock()
            job?(k)
            condition.lock()
            running -= 1
            if running == 0 { condition.broadcast() }
            condition.unlock()
        }
    }
}
