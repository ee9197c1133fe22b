import Foundation
@testable import LocusCommandLine
import LocusCore

/// Runs `locus` in-process and captures what it prints.
final class CapturedRun: @unchecked Sendable {
    private let lock = NSLock()
    private var outText = ""
    private var errText = ""
    var out: String { lock.withLock { outText } }
    var err: String { lock.withLock { errText } }
    private(set) var status: Int32 = -1

    init(_ arguments: [String]) {
        let console = Console(out: { [weak self] s in self?.lock.withLock { self?.outText += s } },
                              err: { [weak self] s in self?.lock.withLock { self?.errText += s } })
        status = LocusTool.run(arguments, console: console)
    }
}
