import LocusCore
import LocusIO

/// A recording cut into alternating blocks of time for the held-out validation of `locus calibrate`:
/// block k = ⌊(t − t₀)/B⌋ (t₀ the first row's time, B `blockSeconds`); rows of even blocks are the
/// fit set, rows of odd blocks the held-out set.
///
/// Why alternating blocks of 10 s (docs/calibration.md, "Held-out validation"): both halves then
/// cover the whole recording — the same places, tags, times of day and NLOS episodes in proportion —
/// so a calibration fitted on one half is judged on data like its own but not its own; a block is
/// long against what ties neighbouring rows together (a round of ranging, 10–250 ms; the causal
/// filter's memory, ~1–2 s; a person standing in a line of sight, a few seconds), so held-out rows
/// are not near-copies of fit rows; and short against a walk across a room (10 m at 1 m/s), so a
/// 2-minute recording still gives 6 held-out blocks spread over it.
struct HoldoutBlocks {
    /// The default block length, seconds.
    static let defaultBlockSeconds = 10.0

    /// B, seconds.
    let blockSeconds: Double
    /// t₀: the first row's time, seconds.
    let startSeconds: Double
    /// Blocks spanned by the recording (with rows or not): ⌊(t_last − t₀)/B⌋ + 1; 0 when empty.
    let blocks: Int
    /// Blocks holding at least one held-out row.
    let heldOutBlocks: Int
    /// Rows of even blocks, and of odd blocks.
    let fit: RangeTrace
    let heldOut: RangeTrace

    /// The block of time t: ⌊(t − t₀)/B⌋.
    func block(of t: Double) -> Int { Int(((t - startSeconds) / blockSeconds).rounded(.down)) }

    /// Splits `trace` into blocks of `blockSeconds` (> 0).
    init(trace: RangeTrace, blockSeconds: Double) {
        self.blockSeconds = blockSeconds
        startSeconds = trace.rows.lazy.map(\.timeSeconds).min() ?? 0
        guard !trace.rows.isEmpty else {
            blocks = 0
            heldOutBlocks = 0
            fit = trace.subset { _ in false }
            heldOut = fit
            return
        }
        let t0 = startSeconds
        func block(_ i: Int) -> Int { Int(((trace.rows[i].timeSeconds - t0) / blockSeconds).rounded(.down)) }
        blocks = Int(((trace.rows.lazy.map(\.timeSeconds).max() ?? t0) - t0) / blockSeconds) + 1
        fit = trace.subset { block($0) % 2 == 0 }
        heldOut = trace.subset { block($0) % 2 == 1 }
        heldOutBlocks = Set(trace.rows.indices.lazy.map(block).filter { $0 % 2 == 1 }).count
    }
}
