#if canImport(Glibc)
import Glibc
#endif
import Foundation
import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

@Suite("Byte sink")
struct ByteSinkTests {
    @Test("pieces of every size, buffered or written straight through, reach the file whole and in order")
    func order() throws {
        let dir = TestPaths.temporaryDirectory()
        let path = dir + "/out.bin"
        var rng = SeededGenerator(seed: 77)
        var expected: [UInt8] = []
        let sink = try ByteSink(path: path)
        // Sizes around the direct-write threshold (64 KiB) and the buffer (1 MiB), and small ones.
        let sizes = [0, 1, 17, 65_535, 65_536, 3, 70_000, 1_048_575, 5, 1_048_576, 1_500_000, 9, 200_000, 2]
            + (0..<200).map { _ in Int(rng.next() % 90_000) }
        for (k, n) in sizes.enumerated() {
            let piece = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ k) }
            try sink.write(piece)
            expected += piece
        }
        try sink.close()
        #expect(sink.bytesWritten == expected.count)
        #expect(TestPaths.bytes(path) == expected)
    }

    @Test("an existing file is replaced by a new one with its mode; a symlink is written through to its target")
    func replaces() throws {
        let dir = TestPaths.temporaryDirectory()
        let path = dir + "/out.csv"
        let old = Array("an older, longer content than the new one\n".utf8)
        let new = Array("new\n".utf8)
        try writeAll(old, to: path)
        #expect(chmod(path, 0o600) == 0)
        // The old file, held open: replaced, it keeps its bytes and loses its name.
        let held = open(path, O_RDONLY)
        #expect(held >= 0)
        defer { close(held) }
        let sink = try ByteSink(path: path)
        try sink.write(new)
        try sink.close()
        var after = stat()
        #expect(stat(path, &after) == 0)
        #expect(TestPaths.bytes(path) == new)
        #expect(after.st_mode & 0o7777 == 0o600)
        var heldInfo = stat()
        #expect(fstat(held, &heldInfo) == 0)
        #expect(heldInfo.st_nlink == 0, "a new file, not the old one truncated")
        var heldBytes = [UInt8](repeating: 0, count: old.count + 8)
        #expect(pread(held, &heldBytes, heldBytes.count, 0) == old.count)
        #expect(Array(heldBytes.prefix(old.count)) == old)
        // Nothing left beside it (the new file was made under a hidden name, then renamed over the old).
        #expect((try? FileManager.default.contentsOfDirectory(atPath: dir)) == ["out.csv"])

        // Through a symlink: the target gets the bytes, the link stays a link.
        let target = dir + "/target.csv", link = dir + "/link.csv"
        try writeAll(old, to: target)
        #expect(symlink(target, link) == 0)
        let viaLink = try ByteSink(path: link)
        try viaLink.write(new)
        try viaLink.close()
        var linkInfo = stat()
        #expect(lstat(link, &linkInfo) == 0)
        #expect(linkInfo.st_mode & S_IFMT == S_IFLNK)
        #expect(TestPaths.bytes(target) == new)
    }

    @Test("a .live sink: when the new file cannot be made beside the old one, the old one is truncated and written, as before")
    func fallsBackToTruncating() throws {
        let dir = TestPaths.temporaryDirectory()
        // A name of 245 bytes: the hidden name of the new file would pass NAME_MAX (255), so it
        // cannot be created, and the output is the old file, truncated.
        let path = dir + "/" + String(repeating: "p", count: 241) + ".csv"
        try writeAll(Array("old content, longer\n".utf8), to: path)
        let held = open(path, O_RDONLY)
        #expect(held >= 0)
        defer { close(held) }
        try writeAll(Array("new\n".utf8), to: path, placement: .live)
        var heldInfo = stat()
        #expect(fstat(held, &heldInfo) == 0)
        #expect(heldInfo.st_nlink == 1, "the same file")
        #expect(TestPaths.bytes(path) == Array("new\n".utf8))
        #expect((try? FileManager.default.contentsOfDirectory(atPath: dir))?.count == 1)
    }

    @Test("a staged sink never closed, or discarded, leaves the old file as it was and nothing beside it; a long name still stages")
    func stagedUntilClosed() throws {
        let dir = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/" + String(repeating: "p", count: 241) + ".csv"
        let old = Array("old content\n".utf8)
        try writeAll(old, to: path)
        do {
            let dropped = try ByteSink(path: path)
            try dropped.write(Array(repeating: 7, count: 200_000))
            try dropped.flush()
            #expect(TestPaths.bytes(path) == old, "nothing at the path before the close")
            #expect((try? FileManager.default.contentsOfDirectory(atPath: dir))?.count == 2, "the new file aside")
        }
        #expect(TestPaths.bytes(path) == old)
        #expect((try? FileManager.default.contentsOfDirectory(atPath: dir))?.count == 1)
        let discarded = try ByteSink(path: path)
        try discarded.write(Array("new\n".utf8))
        discarded.discard()
        #expect(TestPaths.bytes(path) == old)
        #expect((try? FileManager.default.contentsOfDirectory(atPath: dir))?.count == 1)
        try writeAll(Array("new\n".utf8), to: path)
        #expect(TestPaths.bytes(path) == Array("new\n".utf8))
        #expect((try? FileManager.default.contentsOfDirectory(atPath: dir))?.count == 1)
    }

    @Test("a file with another hard link gets the new bytes in place (both names see them); a dangling symlink creates its target")
    func hardLinkAndDanglingSymlink() throws {
        let dir = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try writeAll(Array("old\n".utf8), to: dir + "/a.csv")
        #expect(link(dir + "/a.csv", dir + "/b.csv") == 0)
        try writeAll(Array("new bytes\n".utf8), to: dir + "/a.csv")
        #expect(TestPaths.bytes(dir + "/a.csv") == Array("new bytes\n".utf8))
        #expect(TestPaths.bytes(dir + "/b.csv") == Array("new bytes\n".utf8))
        #expect(symlink("made.csv", dir + "/dangling.csv") == 0)
        try writeAll(Array("made\n".utf8), to: dir + "/dangling.csv")
        #expect(TestPaths.bytes(dir + "/made.csv") == Array("made\n".utf8))
        var info = stat()
        #expect(lstat(dir + "/dangling.csv", &info) == 0 && info.st_mode & S_IFMT == S_IFLNK)
        #expect((try? FileManager.default.contentsOfDirectory(atPath: dir))?.sorted() == ["a.csv", "b.csv", "dangling.csv", "made.csv"])
    }

    @Test("an existing file in a directory where nothing can be created (immutable) is still written, whole: staged in $TMPDIR and copied in")
    func stagedOutsideAnUnwritableDirectory() throws {
        let dir = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/out.csv"
        try writeAll(Array("old\n".utf8), to: path)
        // Root may write any directory, but not an immutable one (chattr +i: no entry created or
        // removed, the files in it still writable). Without chattr (or the capability), nothing to check.
        guard Self.chattr("+i", dir) else { print("skipped: chattr +i is not available here"); return }
        defer { _ = Self.chattr("-i", dir) }
        let dropped = try ByteSink(path: path)
        try dropped.write(Array("half".utf8))
        dropped.discard()
        #expect(TestPaths.bytes(path) == Array("old\n".utf8), "a discarded output leaves the old bytes")
        try writeAll(Array("new, longer bytes\n".utf8), to: path)
        #expect(TestPaths.bytes(path) == Array("new, longer bytes\n".utf8))
        #expect((try? FileManager.default.contentsOfDirectory(atPath: dir)) == ["out.csv"])
    }

    /// `chattr FLAG path`; true when it succeeded.
    private static func chattr(_ flag: String, _ path: String) -> Bool {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/chattr")
        p.arguments = [flag, path]
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return false }
        p.waitUntilExit()
        return p.terminationStatus == 0
    }

    private func writeAll(_ bytes: [UInt8], to path: String, placement: ByteSink.Placement = .staged) throws {
        let sink = try ByteSink(path: path, placement: placement)
        try sink.write(bytes)
        try sink.close()
    }
}
