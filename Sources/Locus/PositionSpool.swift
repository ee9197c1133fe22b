#if canImport(Glibc)
import Glibc
#endif
import LocusCore

/// The durable spool of a session's position batches: one directory, one file per batch.
///
/// - `open-<n>.journal`: the open batch `n`; each position is appended (`write`) before any
///   callback or stream sees it, so a killed process (SIGKILL) loses none of them. It is fsynced
///   when the batch is sealed (a power loss may lose the unsealed tail).
/// - `batch-<n>.pending`: a sealed batch, fsynced (file and directory) before it is handed to
///   the sink, unlinked once the sink acknowledges it.
/// On start every journal is sealed and every pending batch is delivered first, in sequence order
/// (at least once: a crash between the sink's acknowledgement and the unlink delivers a batch
/// again, with the same sequence number).
///
/// One line per position, tab-separated, numbers in Swift's shortest round-trip form, so a
/// recovered position is bit-identical: `t tag floor x y z vx vy vz Pxx Pxy Pxz Pyy Pyz Pzz hdop
/// vdop pdop residual used rejected` (`-` for a missing velocity or VDOP, `%`-escaped text).
final class PositionSpool {
    let directory: String
    private var journalDescriptor: Int32 = -1
    private var journalSequence: UInt64 = 0

    /// Opens (creating it if needed) the spool in `directory`.
    /// - Throws: `E5005` when the directory cannot be created.
    init(directory: String) throws(LocusError) {
        self.directory = directory
        if mkdir(directory, 0o755) != 0 && errno != EEXIST {
            throw LocusError(.fileUnwritable, "cannot create the spool directory: \(Self.reason())", context: .init(file: directory))
        }
    }

    deinit { if journalDescriptor >= 0 { close(journalDescriptor) } }

    /// Seals every journal left by an earlier process and reads every pending batch, in sequence
    /// order; also returns the next free sequence number.
    /// - Throws: `E5001` when the directory or a batch cannot be read.
    func recover() throws(LocusError) -> (batches: [PositionBatch], nextSequence: UInt64) {
        var journals: [UInt64] = []
        var pending: [UInt64] = []
        for name in try listing() {
            if let n = Self.sequence(of: name, prefix: "open-", suffix: ".journal") { journals.append(n) }
            if let n = Self.sequence(of: name, prefix: "batch-", suffix: ".pending") { pending.append(n) }
        }
        for n in journals {
            // A journal whose sealed copy exists was renamed already; otherwise seal it now.
            if rename(journalPath(n), batchPath(n)) == 0 { pending.append(n) }
        }
        if !journals.isEmpty { syncDirectory() }
        pending = Array(Set(pending)).sorted()
        var batches: [PositionBatch] = []
        for n in pending {
            let positions = try Self.decode(try read(batchPath(n)))
            if positions.isEmpty {
                unlink(batchPath(n))
                continue
            }
            batches.append(PositionBatch(sequence: n, positions: positions, isRecovered: true))
        }
        let highest = (journals + pending).max() ?? 0
        return (batches, highest + 1)
    }

    /// Appends positions to the journal of open batch `sequence` (opening it when needed).
    /// - Throws: `E5005` when the journal cannot be written.
    func append(_ bytes: [UInt8], sequence: UInt64) throws(LocusError) {
        if journalDescriptor < 0 || journalSequence != sequence {
            if journalDescriptor >= 0 { close(journalDescriptor) }
            journalDescriptor = open(journalPath(sequence), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            journalSequence = sequence
            guard journalDescriptor >= 0 else {
                throw LocusError(.fileUnwritable, "cannot open the journal: \(Self.reason())", context: .init(file: journalPath(sequence)))
            }
        }
        let failed = bytes.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Bool in
            var offset = 0
            while offset < raw.count {
                let base = raw.baseAddress.map { $0 + offset }
                let n = write(journalDescriptor, base, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return true
                }
                offset += n
            }
            return false
        }
        if failed {
            throw LocusError(.fileUnwritable, "cannot write the journal: \(Self.reason())", context: .init(file: journalPath(sequence)))
        }
    }

    /// Makes open batch `sequence` durable as a sealed batch: fsync the journal, rename it, fsync
    /// the directory. A batch that was never appended to has nothing to seal.
    /// - Throws: `E5005` when fsync or rename fails.
    func seal(sequence: UInt64) throws(LocusError) {
        guard journalDescriptor >= 0, journalSequence == sequence else { return }
        let synced = fsync(journalDescriptor) == 0
        close(journalDescriptor)
        journalDescriptor = -1
        guard synced else { throw LocusError(.fileUnwritable, "fsync failed: \(Self.reason())", context: .init(file: journalPath(sequence))) }
        guard rename(journalPath(sequence), batchPath(sequence)) == 0 else {
            throw LocusError(.fileUnwritable, "cannot seal the batch: \(Self.reason())", context: .init(file: batchPath(sequence)))
        }
        syncDirectory()
    }

    /// Deletes sealed batch `sequence` (the sink acknowledged it).
    func remove(sequence: UInt64) {
        unlink(batchPath(sequence))
    }

    /// Deletes the open batch's journal (positions discarded by `empty()`).
    func discardJournal(sequence: UInt64) {
        if journalDescriptor >= 0 && journalSequence == sequence {
            close(journalDescriptor)
            journalDescriptor = -1
        }
        unlink(journalPath(sequence))
    }

    // MARK: encoding

