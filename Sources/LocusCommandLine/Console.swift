import Foundation

/// Where a command writes: stdout for summaries, stderr for progress, warnings and logs. Tests
/// capture both by passing their own closures.
package struct Console: Sendable {
    var out: @Sendable (String) -> Void
    var err: @Sendable (String) -> Void
    /// True when stderr is a terminal (progress bars only then).
    var errIsTerminal: Bool

    init(out: @escaping @Sendable (String) -> Void, err: @escaping @Sendable (String) -> Void, errIsTerminal: Bool = false) {
        self.out = out
        self.err = err
        self.errIsTerminal = errIsTerminal
    }

    /// The process's own stdout and stderr.
    package static var standard: Console {
        Console(out: { text in FileHandle.standardOutput.write(Data(text.utf8)) },
                err: { text in FileHandle.standardError.write(Data(text.utf8)) },
                errIsTerminal: isatty(2) == 1)
    }
}
