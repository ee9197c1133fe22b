import Foundation
import LocusCore
import LocusIO
import LocusSimulation

/// `locus simulate`: a seeded synthetic trace and its truth from a site (SPEC §5).
enum SimulateCommand: LocusCommand {
    static let spec = CommandSpec(
        name: "simulate",
        summary: "Write a seeded synthetic range (or, with --tdoa, range-difference) trace and its truth: tags walking through the floor's zones.",
        options: [
            .value("site", "SITE", "Site JSON (SPEC §1).", required: true),
            .value("trace", "OUT.csv", "Trace to write: t,tag,anchor,range_m,floor (with --tdoa: t,tag,anchor_a,anchor_b,tdoa_m,floor).", required: true),
            .value("truth", "OUT.csv", "Truth to write: t,tag,x,y,z.", required: true),
            .value("floor", "ID", "Floor to walk on (default: the first)."),
            .value("tags", "N", "Number of tags T1…TN (default 1)."),
            .value("duration", "S", "Seconds of recording (default 60)."),
            .value("rate", "HZ", "Ranging rounds per second per tag (default 4)."),
            .value("slot-ms", "MS", "Spacing of the locators within a round, ms (default 4); with --tdoa, tag j blinks (uplink) or starts reporting (downlink) j × locators slots late, as its ranging rounds would."),
            .value("sigma", "M", "Gaussian range noise σ, metres (default 0.1)."),
            .value("nlos", "P", "Probability that a range is NLOS: read long by U(nlos-min, nlos-max) (default 0)."),
            .value("nlos-min", "M", "Smallest NLOS excess, metres (default 0.3)."),
            .value("nlos-max", "M", "Largest NLOS excess, metres (default 2.5)."),
            .value("dropout", "P", "Probability that a range is lost (default 0)."),
            .value("max-range", "M", "Ranges beyond this true distance are not received (default: unlimited)."),
            .value("truth-rate", "HZ", "Truth samples per second (default 10)."),
            .value("seed", "N", "Random seed (default 1): the same seed and arguments give the same bytes."),
            .flag("random-walk", "Walk between random points instead of through the zones' centroids."),
            .value("altitude", "LO:HI", "Fly instead of walk: the tag's height climbs and descends smoothly between LO and HI metres "
                   + "(z = LO + (HI − LO)(1 − cos 2πt/T)/2, tags out of phase) instead of staying at the floor's tagHeightM; "
                   + "not with --tdoa."),
            .value("altitude-period", "S", "With --altitude: seconds of one climb and descent T (default 20)."),
            .value("tdoa", "MODE", "Write range differences (TDoA) instead of ranges: t,tag,anchor_a,anchor_b,tdoa_m,floor with "
                   + "tdoa_m = d(tag,B) − d(tag,A), A the reference. uplink: every locator in reach hears each blink (--rate per "
                   + "second), one row per locator B ≠ A per blink; downlink: the tag reports random pairs of locators it heard, "
                   + "--rate × (locators − 1) pairs per second, each at its own time. --sigma, --nlos and --dropout act per arrival.",
                   choices: ["uplink", "downlink"]),
            .value("tdoa-reference", "ADDR", "With --tdoa uplink: the fixed reference locator (0x hex or decimal); a blink that misses "
                   + "it is referenced to its shortest heard arrival instead, and the summary says how often (default: every blink's "
                   + "shortest arrival)."),
            .value("tdoa-clock-noise", "S", "With --tdoa: each locator's synchronisation error σ in seconds, drawn per arrival "
                   + "and turned into metres with c = 299792458 m/s (1e-9 s ≈ 0.30 m; default 0)."),
            .flag("json", "Print the summary as one JSON object."),
        ],
        discussion: """
        Ranges are r = ‖p(t) − aᵢ‖ + biasMᵢ + σ·n (+ an NLOS excess), p at the floor's tagHeightM (with
        --altitude, at the flight's height z(t)).
        With --tdoa each arrival is mᵢ = ρᵢ + eᵢ with eᵢ = biasMᵢ + σ·n (+ an NLOS excess) (+ c·δᵢ, the
        clock error of --tdoa-clock-noise), and a row is tdoa_m = m_B − m_A: noise-free, exactly
        ‖p − b‖ − ‖p − a‖. Uplink rows of one blink share its t; downlink rows each have their own.
        The truth is the same as without --tdoa for the same seed.
        Walks: 0.8–1.5 m/s with turns, stopping 2–5 s at 30 % of waypoints. The model is documented in
        Sources/LocusSimulation/README.md.
        Exit codes: 0 success, 1 failure at run time (e.g. an unwritable --trace or --truth), 2 usage
        error or invalid input (including a floor without locators).
        """)

