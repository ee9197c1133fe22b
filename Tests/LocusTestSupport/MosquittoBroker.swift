import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A private `mosquitto` broker for one test: listening on 127.0.0.1 only, on a free port, with its
/// configuration and log in a temporary directory. Nothing else on the network is contacted.
///
/// `start()` launches `/usr/sbin/mosquitto -c <dir>/mosquitto.conf` and waits until a TCP connection
/// to the port succeeds (at most `startTimeoutSeconds`); `stop()` sends SIGTERM and waits for the
/// process (also done in `deinit`); `restart()` stops and starts again on the same port — the
/// broker forgets every session (`persistence false`), as a real broker restart without persistence.
/// Tests skip when `isAvailable` is false (`scripts/setup` installs the Debian package `mosquitto`).
public final class MosquittoBroker: @unchecked Sendable {
    /// Where Debian's package installs the broker.
    public static let executablePath = "/usr/sbin/mosquitto"
    /// True when the broker executable is present.
    public static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: executablePath) }
    /// The message tests skip with when the broker is missing.
    public static let unavailableMessage = "\(executablePath) is missing: install the Debian package 'mosquitto' (scripts/setup does)"

    /// Always 127.0.0.1.
    public let host = "127.0.0.1"
    /// The TCP port the broker listens on (free when the broker was created).
    public let port: UInt16
    /// The temporary directory with `mosquitto.conf` and `mosquitto.log`.
    public let directory: String
    /// How long `start()` waits for the port to accept connections, in seconds.
    public var startTimeoutSeconds = 5.0
    private var pid: pid_t = 0
    private let lock = NSLock()

    /// A broker on a free port of 127.0.0.1, started; `extraConfiguration` lines are appended to its
    /// configuration (e.g. `max_queued_messages 100000`).
    ///
    /// - Throws: when the executable is missing, no port is free, or the broker does not accept
    ///   connections in time (the message quotes the end of its log).
    public init(extraConfiguration: [String] = []) throws {
        guard Self.isAvailable else { throw BrokerError(message: Self.unavailableMessage) }
        port = try Self.freeTCPPort()
        directory = TestPaths.temporaryDirectory()
        let configuration = """
            listener \(port) 127.0.0.1
            allow_anonymous true
            persistence false
            log_dest file \(directory)/mosquitto.log
            log_type error
            log_type warning
            log_type notice
            log_type information
            connection_messages true
            user root

            """ + extraConfiguration.map { $0 + "\n" }.joined()
        try configuration.write(toFile: "\(directory)/mosquitto.conf", atomically: false, encoding: .utf8)
        try start()
    }

    deinit { stop() }

    /// `mqtt://127.0.0.1:PORT/<topic>`.
    public func uri(topic: String) -> String { "mqtt://\(host):\(port)/\(topic)" }

    /// The broker's log so far.
    public var log: String { (try? String(contentsOfFile: "\(directory)/mosquitto.log", encoding: .utf8)) ?? "" }

    /// Starts the broker (no-op when running) and waits until its port accepts a TCP connection.
    ///
    /// - Throws: when it exits or does not listen within `startTimeoutSeconds`.
    public func start() throws {
        lock.lock()
        defer { lock.unlock() }
        if pid > 0 { return }
        var child: pid_t = 0
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let arguments = [Self.executablePath, "-c", "\(directory)/mosquitto.conf"]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        // The test runner's threads block signals; the broker must start with none blocked and the
        // default actions, or SIGTERM would never reach it.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGUSR1, SIGUSR2] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let status = posix_spawn(&child, Self.executablePath, &actions, &attributes, &argv, environ)
        guard status == 0 else { throw BrokerError(message: "posix_spawn(\(Self.executablePath)) failed: \(status)") }
        pid = child
        let deadline = Date().addingTimeInterval(startTimeoutSeconds)
        while Date() < deadline {
            if Self.acceptsConnections(port: port) { return }
            var exitStatus: Int32 = 0
            if waitpid(child, &exitStatus, WNOHANG) == child {
                pid = 0
                break
            }
            usleep(20_000)
        }
        let tail = String(log.suffix(600))
        throw BrokerError(message: "mosquitto did not listen on 127.0.0.1:\(port) within \(startTimeoutSeconds) s; log: \(tail)")
    }

    /// Stops the broker: SIGTERM, then waits for it to exit. No-op when not running.
    public func stop() {
        lock.lock()
        defer { lock.unlock() }
        guard pid > 0 else { return }
        let child = pid
        pid = 0
        kill(child, SIGTERM)
        var exitStatus: Int32 = 0
        while waitpid(child, &exitStatus, 0) < 0 && errno == EINTR {}
    }

    /// Stops the broker and starts it again on the same port (sessions are lost).
    ///
    /// - Throws: as `start()`.
    public func restart() throws {
        stop()
        try start()
    }

    /// A TCP port on 127.0.0.1 that nothing listens on right now (bound to port 0, read, closed).
    public static func freeTCPPort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BrokerError(message: "socket() failed: errno \(errno)") }
        defer { close(fd) }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw BrokerError(message: "bind(127.0.0.1:0) failed: errno \(errno)") }
        var local = sockaddr_in()
        var size = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &size) }
        }
        return UInt16(bigEndian: local.sin_port)
    }

    /// True when a TCP connection to 127.0.0.1:`port` succeeds (closed at once).
    public static func acceptsConnections(port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    /// Why the broker could not be started.
    public struct BrokerError: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }
}
