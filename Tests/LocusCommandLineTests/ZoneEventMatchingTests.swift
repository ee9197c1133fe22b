import LocusCore
@testable import LocusEvaluation
import Testing

/// Zone transitions scored against reference transitions: literal cases.
@Suite("Zone event matching")
struct ZoneEventMatchingTests {
    static func event(_ t: Double, _ kind: ZoneEvent.Kind, tag: String = "T1", zone: String = "z") -> ZoneEvent {
        ZoneEvent(timeSeconds: t, tag: TagID(tag), floor: "1F", zone: ZoneID(zone), kind: kind)
    }

    @Test("a flicker at a boundary: one entry matched, the exit and re-entry counted as spurious transitions")
    func flicker() {
        let s = ZoneEventMatching(reference: [Self.event(10, .enter)],
                                  pipeline: [Self.event(10.5, .enter), Self.event(11, .exit), Self.event(11.5, .enter)], windowSeconds: 5)
        #expect(s.reference == 1 && s.matched == 1 && s.missed == 0 && s.spurious == 2)
        #expect(s.delaysSeconds == [0.5])
    }

    @Test("a late entry is measured: delay = pipeline − reference; an exit early is negative")
    func lateEntry() {
        let s = ZoneEventMatching(reference: [Self.event(10, .enter), Self.event(30, .exit)],
                                  pipeline: [Self.event(12.5, .enter), Self.event(29, .exit)], windowSeconds: 5)
        #expect(s.matched == 2 && s.missed == 0 && s.spurious == 0)
        #expect(s.delaysSeconds == [2.5, -1])
        #expect(s.enterDelaysSeconds == [2.5] && s.exitDelaysSeconds == [-1])
        #expect(s.delaySeconds(quantile: 0.5) == -1 && s.delaySeconds(quantile: 0.95) == 2.5)
    }

    @Test("outside the window, another tag, zone or kind: missed and spurious, never matched; dwell reports are not transitions")
    func noMatch() {
        let s = ZoneEventMatching(reference: [Self.event(10, .enter), Self.event(20, .enter, tag: "T2"), Self.event(40, .dwell)],
                                  pipeline: [Self.event(16, .enter), Self.event(20, .enter, tag: "T3"), Self.event(20, .enter, zone: "y"),
                                             Self.event(10, .exit), Self.event(41, .dwell)],
                                  windowSeconds: 5)
        #expect(s.reference == 2 && s.matched == 0 && s.missed == 2 && s.spurious == 4)
    }

    @Test("the nearest pairs match first: two reference entries and two pipeline entries cross-matched by time")
    func nearestFirst() {
        let s = ZoneEventMatching(reference: [Self.event(10, .enter), Self.event(14, .enter)],
                                  pipeline: [Self.event(13.5, .enter), Self.event(11, .enter)], windowSeconds: 5)
        #expect(s.matched == 2 && s.delaysSeconds == [1, -0.5])
    }

    @Test("identical streams: everything matched with zero delay")
    func identical() {
        let events = (0..<20).map { Self.event(Double($0) * 3, $0 % 2 == 0 ? .enter : .exit, tag: "T\($0 % 3)") }
        let s = ZoneEventMatching(reference: events, pipeline: events, windowSeconds: 1)
        #expect(s.reference == 20 && s.matched == 20 && s.missed == 0 && s.spurious == 0 && s.delaysSeconds.allSatisfy { $0 == 0 })
    }
}