    static func run(_ arguments: ParsedArguments, console: Console) throws(LocusError) -> Int32 {
        let site = try SiteDecoder.load(path: arguments.string("site") ?? "")
        let floor = site.floors[try site.floorIndex(arguments.string("floor").map { FloorID($0) })]
        guard !floor.locators.isEmpty else {
            throw LocusError(.tooFewRanges, "floor '\(floor.id)' has no locators to range to")
        }
        let tags = try arguments.integer("tags", default: 1, in: 1...100_000)
        let duration = try arguments.double("duration", default: 60, in: 0.001...1e7)
        let seed = try arguments.integer("seed", default: 1, in: 0...Int.max)
        let rate = try arguments.double("rate", default: 4, in: 0.01...1000)
        let slot = try arguments.double("slot-ms", default: 4, in: 0...1000) / 1000
        let sigma = try arguments.double("sigma", default: 0.1, in: 0...100)
        let nlos = try arguments.double("nlos", default: 0, in: 0...1)
        let nlosMin = try arguments.double("nlos-min", default: 0.3, in: 0...1000)
        let nlosMax = try arguments.double("nlos-max", default: 2.5, in: 0...1000)
        guard nlosMin <= nlosMax else { throw LocusError(.usage, "--nlos-min must not exceed --nlos-max") }
        let dropout = try arguments.double("dropout", default: 0, in: 0...1)
        let maximumRange = try arguments.double("max-range", default: .greatestFiniteMagnitude, in: 0.001...Double.greatestFiniteMagnitude)
        let truthRate = try arguments.double("truth-rate", default: 10, in: 0.01...10_000)
        // The scenario, once the --tdoa options are checked (`runDifferences`).
        func request(altitude: (lowMeters: Double, highMeters: Double, periodSeconds: Double)?,
                     differences: (uplink: Bool, reference: LocatorAddress?, clockNoiseSeconds: Double)?) -> SimulationRequest {
            SimulationRequest(floor: floor, tagCount: tags, durationSeconds: duration, seed: UInt64(seed),
                              rateHertz: rate, slotSeconds: slot, sigmaMeters: sigma, nlosProbability: nlos,
                              nlosExcessMeters: nlosMin...nlosMax, dropoutProbability: dropout, maximumRangeMeters: maximumRange,
                              truthRateHertz: truthRate, randomWalk: arguments.flag("random-walk"),
                              altitude: altitude, differences: differences)
        }

        var altitude: (lowMeters: Double, highMeters: Double, periodSeconds: Double)?
        if let text = arguments.string("altitude") {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, let lo = Double(parts[0]), let hi = Double(parts[1]), lo.isFinite, hi.isFinite, lo <= hi else {
                throw LocusError(.usage, "--altitude wants LO:HI in metres with LO ≤ HI, not '\(text)'")
            }
            guard arguments.string("tdoa") == nil else { throw LocusError(.usage, "--altitude is not for --tdoa traces") }
            altitude = (lo, hi, try arguments.double("altitude-period", default: 20, in: 0.1...1e6))
        } else if arguments.string("altitude-period") != nil {
            throw LocusError(.usage, "option '--altitude-period' needs --altitude (see: locus simulate --help)")
        }
        if let mode = arguments.string("tdoa") {
            return try runDifferences(arguments, console: console, floor: floor, mode: mode, tags: tags, duration: duration,
                                      seed: seed, request: { request(altitude: nil, differences: $0) })
        }
        for option in ["tdoa-reference", "tdoa-clock-noise"] where arguments.string(option) != nil {
            throw LocusError(.usage, "option '--\(option)' needs --tdoa uplink|downlink (see: locus simulate --help)")
        }
        let recording = request(altitude: altitude, differences: nil).run()
        var trace = Array("t,tag,anchor,range_m,floor\n".utf8)
        trace.reserveCapacity(recording.ranges.count * 32)
        for r in recording.ranges {
            DecimalText.append(r.timeSeconds, decimals: 4, to: &trace); trace.append(UInt8(ascii: ","))
            CSVText.appendField(r.tag.rawValue, to: &trace); trace.append(UInt8(ascii: ","))
            DecimalText.append(Int(r.locator.rawValue), to: &trace); trace.append(UInt8(ascii: ","))
            DecimalText.append(r.rangeMeters, decimals: 4, to: &trace); trace.append(UInt8(ascii: ","))
            CSVText.appendField(floor.id.rawValue, to: &trace); trace.append(UInt8(ascii: "\n"))
        }
        let truth = truthBytes(recording.truth)
        // Both written aside, then both put in place: a failure leaves the old pair as it was.
        try FileBytes.write([(trace, arguments.string("trace") ?? ""), (truth, arguments.string("truth") ?? "")])
        if arguments.flag("json") {
            console.out(JSONWriter(style: .compact).string(.object([
                ("ranges", .integer(recording.ranges.count)), ("truth_rows", .integer(recording.truth.count)),
                ("tags", .integer(tags)), ("duration_s", .number(duration, .shortest)), ("floor", .string(floor.id.rawValue)),
                ("seed", .integer(seed)),
            ])) + "\n")
        } else {
            console.out("simulate: \(plural(recording.ranges.count, "range")) and \(plural(recording.truth.count, "truth row")), \(plural(tags, "tag")), "
                        + "\(DecimalText.string(duration, decimals: 1)) s on floor \(floor.id), seed \(seed)\n")
        }
        return 0
    }

