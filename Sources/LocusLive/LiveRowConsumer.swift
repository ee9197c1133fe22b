import LocusCore

/// What a live input (`LiveInput`) hands the bytes it receives to: the stream's decoder, which
/// knows the row formats and keeps the engine (LocusServe's `LiveStream`). This module reads
/// sockets and pipes; it decodes no row.
package protocol LiveRowConsumer {
    /// Standard input's whole lines as they come (a partial last line waits for the next read; the
    /// input's end completes it with a newline). The first non-blank line tells a CSV header from
    /// JSON Lines. `receivedSeconds`: the receive time (`CLOCK_REALTIME`), for rows naming none.
    /// - Throws: the CSV header's errors (E5004, E5003), naming standard input.
    mutating func ingestLines(_ lines: Span<UInt8>, receivedSeconds: Double) throws(LocusError)

    /// One datagram (`allowsCSV`: headerless CSV rows or JSON) or MQTT message (JSON only);
    /// `receivedSeconds` stands for a JSON row's missing `t`.
    mutating func ingestMessage(_ bytes: Span<UInt8>, receivedSeconds: Double, allowsCSV: Bool)
}
