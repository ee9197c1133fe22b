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
    --floor, --truth). For a trace file `Result.summary` is `locus replay --json`'s object itself
    (the command run in-process on the same file and options: with `truth`, rmse_m, per_tag, cdf,
    zone_score…; it costs a second pass); for rows given as data it has the counts the engine
    gives, and `truth` needs a file. Raises LocusError for an invalid site or option or an
    unreadable trace file.
    """
    is_file = isinstance(trace, (str, bytes, os.PathLike))
    if truth is not None and not is_file:
        raise ValueError("truth= needs the trace as a file (the comparison is locus replay --truth's)")
    engine = Engine(site, filter=filter, rate=rate, sigma=sigma, smooth=smooth, tag_offset=tag_offset, mode=mode,
                    coupling=coupling, floor=floor)
    try:
        if isinstance(trace, (str, bytes, os.PathLike)):
            engine.push_file(trace)
        else:
            engine.push(trace, sort=True)
        engine.finish()
        raw_positions = engine.poll_positions()
        raw_events = engine.poll_events()
        stats = engine.stats()
        summary = summarize(engine, stats, len(raw_positions), raw_events, filter, smooth)
    finally:
        engine.close()
    if is_file:
        summary = _cli_summary(site, trace, filter=filter, rate=rate, sigma=sigma, smooth=smooth, tag_offset=tag_offset,
                               mode=mode, coupling=coupling, floor=floor, truth=truth)
    return Result(raw_positions, raw_events, summary)


def _cli_summary(site, trace, *, filter, rate, sigma, smooth, tag_offset, mode, coupling, floor, truth):
    """`locus replay --json`'s summary for the same site, trace and options, run in-process."""
    from .commands import _json_command, _options, _site_path
    keep = []
    try:
        arguments = ["--site", _site_path(site, keep), "--trace", os.fspath(trace), "--jobs", "1"]
        arguments += _options([("--filter", filter), ("--rate", rate), ("--sigma", sigma), ("--smooth", bool(smooth)),
                               ("--tag-offset", tag_offset), ("--mode", mode), ("--coupling", coupling), ("--floor", floor),
                               ("--truth", None if truth is None else os.fspath(truth))])
        return _json_command("replay", arguments, summary_on_failure=True)
    finally:
        for path in keep:
            os.unlink(path)


def summarize(engine, stats, fixes, raw_events, filter, smooth):
    """The summary dict of a replay (the figures of `locus replay --json` that the C ABI gives)."""
    return summarize_counts(engine.rows, engine.skipped(), stats, fixes, raw_events, filter, smooth)


def summarize_counts(rows, skipped, stats, fixes, raw_events, filter, smooth):
    """`summarize` from the counts themselves (rows read, skipped by reason, the engine's counters)."""
    kinds = {"dwell": 0, "enter": 0, "exit": 0}
    for kind in raw_events["kind"]:
        kinds[("exit", "enter", "dwell")[int(kind)]] += 1
    return {"fixes": fixes, "ranges": rows, "epochs": stats["epochs"], "skipped": skipped,
            "failed_epochs": stats["epochs_failed"], "epochs_before_track": stats["epochs_before_track"],
            "rejected_ranges": stats["rejected_ranges"], "events": kinds, "filter": filter, "smooth": bool(smooth)}
