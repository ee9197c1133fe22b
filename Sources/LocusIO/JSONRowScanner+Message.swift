import LocusCore

extension JSONRowScanner {
    /// A live message's rows (one JSON object or an array of them), each decided
    /// (`JSONRowFields.decide`; `receivedSeconds` for a row that names no time) and appended to
    /// `rows` with whether it names its time: the plain spelling read in place (`scan`), anything
    /// else by `JSONParser` with the same decisions. `malformed` gets why the message, or an item
    /// of its array, holds no row (the message's other items are still read). `scratch`: the
    /// caller's buffer, reused from message to message.
    package static func decide(_ message: Span<UInt8>, receivedSeconds: Double, scratch: inout [JSONRowFields],
                               into rows: inout [(decision: JSONRowFields.Decision, namesTime: Bool)],
                               malformed: (String) -> Void) {
        scratch.removeAll(keepingCapacity: true)
        if !scan(message, into: &scratch) {
            // Not the plain spelling: the full parser, the same decisions.
            parse(message, into: &scratch, malformed: malformed)
        }
        for fields in scratch { rows.append((fields.decide(receivedSeconds: receivedSeconds), fields.namesTime)) }
    }

    /// The rows of a message read by `JSONParser` (any spelling `scan` declines), appended to `rows`;
    /// `malformed` gets why the message, or an item of its array, holds no row. Where `scan` reads a
    /// message, this reads the same fields (the live fuzz target checks it).
    static func parse(_ message: Span<UInt8>, into rows: inout [JSONRowFields], malformed: (String) -> Void) {
        let value: JSONValue
        do { value = try JSONParser.parse(message.withUnsafeBufferPointer { Array($0) }) } catch {
            malformed("not JSON: \(error.message)")
            return
        }
        switch value.kind {
        case .object: rows.append(JSONRowFields(object: value))
        case .array(let items):
            for item in items {
                guard case .object = item.kind else { malformed("an array item that is not an object"); continue }
                rows.append(JSONRowFields(object: item))
            }
        default:
            malformed("JSON that is neither an object nor an array of objects")
        }
    }
}
