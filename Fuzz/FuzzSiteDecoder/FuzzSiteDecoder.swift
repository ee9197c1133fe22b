import Locus
import LocusCore
import LocusIO

/// libFuzzer entry point: arbitrary bytes through the site decoder, then through the engine's set-up.
///
/// Invariants checked (a violation traps, which libFuzzer reports as a crash with the input saved):
/// - `SiteDecoder.decode` either returns a site or throws a `LocusError` with a malformed-JSON (E5002)
///   or site-validation (E31xx) code — never another code, never a trap;
/// - `SiteDecoder.validate` agrees: the same site and no error, or that error first;
/// - a decoded site has at least one floor, finite numbers, and zone polygons that pass
///   `PolygonValidation`;
/// - `PositioningEngine(site:)` over a decoded site either succeeds or throws (zone grid set-up with
///   huge or far-apart coordinates must not trap).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSiteDecoder(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let validation = SiteDecoder.validate(bytes, file: "fuzz.json")
    let site: Site
    do {
        site = try SiteDecoder.decode(bytes, file: "fuzz.json")
    } catch {
        let code = error.code.rawValue
        precondition(code == "E5002" || code.hasPrefix("E31"), "unexpected error code \(code): \(error)")
        precondition(validation.site == nil && validation.errors.first == error, "validate's first error is decode's")
        return 0
    }
    precondition(validation.site == site && validation.errors.isEmpty, "validate gives decode's site")
    precondition(!site.floors.isEmpty, "a decoded site has a floor")
    for floor in site.floors {
        precondition(floor.originX.isFinite && floor.originY.isFinite && floor.tagHeightMeters.isFinite,
                     "finite floor numbers")
        for locator in floor.locators {
            precondition(locator.position.x.isFinite && locator.position.y.isFinite && locator.position.z.isFinite
                         && locator.biasMeters.isFinite, "finite locator numbers")
        }
        for zone in floor.zones {
            precondition(PolygonValidation.validate(zone.polygon) == nil, "decoded polygon is valid")
        }
    }
    _ = try? PositioningEngine(site: site)
    return 0
}
