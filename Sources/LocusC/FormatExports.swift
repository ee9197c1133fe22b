import LocusCore
import LocusIO

// Version, status names, the thread's last error, and the replay output formats.

/// `locus_version`: the library version, e.g. "0.3.0" (static).
@c(locus_version)
public func locusVersion() -> UnsafePointer<CChar> {
    Status.cString(LocusVersion.string)
}

/// `locus_status_name`: "OK", "E3104", … or "unknown" (static).
@c(locus_status_name)
public func locusStatusName(_ status: Int32) -> UnsafePointer<CChar> {
    Status.name(status)
}

/// `locus_last_error_code`: the status of this thread's last failed call (0 when none).
@c(locus_last_error_code)
public func locusLastErrorCode() -> Int32 {
    LastError.slot.status
}

/// `locus_last_error_message`: copies this thread's last error message into `buffer` (truncated,
/// NUL-terminated when `capacity` > 0) and returns its full length in bytes, as `snprintf` does.
@c(locus_last_error_message)
public func locusLastErrorMessage(_ buffer: UnsafeMutablePointer<CChar>?, _ capacity: Int) -> Int {
    let message = LastError.slot.message
    guard let buffer, capacity > 0 else { return message.count }
    let n = min(message.count, capacity - 1)
    for k in 0..<n { buffer[k] = CChar(bitPattern: message[k]) }
    buffer[n] = 0
    return message.count
}

/// `locus_event_to_json`: the event as `locus replay --events` writes it (without the line break).
/// - Returns: 0, or E1003 (NULL event, bad event field, buffer too small — `outLength` says the size).
@c(locus_event_to_json)
public func locusEventToJSON(_ event: UnsafeRawPointer?, _ buffer: UnsafeMutablePointer<CChar>?, _ capacity: Int,
                             _ outLength: UnsafeMutablePointer<Int>?) -> Int32 {
    Status.guarded { () throws(LocusError) in
        guard let event else { throw LocusError(.invalidArgument, "event is NULL") }
        let e = try Records.loadEvent(from: event)
        guard e.timeSeconds.isFinite, e.dwellSeconds?.isFinite ?? true else {
            throw LocusError(.invalidArgument, "event has a non-finite time")
        }
        var line = ZoneEventWriter()
        line.append(e)
        try CText.copy(Array(line.bytes.dropLast()), to: buffer, capacity: capacity, length: outLength)
    }
}

/// `locus_position_to_csv`: the position as a `locus replay --positions` row (without the line break).
/// - Returns: as `locus_event_to_json`.
@c(locus_position_to_csv)
public func locusPositionToCSV(_ position: UnsafeRawPointer?, _ buffer: UnsafeMutablePointer<CChar>?, _ capacity: Int,
                               _ outLength: UnsafeMutablePointer<Int>?) -> Int32 {
    Status.guarded { () throws(LocusError) in
        guard let position else { throw LocusError(.invalidArgument, "position is NULL") }
        let fix = try Records.loadPosition(from: position)
        var writer = PositionsWriter()
        let headerCount = writer.bytes.count
        writer.append(fix)
        try CText.copy(Array(writer.bytes[headerCount..<(writer.bytes.count - 1)]), to: buffer, capacity: capacity, length: outLength)
    }
}

/// The positions CSV header without its line break, created once and never freed.
private struct CSVHeader: @unchecked Sendable {
    let text: UnsafePointer<CChar>?
    static let shared = CSVHeader(text: CText.permanent(String(PositionsWriter.header.dropLast())))
}

/// `locus_positions_csv_header`: "t,tag,x,y,z,…,floor" (static).
@c(locus_positions_csv_header)
public func locusPositionsCSVHeader() -> UnsafePointer<CChar> {
    CSVHeader.shared.text ?? Status.cString("")
}
