#if canImport(Glibc)
import Glibc
#endif
import Synchronization

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
        guard let control = OpenBLASThreadControl.shared else { return }
        control.set(1)
        if let shutdown = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "blas_thread_shutdown_") {
            typealias Shutdown = @convention(c) () -> Int32
            _ = unsafeBitCast(shutdown, to: Shutdown.self)()
        }
    }
}

extension LapackThreads {
    /// Runs one LAPACK call (`body`, returning its `info`) with OpenBLAS on one thread, and puts the
    /// process's thread count back afterwards. For the routines whose results depend on how many
    /// threads OpenBLAS splits them over — measured with OpenBLAS 0.3.21: `dsyev` at every size
    /// (n = 3 already differs in the last bits between one and two threads) and `dgels` from about
    /// 5,000 × 16 — so that every face gives the same bytes on any machine, whatever the core count,
    /// `OPENBLAS_NUM_THREADS` or the embedding process's own setting. (`dgemm`, `dsyrk`, `dposv` and
    /// `dpbsv` gave the same bits on one and two threads and are called directly.)
    ///
    /// The `locus` process already runs on one thread (`useOneThreadUnlessConfigured`): nothing is
    /// switched. In a library process the switch is the threadpoolctl pattern, held for the one call
    /// under a process-wide lock (so concurrent Locus calls never restore each other's count); a
    /// BLAS call of the host running meanwhile on another thread runs on one thread too, which
    /// costs it speed, never bits. A BLAS that is not OpenBLAS is called as is.
    static func onOneThread(_ body: () -> Int32) -> Int32 {
        guard let control = OpenBLASThreadControl.shared else { return body() }
        return switchLock.withLock { _ in
            let before = control.get()
            if before != 1 { control.set(1) }
            let info = body()
            if before != 1 { control.set(before) }
            return info
        }
    }

    /// Serialises `onOneThread`'s switches.
    private static let switchLock = Mutex(())
}

/// OpenBLAS's thread-count functions, looked up at run time (nil when the BLAS is not OpenBLAS).
private struct OpenBLASThreadControl: @unchecked Sendable {  // two C function pointers, never mutated
    typealias Get = @convention(c) () -> Int32
    typealias Set = @convention(c) (Int32) -> Void
    let get: Get
    let set: Set

    static let shared: OpenBLASThreadControl? = {
        let process = UnsafeMutableRawPointer(bitPattern: 0)
        guard let get = dlsym(process, "openblas_get_num_threads"), let set = dlsym(process, "openblas_set_num_threads") else {
            return nil
        }
        return OpenBLASThreadControl(get: unsafeBitCast(get, to: Get.self), set: unsafeBitCast(set, to: Set.self))
    }()
}

/// The process environment, read through libc (no Foundation in this module).
private enum ProcessEnvironmentLookup {
    static func value(_ name: String) -> String? {
        guard let raw = getenv(name) else { return nil }
        return String(cString: raw)
    }
}
