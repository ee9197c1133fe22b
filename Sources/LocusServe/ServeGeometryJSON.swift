import LocusCore
import LocusSolvers

/// `/api/geometry/<floor index>`: a floor's HDOP map for the page's accuracy overlay, the cells of
/// `locus geometry` (`GeometryReport`, range measurements, the standard options).
///
/// `{"floor": "1F", "x0": 0.25, "y0": 0.25, "stepX": 0.5, "stepY": 0.5, "nx": 80, "ny": 50,
/// "sigmaM": 0.1, "hdop": [1.21, …, null, …]}`: cell centres at `x0 + i·stepX`, `y0 + j·stepY`
/// (metres), `hdop` row-major with `j` (y, from the bottom) outer; `null` where fewer locators are in
/// reach than a fix needs. Position σ ≈ HDOP · `sigmaM`; the 95 % horizontal radius ≈ 2.45 · that.
enum ServeGeometryJSON {
    /// The bytes for `floor`, or a JSON object `{"floor": …, "error": "…"}` when the floor has no map
    /// (no extent, too many cells): the page shows the reason instead of an overlay.
    static func bytes(floor: Floor, sigmaMeters: Double) -> [UInt8] {
        let value: JSONValue
        do {
            value = try GeometryReport(floor: floor).overlayJSON(sigmaMeters: sigmaMeters)
        } catch {
            value = .object([("floor", .string(floor.id.rawValue)), ("error", .string(error.message))])
        }
        return Array(JSONWriter(style: .compact).string(value).utf8)
    }
}