    /// The truth file `t,tag,x,y,z` (4 decimals).
    static func truthBytes(_ samples: [TruthSample]) -> [UInt8] {
        var truth = Array("t,tag,x,y,z\n".utf8)
        for s in samples {
            DecimalText.append(s.timeSeconds, decimals: 4, to: &truth); truth.append(UInt8(ascii: ","))
            CSVText.appendField(s.tag.rawValue, to: &truth); truth.append(UInt8(ascii: ","))
            DecimalText.append(s.position.x, decimals: 4, to: &truth); truth.append(UInt8(ascii: ","))
            DecimalText.append(s.position.y, decimals: 4, to: &truth); truth.append(UInt8(ascii: ","))
            DecimalText.append(s.position.z, decimals: 4, to: &truth); truth.append(UInt8(ascii: "\n"))
        }
        return truth
    }

    /// `--tdoa uplink|downlink`: writes the difference rows (SPEC §2: `t,tag,anchor_a,anchor_b,tdoa_m,floor`,
    /// addresses in decimal as the range trace writes them) and the truth, and summarises what the
    /// signals went through (blinks or reports, silent ones, dropped and NLOS arrivals, reference stand-ins).
    /// - Throws: E1001 for `--tdoa-reference` with downlink or not on the floor, or a floor with fewer
    ///   than 2 locators (E4001); file errors as the range path.
    static func runDifferences(_ arguments: ParsedArguments, console: Console, floor: Floor, mode: String, tags: Int,
                               duration: Double, seed: Int,
                               request: ((uplink: Bool, reference: LocatorAddress?, clockNoiseSeconds: Double)) -> SimulationRequest) throws(LocusError) -> Int32 {
        let uplink = mode != "downlink"
        guard floor.locators.count >= 2 else {
            throw LocusError(.tooFewRanges, "floor '\(floor.id)' has \(plural(floor.locators.count, "locator")): a difference needs 2")
        }
        let clockNoise = try arguments.double("tdoa-clock-noise", default: 0, in: 0...1)
        var fixedReference: LocatorAddress?
        if let reference = arguments.string("tdoa-reference") {
            guard uplink else {
                throw LocusError(.usage, "option '--tdoa-reference' applies to --tdoa uplink only (downlink pairs are drawn at random)")
            }
            guard let address = LocatorAddress(parsing: reference) else {
                throw LocusError(.usage, "option '--tdoa-reference' must be a locator address (0x9DD7 or 40407), not '\(reference)'")
            }
            guard floor.locators.contains(where: { $0.address == address }) else {
                throw LocusError(.usage, "option '--tdoa-reference' \(address) is not a locator of floor '\(floor.id)'")
            }
            fixedReference = address
        }
        let recording = request((uplink, fixedReference, clockNoise)).run()
        var trace = Array("t,tag,anchor_a,anchor_b,tdoa_m,floor\n".utf8)
        trace.reserveCapacity(recording.differences.count * 36)
        for r in recording.differences {
            DecimalText.append(r.timeSeconds, decimals: 4, to: &trace); trace.append(UInt8(ascii: ","))
            CSVText.appendField(r.tag.rawValue, to: &trace); trace.append(UInt8(ascii: ","))
            DecimalText.append(Int(r.reference.rawValue), to: &trace); trace.append(UInt8(ascii: ","))
            DecimalText.append(Int(r.locator.rawValue), to: &trace); trace.append(UInt8(ascii: ","))
            DecimalText.append(r.differenceMeters, decimals: 4, to: &trace); trace.append(UInt8(ascii: ","))
            CSVText.appendField(floor.id.rawValue, to: &trace); trace.append(UInt8(ascii: "\n"))
        }
        try FileBytes.write([(trace, arguments.string("trace") ?? ""), (truthBytes(recording.truth), arguments.string("truth") ?? "")])
        let counts = recording.counts.summary(uplink: uplink, reference: fixedReference)
        // The text summary says it itself; with --json, stdout is the object, so the note goes to stderr.
        if arguments.flag("json"), let note = counts.note {
            console.err(note)
        }
        if arguments.flag("json") {
            var members: [(String, JSONValue)] = [
                ("differences", .integer(recording.differences.count)), ("truth_rows", .integer(recording.truth.count)),
                ("tags", .integer(tags)), ("duration_s", .number(duration, .shortest)), ("floor", .string(floor.id.rawValue)),
                ("seed", .integer(seed)), ("tdoa", .string(mode)),
                ("reference", fixedReference.map { .string($0.description) } ?? (uplink ? .string("shortest") : .null)),
            ]
            members += counts.members
            members.append(("clock_noise_s", .number(clockNoise, .shortest)))
            console.out(JSONWriter(style: .compact).string(.object(members)) + "\n")
        } else {
            var line = "simulate: \(plural(recording.differences.count, "difference")) (\(mode) TDoA, \(counts.events)"
            line += ") and \(plural(recording.truth.count, "truth row")), \(plural(tags, "tag")), "
            line += "\(DecimalText.string(duration, decimals: 1)) s on floor \(floor.id), seed \(seed)\n"
            line += counts.lines
            console.out(line)
        }
        return 0
    }
}
