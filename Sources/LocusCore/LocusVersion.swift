/// The version of Locus: `locus --version`, `locus_version()` of the C ABI and `LOCUS_VERSION` in
/// include/locus.h all say this (scripts/test-c checks the three agree).
public enum LocusVersion {
    /// Semantic version, e.g. "0.3.0".
    public static let string: StaticString = "0.3.0"
}
