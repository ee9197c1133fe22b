/// How much a log message matters, least to most: `log < info < warn < error` (the console SDK's levels).
public enum LogLevel: Int, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    /// Tracing detail (lifecycle, deliveries).
    case log
    /// Normal conditions worth knowing (an empty floor, recovered batches).
    case info
    /// Data the session could not use (dropped rows, epochs without a fix).
    case warn
    /// Something the caller must act on (a sink that does not acknowledge, a spool that cannot be written).
    case error

    /// Orders by importance: log < info < warn < error.
    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }

    /// `log`, `info`, `warn` or `error`.
    public var description: String {
        switch self {
        case .log: "log"
        case .info: "info"
        case .warn: "warn"
        case .error: "error"
        }
    }
}

/// The language of log messages: English, Korean or Japanese.
enum LogLanguage: String, Sendable, Hashable, CaseIterable {
    /// English (`en`).
    case english = "en"
    /// Korean (`ko`).
    case korean = "ko"
    /// Japanese (`ja`).
    case japanese = "ja"

    /// The language for a code such as `"ko"`, `"ja_JP.UTF-8"` or `"en-US"` (its first two letters);
    /// nil for languages without texts.
    init?(code: String) {
        let prefix = String(code.lowercased().prefix(2))
        guard let language = LogLanguage(rawValue: prefix) else { return nil }
        self = language
    }

    /// The process locale's language from `LC_ALL`, `LC_MESSAGES` or `LANG` (first set wins), English
    /// when none names Korean or Japanese.
    static func processLocale(environment: (String) -> String? = ProcessEnvironment.value) -> LogLanguage {
        for key in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            if let value = environment(key), !value.isEmpty {
                return LogLanguage(code: value) ?? .english
            }
        }
        return .english
    }
}
