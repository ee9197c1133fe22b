#if canImport(Glibc)
import Glibc
#endif

/// OpenBLAS's own threads, for a process whose LAPACKE problems are small (the `locus` command line:
/// calibration, smoothing, geometry maps — tens of unknowns per call). OpenBLAS starts a thread per
/// core and, after each parallel region, its threads spin (`sched_yield`) waiting for the next one:
/// on problems this small that cost more than the arithmetic (a calibration took 1.7 s with 1.0 s
/// of system time on 2 cores, 1.2 s with none on one thread).
package enum LapackThreads {
    /// Makes OpenBLAS run on the calling thread only, unless `OPENBLAS_NUM_THREADS` (or
    /// `OMP_NUM_THREADS`) says otherwise. Looked up at run time: a BLAS that is not OpenBLAS has no
    /// threads to limit, and nothing happens.
    ///
    /// The threads OpenBLAS started when it was loaded (before `main`) are ended too
    /// (`blas_thread_shutdown_`, what OpenBLAS itself calls before a fork): left alone, each spins
    /// on `sched_yield` for its first ~0.1 s, which on 2 cores took ~7 % of a `locus replay
    /// --jobs 2`'s CPU time from the replay's own threads. With one thread OpenBLAS does not start
    /// them again.
    package static func useOneThreadUnlessConfigured() {
        let environment = ProcessEnvironmentLookup.self
        guard environment.value("OPENBLAS_NUM_THREADS") == nil, environment.value("OMP_NUM_THREADS") == nil else { return }
        let process = UnsafeMutableRawPointer(bitPattern: 0)
        guard let setThreads = dlsym(process, "openblas_set_num_threads") else { return }
        typealias SetThreads = @convention(c) (Int32) -> Void
        unsafeBitCast(setThreads, to: SetThreads.self)(1)
        if let shutdown = dlsym(process, "blas_thread_shutdown_") {
            typealias Shutdown = @convention(c) () -> Int32
            _ = unsafeBitCast(shutdown, to: Shutdown.self)()
        }
    }
}

/// The process environment, read through libc (no Foundation in this module).
private enum ProcessEnvironmentLookup {
    static func value(_ name: String) -> String? {
        guard let raw = getenv(name) else { return nil }
        return String(cString: raw)
    }
}
