"""replay(): a whole trace through one engine, as `locus replay` does."""
import os

from .engine import Engine
from .result import Result


def replay(site, trace, *, filter="kalman", rate=4, sigma=0.1, smooth=False, tag_offset="auto", mode="auto",
           coupling="tight", floor=None, truth=None):
    """Replays `trace` on `site` and returns a Result.

    `site` is a path or a Site. `trace` is a path to a trace.csv (read by the library's own reader: the
    same rows are skipped and counted as by `locus replay`) or the rows as data: a NumPy structured
    array, a pandas DataFrame or a dict with columns t, anchor, range_m and optionally tag, floor
    (pushed in time order, ties in input order; unusable rows are skipped and counted). The options
    are `locus replay`'s (--filter, --rate, --sigma, --smooth, --tag-offset, --mode, --coupling,
    --floor, --truth). `Result.summary` is `locus replay --json`'s object, made by the library in
    the same single pass (`locus_engine_summary`) for a file and for rows given as data alike: with
    `truth` (a truth CSV path) also rmse_m, per_tag, cdf, zone_score. Raises LocusError for an
    invalid site or option or an unreadable trace or truth file.
    """
    is_file = isinstance(trace, (str, bytes, os.PathLike))
    engine = Engine(site, filter=filter, rate=rate, sigma=sigma, smooth=smooth, tag_offset=tag_offset, mode=mode,
                    coupling=coupling, floor=floor)
    try:
        if truth is not None:
            engine.set_truth(truth)
        if is_file:
            engine.push_file(trace)
        else:
            engine.push(trace, sort=True)
        engine.finish()
        raw_positions = engine.poll_positions()
        raw_events = engine.poll_events()
        summary = engine.summary()
    finally:
        engine.close()
    return Result(raw_positions, raw_events, summary)


def summarize_counts(rows, skipped, stats, fixes, raw_events, filter, smooth):
    """The counts of a replay's summary from the engines' counters (rows read, skipped by reason, the
    engine's stats), for the partitions of `locus.distributed` (summed over partitions)."""
    kinds = {"dwell": 0, "enter": 0, "exit": 0}
    for kind in raw_events["kind"]:
        kinds[("exit", "enter", "dwell")[int(kind)]] += 1
    return {"fixes": fixes, "ranges": rows, "epochs": stats["epochs"], "skipped": skipped,
            "failed_epochs": stats["epochs_failed"], "epochs_before_track": stats["epochs_before_track"],
            "rejected_ranges": stats["rejected_ranges"], "events": kinds, "filter": filter, "smooth": bool(smooth)}
