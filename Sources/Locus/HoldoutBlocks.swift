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

    /// The block of time t: ⌊(t − t₀)/B⌋; −1 (a fit block's parity) for a time that is not finite or
    /// more than 10¹⁵ blocks away.
    public func block(of t: Double) -> Int { Self.block(of: t, start: startSeconds, length: blockSeconds) }

    private static func block(of t: Double, start: Double, length: Double) -> Int {
        let k = ((t - start) / length).rounded(.down)
        return k.isFinite && abs(k) < 1e15 ? Int(k) : -1
    }

    /// Whether time t falls in a held-out (odd) block.
    public func isHeldOut(_ t: Double) -> Bool { block(of: t) % 2 == 1 }

    /// The blocks of `blockSeconds` (finite, > 0: a precondition) over rows at `times` (seconds; times
    /// that are not finite are left out).
    public init(times: some Collection<Double>, blockSeconds: Double) {
        precondition(blockSeconds.isFinite && blockSeconds > 0, "HoldoutBlocks: blockSeconds must be finite and positive")
        self.blockSeconds = blockSeconds
        let times = times.lazy.filter(\.isFinite)
        guard let first = times.min(), let last = times.max() else {
            startSeconds = 0
            blocks = 0
            heldOutBlocks = 0
            return
        }
        startSeconds = first
        blocks = max(Self.block(of: last, start: first, length: blockSeconds), 0) + 1
        var odd = Set<Int>()
        for t in times {
            let k = Self.block(of: t, start: first, length: blockSeconds)
            if k % 2 == 1 { odd.insert(k) }
        }
        heldOutBlocks = odd.count
    }
}
