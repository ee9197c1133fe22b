@testable import Locus
@testable import LocusCore
import Testing

@Suite("Session log messages")
struct LogMessageTests {
    @Test("English messages count in the singular for 1 and the plural otherwise; no '(s)'")
    func englishCounts() {
        let one: [(LogMessage, String)] = [
            (LogMessage(.warn, .callOrder, .notRunning(dropped: 1)), "[E1002] the session is not running: dropped 1 range; call begin() first"),
            (LogMessage(.warn, .tooFewRanges, .epochsFailed(count: 1)), "[E4001] 1 epoch gave no position: too few usable locators"),
            (LogMessage(.info, nil, .recovered(batches: 1, positions: 1)), "delivered 1 pending batch (1 position) from the spool first"),
            (LogMessage(.info, nil, .ended(positions: 1, events: 0)), "session ended: 1 position, 0 zone events"),
        ]
        for (message, text) in one { #expect(message.text(in: .english) == text) }
        let many = LogMessage(.info, nil, .recovered(batches: 2, positions: 600)).text(in: .english)
        #expect(many == "delivered 2 pending batches (600 positions) from the spool first")
        let subjects: [LogMessage.Subject] = [
            .noFloorMap(dropped: 1), .notRunning(dropped: 2), .epochsFailed(count: 3), .undelivered(positions: 1, spooled: true),
            .undelivered(positions: 1, spooled: false), .discarded(positions: 1), .deliveryFailed(sequence: 1, positions: 1, reason: "x"),
        ]
        for subject in subjects {
            let text = LogMessage(.warn, nil, subject).text(in: .english)
            #expect(!text.contains("(s)") && !text.contains("(es)") && !text.contains("1 positions") && !text.contains("1 ranges"), "\(text)")
        }
    }
}
