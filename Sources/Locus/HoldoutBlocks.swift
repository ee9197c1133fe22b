/// A recording cut into alternating blocks of time for the held-out validation of a calibration
/// (`CalibrationValidation`; `SiteCalibration.withoutTruth` and `locus calibrate`): block
/// k = ⌊(t − t₀)/B⌋ (t₀ the first row's time, B `blockSeconds`); rows of even blocks are the fit set,
/// rows of odd blocks the held-out set.
///
/// Why alternating blocks of 10 s (docs/calibration.md, "Held-out validation"): both halves then
/// cover the whole recording — the same places, tags, times of day and NLOS episodes in proportion —
/// so a calibration fitted on one half is judged on data like its own but not its own; a block is
/// long against what ties neighbouring rows together (a round of ranging, 10–250 ms; the causal
/// filter's memory, ~1–2 s; a person standing in a line of sight, a few seconds), so held-out rows
/// are not near-copies of fit rows; and short against a walk across a room (10 m at 1 m/s), so a
/// 2-minute recording still gives 6 held-out blocks spread over it.
public struct HoldoutBlocks: Sendable, Hashable {
    /// The default block length, seconds.
    public static let defaultBlockSeconds = 10.0

    /// B, seconds.
    public let blockSeconds: Double
    /// t₀: the first row's time, seconds.
    public let startSeconds: Double
    /// Blocks spanned by the recording (with rows or not): ⌊(t_last − t₀)/B⌋ + 1; 0 when empty.
    public let blocks: Int
    /// Blocks holding at least one held-out row.
    public let heldOutBlocks: Int

    /// The block of time t: ⌊(t − t₀)/B⌋.
    public func block(of t: Double) -> Int { Int(((t - startSeconds) / blockSeconds).rounded(.down)) }

    /// Whether time t falls in a held-out (odd) block.
    public func isHeldOut(_ t: Double) -> Bool { block(of: t) % 2 == 1 }

    /// The blocks of `blockSeconds` (> 0, finite) over rows at `times` (seconds, finite).
    public init(times: some Collection<Double>, blockSeconds: Double) {
        self.blockSeconds = blockSeconds
        guard let first = times.min(), let last = times.max() else {
            startSeconds = 0
            blocks = 0
            heldOutBlocks = 0
            return
        }
        startSeconds = first
        blocks = Int(((last - first) / blockSeconds).rounded(.down)) + 1
        var odd = Set<Int>()
        for t in times {
            let k = Int(((t - first) / blockSeconds).rounded(.down))
            if k % 2 == 1 { odd.insert(k) }
        }
        heldOutBlocks = odd.count
    }
}
