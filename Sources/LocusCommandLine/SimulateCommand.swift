import Foundation
import LocusCore
import LocusIO
import LocusSimulation

/// `locus simulate`: a seeded synthetic trace and its truth from a site (SPEC §5).
enum SimulateCommand: LocusCommand {
    static let spec = CommandSpec(
        name: "simulate",
        summary: "Write a seeded synthetic range trace and its truth: tags walking through the floor's zones.",
        options: [
            .value("site", "SITE", "Site JSON (SPEC §1).", required: true),
            .value("trace", "OUT.csv", "Range trace to write: t,tag,anchor,range_m,floor.", required: true),
            .value("truth", "OUT.csv", "Truth to write: t,tag,x,y,z.", required: true),
            .value("floor", "ID", "Floor to walk on (default: the first)."),
            .value("tags", "N", "Number of tags T1…TN (default 1)."),
            .value("duration", "S", "Seconds of recording (default 60)."),
            .value("rate", "HZ", "Ranging rounds per second per tag (default 4)."),
            .value("slot-ms", "MS", "Spacing of the locators within a round, ms (default 4)."),
            .value("sigma", "M", "Gaussian range noise σ, metres (default 0.1)."),
            .value("nlos", "P", "Probability that a range is NLOS: read long by U(nlos-min, nlos-max) (default 0)."),
            .value("nlos-min", "M", "Smallest NLOS excess, metres (default 0.3)."),
            .value("nlos-max", "M", "Largest NLOS excess, metres (default 2.5)."),
            .value("dropout", "P", "Probability that a range is lost (default 0)."),
            .value("max-range", "M", "Ranges beyond this true distance are not received (default: unlimited)."),
            .value("truth-rate", "HZ", "Truth samples per second (default 10)."),
            .value("seed", "N", "Random seed (default 1): the same seed and arguments give the same bytes."),
            .flag("random-walk", "Walk between random points instead of through the zones' centroids."),
            .flag("json", "Print the summary as one JSON object."),
        ],
        discussion: """
        Ranges are r = ‖p(t) − aᵢ‖ + biasMᵢ + σ·n (+ an NLOS excess), p at the floor's tagHeightM.
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
        var ranging = RangeSimulationConfiguration.standard
        ranging.roundRateHertz = try arguments.double("rate", default: 4, in: 0.01...1000)
        ranging.slotSeconds = try arguments.double("slot-ms", default: 4, in: 0...1000) / 1000
        ranging.sigmaMeters = try arguments.double("sigma", default: 0.1, in: 0...100)
        ranging.nlosProbability = try arguments.double("nlos", default: 0, in: 0...1)
        let nlosMin = try arguments.double("nlos-min", default: 0.3, in: 0...1000)
        let nlosMax = try arguments.double("nlos-max", default: 2.5, in: 0...1000)
        guard nlosMin <= nlosMax else { throw LocusError(.usage, "--nlos-min must not exceed --nlos-max") }
        ranging.nlosBiasMeters = nlosMin...nlosMax
        ranging.dropoutProbability = try arguments.double("dropout", default: 0, in: 0...1)
        ranging.maximumRangeMeters = try arguments.double("max-range", default: .greatestFiniteMagnitude, in: 0.001...Double.greatestFiniteMagnitude)
        let truthRate = try arguments.double("truth-rate", default: 10, in: 0.01...10_000)
        var walk = WalkConfiguration.standard
        if !arguments.flag("random-walk") {
            walk.waypoints = floor.zones.map { PolygonValidation.centroid($0.polygon) }
        }

        let recording = SimulatedRecording.simulate(floor: floor, tagCount: tags, durationSeconds: duration,
                                                    seed: UInt64(seed), walk: walk, ranging: ranging,
                                                    truthRateHertz: truthRate)
        var trace = Array("t,tag,anchor,range_m,floor\n".utf8)
        trace.reserveCapacity(recording.ranges.count * 32)
        for r in recording.ranges {
            DecimalText.append(r.timeSeconds, decimals: 4, to: &trace); trace.append(UInt8(ascii: ","))
            CSVText.appendField(r.tag.rawValue, to: &trace); trace.append(UInt8(ascii: ","))
            DecimalText.append(Int(r.locator.rawValue), to: &trace); trace.append(UInt8(ascii: ","))
            DecimalText.append(r.rangeMeters, decimals: 4, to: &trace); trace.append(UInt8(ascii: ","))
            CSVText.appendField(floor.id.rawValue, to: &trace); trace.append(UInt8(ascii: "\n"))
        }
        var truth = Array("t,tag,x,y,z\n".utf8)
        for s in recording.truth {
            DecimalText.append(s.timeSeconds, decimals: 4, to: &truth); truth.append(UInt8(ascii: ","))
            CSVText.appendField(s.tag.rawValue, to: &truth); truth.append(UInt8(ascii: ","))
            DecimalText.append(s.position.x, decimals: 4, to: &truth); truth.append(UInt8(ascii: ","))
            DecimalText.append(s.position.y, decimals: 4, to: &truth); truth.append(UInt8(ascii: ","))
            DecimalText.append(s.position.z, decimals: 4, to: &truth); truth.append(UInt8(ascii: "\n"))
        }
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
}
