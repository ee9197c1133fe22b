/// The one error type of Locus: a stable code, a message, and where the problem lies.
///
/// Codes follow the console SDK's families (SPEC §6): `E1xxx` set-up and call order, `E3xxx` floor
/// and site configuration, `E4xxx` positioning at run time, `E5xxx` I/O and data. The full table is
/// `docs/errors.md`, pinned by a test; a code, once published, keeps its meaning.
public struct LocusError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The stable code, e.g. `E3104`.
    public var code: LocusErrorCode
    /// What is wrong, in English, without the location (that is in `context`).
    public var message: String
    /// Where the problem lies: file, line and column, JSON path.
    public var context: Context

    /// Where an error was found. Every field is optional; those present are printed in order
    /// `file:line:column: jsonPath: message`.
    public struct Context: Sendable, Equatable {
        public var file: String?
        public var line: Int?
        public var column: Int?
        public var jsonPath: String?

        /// A context with the fields that are known.
        package init(file: String? = nil, line: Int? = nil, column: Int? = nil, jsonPath: String? = nil) {
            self.file = file
            self.line = line
            self.column = column
            self.jsonPath = jsonPath
        }
    }

    /// An error with its code, message and (optional) location. Users receive errors; only the
    /// package's modules make them.
    package init(_ code: LocusErrorCode, _ message: String, context: Context = Context()) {
        self.code = code
        self.message = message
        self.context = context
    }

    /// A copy with the file name filled in (kept when already set).
    package func inFile(_ file: String) -> LocusError {
        var copy = self
        if copy.context.file == nil { copy.context.file = file }
        return copy
    }

    /// `file:line:column: jsonPath: message [code]`, omitting the parts that are unknown.
    public var description: String {
        var parts: [String] = []
        var location = ""
        if let file = context.file { location = file }
        if let line = context.line {
            location += location.isEmpty ? "line \(line)" : ":\(line)"
            if let column = context.column { location += ":\(column)" }
        }
        if !location.isEmpty { parts.append(location) }
        if let path = context.jsonPath { parts.append(path) }
        parts.append(message)
        return parts.joined(separator: ": ") + " [\(code.rawValue)]"
    }
}
