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
}
