import LocusCore
@testable import LocusLive
import Testing

@Suite("Stream endpoint URIs")
struct StreamEndpointTests {
    @Test("good input URIs parse to their endpoint", arguments: [
        ("-", StreamEndpoint.standardStream),
        ("udp://127.0.0.1:9000", .udp(host: "127.0.0.1", port: 9000)),
        ("udp://127.0.0.1:0", .udp(host: "127.0.0.1", port: 0)),
        ("udp://localhost:65535/", .udp(host: "localhost", port: 65535)),
        ("mqtt://broker.local:1883/ranges", .mqtt(host: "broker.local", port: 1883, topic: "ranges")),
        ("mqtt://127.0.0.1:1883/site/+/ranges/#", .mqtt(host: "127.0.0.1", port: 1883, topic: "site/+/ranges/#")),
        ("MQTT://10.0.0.2:8883/#", .mqtt(host: "10.0.0.2", port: 8883, topic: "#")),
    ])
    func goodInputs(text: String, expected: StreamEndpoint) throws {
        #expect(try StreamEndpoint(parsing: text, as: .input) == expected)
    }

    @Test("good output URIs parse to their endpoint", arguments: [
        ("-", StreamEndpoint.standardStream),
        ("mqtt://127.0.0.1:1883/locus", .mqtt(host: "127.0.0.1", port: 1883, topic: "locus")),
        ("mqtt://127.0.0.1:1883/plant/hall-2", .mqtt(host: "127.0.0.1", port: 1883, topic: "plant/hall-2")),
    ])
    func goodOutputs(text: String, expected: StreamEndpoint) throws {
        #expect(try StreamEndpoint(parsing: text, as: .output) == expected)
    }

    @Test("bad URIs are usage errors (E1001) naming the URI and the problem", arguments: [
        ("ranges.csv", StreamEndpoint.Direction.input, "expected '-'"),
        ("tcp://127.0.0.1:9000", .input, "unknown scheme 'tcp'"),
        ("mqtts://127.0.0.1:8883/x", .input, "unknown scheme 'mqtts'"),
        ("udp://127.0.0.1", .input, "missing port"),
        ("udp://127.0.0.1:", .input, "missing port"),
        ("udp://:9000", .input, "missing host"),
        ("udp://127.0.0.1:70000", .input, "invalid port '70000'"),
        ("udp://127.0.0.1:-1", .input, "invalid port '-1'"),
        ("udp://127.0.0.1:9x", .input, "invalid port '9x'"),
        ("udp://127.0.0.1:9000/path", .input, "no path"),
        ("udp://127.0.0.1:9000", .output, "input only"),
        ("mqtt://127.0.0.1:1883", .input, "no topic"),
        ("mqtt://127.0.0.1:1883/", .input, "topic is empty"),
        ("mqtt://127.0.0.1:0/x", .input, "invalid port '0'"),
        ("mqtt://127.0.0.1/x", .input, "missing port"),
        ("mqtt://user@127.0.0.1:1883/x", .input, "invalid host"),
        ("mqtt://[::1]:1883/x", .input, "invalid host"),
        ("mqtt://127.0.0.1:1883/a/#/b", .input, "'#' must be a whole topic level and the last one"),
        ("mqtt://127.0.0.1:1883/a#", .input, "'#' must be a whole topic level"),
        ("mqtt://127.0.0.1:1883/a+/b", .input, "'+' must be a whole topic level"),
        ("mqtt://127.0.0.1:1883/", .output, "topic prefix is empty"),
        ("mqtt://127.0.0.1:1883/locus/#", .output, "must not contain '+' or '#'"),
        ("mqtt://127.0.0.1:1883/locus/", .output, "must not end with '/'"),
    ])
    func badURIs(text: String, direction: StreamEndpoint.Direction, reason: String) {
        do {
            let endpoint = try StreamEndpoint(parsing: text, as: direction)
            Issue.record("'\(text)' parsed as \(endpoint)")
        } catch {
            #expect(error.code == .usage)
            #expect(!error.code.isRunTimeFailure)
            #expect(error.message.contains("'\(text)'"), "\(error.message)")
            #expect(error.message.contains(reason), "\(error.message)")
        }
    }
}
