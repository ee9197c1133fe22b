import Foundation
import LocusCore
import LocusIO
import LocusTestSupport
import Testing

/// Replays every file of Fixtures/bad-input/ (the bad-input catalogue and the inputs the fuzzers
/// kept, issue #9) through the readers, with the fuzz targets' invariants: a site decodes or throws a
/// site/JSON code; a trace parses (keeping only finite rows) or throws E5003/E5004.
@Suite("Bad-input fixtures replayed through the readers")
struct BadInputRegressionTests {
    static func files(_ folder: String) -> [String] {
        let dir = TestPaths.fixture("bad-input/" + folder)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        return names.filter { !$0.hasPrefix(".") && $0 != "README.md" }.sorted().map { dir + "/" + $0 }
    }

    @Test("every bad site file decodes or throws a JSON (E5002) or site (E31xx) error naming the file")
    func sites() {
        let paths = Self.files("site")
        #expect(paths.count >= 14)
        for path in paths {
            do {
                let site = try SiteDecoder.decode(TestPaths.bytes(path), file: path)
                #expect(!site.floors.isEmpty)
                for floor in site.floors {
                    #expect(floor.locators.allSatisfy { $0.position.isFinite && $0.biasMeters.isFinite })
                    #expect(floor.zones.allSatisfy { PolygonValidation.validate($0.polygon) == nil })
                }
            } catch {
                #expect(error.code == .malformedJSON || error.code.rawValue.hasPrefix("E31"), "\(path): \(error)")
                #expect(error.context.file == path)
            }
        }
    }

    @Test("every bad trace parses to finite rows with valid tags, or throws E5003/E5004 naming the file")
    func traces() throws {
        let paths = Self.files("trace")
        #expect(paths.count >= 15)
        for path in paths {
            do {
                let trace = try TraceReader.read(path: path)
                for row in trace.rows {
                    #expect(row.timeSeconds.isFinite && row.rangeMeters.isFinite && row.rangeMeters >= 0, "\(path)")
                    #expect(Int(row.tagIndex) < trace.tags.count)
                }
            } catch {
                #expect(error.code == .csvMissingColumn || error.code == .malformedCSV, "\(path): \(error)")
                #expect(error.context.file == path)
            }
        }
    }

    @Test("rows of every bad kind are counted by reason at their line, never dropped silently")
    func traceCounts() throws {
        let trace = try TraceReader.read(path: TestPaths.fixture("bad-input/trace/wrong-types.csv"))
        #expect(trace.rows.count + trace.skipped.total == 400)
        #expect(trace.skipped.count(.unparseableNumber) == 2)
        #expect(trace.skipped.count(.invalidAnchor) == 1)
        #expect(trace.skipped.count(.missingField) == 2)
        // Line 5 holds range "abc" (line 1 is the header).
        #expect(trace.skipped.firstLine(.unparseableNumber) == 5)
        let huge = try TraceReader.read(path: TestPaths.fixture("bad-input/trace/huge-numbers.csv"))
        #expect(huge.skipped.count(.nonFinite) == 1, "1e999 overflows to infinity and is skipped")
        #expect(huge.rows.contains { $0.rangeMeters == 1e300 }, "1e300 is a finite range: the solver judges it")
        let backwards = try TraceReader.read(path: TestPaths.fixture("bad-input/trace/time-backwards.csv"))
        #expect(backwards.skipped.count(.timeBackwards) == 20)
    }

    @Test("a truncated site names the line and column where the text stops")
    func truncatedSite() {
        let path = TestPaths.fixture("bad-input/site/truncated.json")
        #expect(throws: LocusError.self) { try SiteDecoder.decode(TestPaths.bytes(path), file: path) }
        do {
            _ = try SiteDecoder.decode(TestPaths.bytes(path), file: path)
        } catch {
            #expect(error.code == .malformedJSON)
            #expect(error.context.line == 25 && error.context.column == 54)
        }
    }
}
