import LocusCore
import LocusLive

/// The stream as a live input's consumer (`LiveInput.wait`): standard input's lines, datagrams and
/// messages, as spans from LocusLive, decoded here.
extension LiveStream: LiveRowConsumer {
    /// Standard input's whole lines: the first non-blank bytes decide between a CSV header (read,
    /// then rows) and JSON Lines (`{` or `[` first); blank lines before them are dropped.
    mutating func ingestLines(_ lines: Span<UInt8>, receivedSeconds: Double) throws(LocusError) {
        try lines.withUnsafeBufferPointer { (lines: UnsafeBufferPointer<UInt8>) throws(LocusError) in
            var consumed = 0
            if standardInput == .unknown {
                switch Self.looksLikeJSON(lines) {
                case nil: return  // blank lines only so far
                case true?: standardInput = .jsonLines
                case false?:
                    consumed = try readHeader(lines)
                    standardInput = .csv
                }
            }
            let rest = UnsafeBufferPointer(rebasing: lines[consumed...])
            switch standardInput {
            case .csv: ingestCSVLines(rest)
            case .jsonLines: ingestJSONLines(rest, receivedSeconds: receivedSeconds)
            case .unknown: break
            }
        }
    }

    /// One datagram or message (`ingestMessage(_:receivedSeconds:allowsCSV:)` on its bytes).
    mutating func ingestMessage(_ bytes: Span<UInt8>, receivedSeconds: Double, allowsCSV: Bool) {
        bytes.withUnsafeBufferPointer { ingestMessage($0, receivedSeconds: receivedSeconds, allowsCSV: allowsCSV) }
    }
}