    /// One line per fix (see the type's comment).
    static func encode(_ fix: PositionFix, into bytes: inout [UInt8]) {
        var line = ""
        func field(_ s: String) { line += s; line += "\t" }
        func number(_ d: Double) { field(String(d)) }
        number(fix.timeSeconds)
        field(escape(fix.tag.rawValue))
        field(escape(fix.floor.rawValue))
        number(fix.position.x); number(fix.position.y); number(fix.position.z)
        if let v = fix.velocity { number(v.x); number(v.y); number(v.z) } else { field("-"); field("-"); field("-") }
        let c = fix.covariance
        number(c.xx); number(c.xy); number(c.xz); number(c.yy); number(c.yz); number(c.zz)
        let q = fix.quality
        number(q.hdop)
        if let v = q.vdop { number(v) } else { field("-") }
        number(q.pdop); number(q.residualRMSMeters)
        field(String(q.locatorsUsed))
        line += q.rejected.map { String($0.rawValue) }.joined(separator: ",")
        line += "\n"
        bytes.append(contentsOf: line.utf8)
    }

    /// The fixes of a batch file; an incomplete last line (a write cut by a crash) is dropped.
    /// - Throws: `E5001` for a complete line that does not parse.
    static func decode(_ bytes: [UInt8]) throws(LocusError) -> [PositionFix] {
        var fixes: [PositionFix] = []
        var start = 0
        var lineNumber = 0
        for i in bytes.indices where bytes[i] == UInt8(ascii: "\n") {
            lineNumber += 1
            let text = String(decoding: bytes[start..<i], as: UTF8.self)
            start = i + 1
            guard let fix = parse(text) else {
                throw LocusError(.fileUnreadable, "a spooled position does not parse", context: .init(line: lineNumber))
            }
            fixes.append(fix)
        }
        return fixes
    }

    private static func parse(_ line: String) -> PositionFix? {
        let f = line.split(separator: "\t", omittingEmptySubsequences: false)
        guard f.count == 21 else { return nil }
        func d(_ i: Int) -> Double? { Double(f[i]) }
        func optional(_ i: Int) -> Double?? { f[i] == "-" ? .some(nil) : d(i).map { .some($0) } }
        guard let t = d(0), let x = d(3), let y = d(4), let z = d(5),
              let vx = optional(6), let vy = optional(7), let vz = optional(8),
              let xx = d(9), let xy = d(10), let xz = d(11), let yy = d(12), let yz = d(13), let zz = d(14),
              let hdop = d(15), let vdop = optional(16), let pdop = d(17), let residual = d(18), let used = Int(f[19])
        else { return nil }
        var velocity: Vector3? = nil
        if let vx, let vy, let vz { velocity = Vector3(x: vx, y: vy, z: vz) }
        var rejected = LocatorList()
        for a in f[20].split(separator: ",") {
            guard let raw = UInt16(a) else { return nil }
            rejected.append(LocatorAddress(raw))
        }
        let quality = FixQuality(hdop: hdop, vdop: vdop, pdop: pdop, residualRMSMeters: residual, locatorsUsed: used, rejected: rejected)
        return PositionFix(timeSeconds: t, tag: TagID(unescape(f[1])), floor: FloorID(unescape(f[2])),
                           position: Point3(x: x, y: y, z: z), velocity: velocity,
                           covariance: SymmetricMatrix3(xx: xx, xy: xy, xz: xz, yy: yy, yz: yz, zz: zz), quality: quality)
    }

    /// `%`, tab, newline and carriage return as `%25`, `%09`, `%0A`, `%0D`.
    static func escape(_ s: String) -> String {
        guard s.utf8.contains(where: { $0 == 0x25 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) else { return s }
        var out = ""
        for c in s.unicodeScalars {
            switch c {
            case "%": out += "%25"
            case "\t": out += "%09"
            case "\n": out += "%0A"
            case "\r": out += "%0D"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    static func unescape(_ s: Substring) -> String {
        guard s.contains("%") else { return String(s) }
        return String(s).replacingEscapes()
    }

    // MARK: files

    private func journalPath(_ n: UInt64) -> String { directory + "/open-" + Self.padded(n) + ".journal" }
    private func batchPath(_ n: UInt64) -> String { directory + "/batch-" + Self.padded(n) + ".pending" }

    private static func padded(_ n: UInt64) -> String {
        let digits = String(n)
        return String(repeating: "0", count: max(0, 20 - digits.count)) + digits
    }

    private static func sequence(of name: String, prefix: String, suffix: String) -> UInt64? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix) else { return nil }
        return UInt64(name.dropFirst(prefix.count).dropLast(suffix.count))
    }

    private func listing() throws(LocusError) -> [String] {
        guard let dir = opendir(directory) else {
            throw LocusError(.fileUnreadable, "cannot list the spool: \(Self.reason())", context: .init(file: directory))
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
            }
            names.append(name)
        }
        return names
    }

    private func read(_ path: String) throws(LocusError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw LocusError(.fileUnreadable, "cannot open: \(Self.reason())", context: .init(file: path)) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw LocusError(.fileUnreadable, "cannot read: \(Self.reason())", context: .init(file: path))
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
        }
        return bytes
    }

    private func syncDirectory() {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }

    private static func reason() -> String { String(cString: strerror(errno)) }
}

extension String {
    /// Undoes `PositionSpool.escape`.
    fileprivate func replacingEscapes() -> String {
        var out = ""
        var scalars = Array(unicodeScalars)[...]
        while let c = scalars.first {
            scalars = scalars.dropFirst()
            if c == "%", scalars.count >= 2 {
                let code = String(String.UnicodeScalarView(scalars.prefix(2)))
                if let v = UInt8(code, radix: 16) {
                    out.unicodeScalars.append(Unicode.Scalar(v))
                    scalars = scalars.dropFirst(2)
                    continue
                }
            }
            out.unicodeScalars.append(c)
        }
        return out
    }
}
