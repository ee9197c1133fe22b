// CalibrationExample: a site's locators calibrated from a recording, without ground truth, and the
// calibrated site written back — `locus calibrate --out` from Swift, on the public API only.
//
//   swift run CalibrationExample [SITE.json] [TRACE.csv] [OUT.json]
//
// Defaults: Fixtures/sites/hall.json and Fixtures/traces/hall-walk.csv. Prints each locator's range
// bias ± σ and noise, the survey check's flags, and the rows the trace reader skipped; with OUT the
// calibrated site is written there in the input's address notation. Exits 0; 2 for an invalid site or
// trace (the error on stderr); 1 when the calibration cannot be done (too little data) or OUT cannot be written.
import Glibc
import Locus

let arguments = CommandLine.arguments
let sitePath = arguments.count > 1 ? arguments[1] : "Fixtures/sites/hall.json"
let tracePath = arguments.count > 2 ? arguments[2] : "Fixtures/traces/hall-walk.csv"
let outPath = arguments.count > 3 ? arguments[3] : nil

func text(_ value: Double?, _ decimals: Int = 3) -> String {
    guard let value else { return "–" }
    let scale = [1.0, 10, 100, 1000][decimals]
    return "\((value * scale).rounded() / scale)"
}

/// Writes `text` to standard error.
func say(_ text: String) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

func fail(_ error: LocusError) -> Never {
    say("CalibrationExample: error: \(error)\n")
    exit(error.code.isRunTimeFailure ? 1 : 2)
}

do throws(LocusError) {
    let (site, notation) = try SiteDecoder.loadNotated(path: sitePath)
    let trace = try TraceReader.read(path: tracePath)
    print("\(trace.count) rows of \(trace.tags.count) tags; skipped \(trace.skipped.total)" +
          trace.skipped.nonZero.map { " \($0.reason.rawValue)=\($0.count)" }.joined())
    let ranges = trace.measurements.compactMap { m -> RangeMeasurement? in
        if case .range(let r) = m { return r } else { return nil }
    }
    let report = try SiteCalibration.withoutTruth(site: site, ranges: ranges)
    for floor in report.floors {
        print("floor \(floor.floor): \(floor.epochs) epochs, residual RMS \(text(floor.residualRMSMeters)) m")
        for l in floor.locators {
            let bias = l.biasMeters.map { "\(text($0)) ± \(text(l.biasSDMeters))" } ?? "not determined"
            print("  \(l.address): bias \(bias) m, noise \(text(l.noiseMeters)) m\(l.isFlagged ? ", FLAGGED: \(l.note ?? "")" : "")")
        }
        for w in floor.warnings { print("  warning: \(w)") }
    }
    // Judged on held-out blocks of 10 s: when the fit is not shown better, report.site is the site as given.
    if let v = report.validation { print(v.text, terminator: "") }
    if let outPath, report.validation?.accepted ?? true {
        let bytes = SiteEncoder.encode(report.site, addressNotation: notation)
        guard let file = fopen(outPath, "wb"), fwrite(bytes, 1, bytes.count, file) == bytes.count, fclose(file) == 0 else {
            say("CalibrationExample: error: cannot write \(outPath)\n")
            exit(1)
        }
        print("calibrated site written to \(outPath)")
    }
} catch {
    fail(error)
}
