import Foundation

/// A one-line progress bar on stderr, redrawn in place (`\r`), only when stderr is a terminal
/// (SPEC §5). At most ten redraws a second. With a total of 0 (a streamed input of unknown length)
/// it shows the rows done and the rate.
final class ProgressBar: @unchecked Sendable {
    private let total: Int
    private let knowsTotal: Bool
    private let label: String
    private let console: Console
    private var lastDraw = Date.distantPast
    private let started = Date()

    init(total: Int, label: String, console: Console) {
        self.total = max(1, total)
        knowsTotal = total > 0
        self.label = label
        self.console = console
    }

    /// Redraws with `done` of `total` items done.
    func update(_ done: Int) {
        let now = Date()
        guard now.timeIntervalSince(lastDraw) >= 0.1 else { return }
        lastDraw = now
        draw(done)
    }

    /// Draws the full bar and ends the line.
    func finish() {
        if knowsTotal { draw(total) }
        console.err("\n")
    }

    private func draw(_ done: Int) {
        guard knowsTotal else {
            let rate = Double(done) / max(1e-9, Date().timeIntervalSince(started))
            console.err("\r\(label) \(done) rows  \(Int(rate)) rows/s ")
            return
        }
        let fraction = min(1, Double(done) / Double(total))
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let rate = Double(done) / max(1e-9, Date().timeIntervalSince(started))
        console.err("\r\(label) \(bar) \(Int(fraction * 100))%  \(done)/\(total) rows  \(Int(rate)) rows/s ")
    }
}
