import LocusCore
import LocusEvaluation
import LocusIO

/// A replay's file outputs settled by its verdict (SPEC §5: "Output files appear whole or not at
/// all: a run that fails leaves files that existed as they were"). The positions and events were
/// written aside (`ByteSink`'s `StagedFile`) while the run went; a run that passed puts them in place
/// and draws its report (with truth), one that failed (verdict ≠ 0: no fix, truth that covered
/// nothing) discards them and draws none. The one rule for `locus replay` and `locus_replay_file`.
package enum ReplayOutputs {
    /// Puts the outputs in place when `status` is 0, discards them otherwise.
    /// - Throws: E5005 when a file cannot be put in place or the report cannot be written.
    package static func settle(status: Int32, positions: ByteSink?, events: ByteSink?, reportPath: String?,
                               site: Site, summary: ReplaySummary, trace: String) throws(LocusError) {
        guard status == 0 else {
            positions?.discard()
            events?.discard()
            return
        }
        try positions?.close()
        try events?.close()
        if let reportPath, let evaluation = summary.evaluation {
            try FileBytes.write(ReplayReport.svg(site: site, summary: summary, evaluation: evaluation, trace: trace), to: reportPath)
        }
    }
}
