import LocusCore

extension RangeTrace {
    /// The rows for which `keep(i)` is true, in file order, with the same tag and floor tables (a row's
    /// `tagIndex` and `floorIndex` mean the same in both). The skip counts stay with the whole trace:
    /// the subset's are empty. Used to split a recording into blocks of time (the held-out validation
    /// of `locus calibrate`).
    package func subset(_ keep: (Int) -> Bool) -> RangeTrace {
        var out = RangeTrace()
        out.tags = tags
        out.floors = floors
        for i in rows.indices where keep(i) { out.rows.append(rows[i]) }
        return out
    }
}
