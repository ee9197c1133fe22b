"""replay(): a whole trace through one engine, as `locus replay` does."""
import os

from ._ffi import SKIP_REASONS
from .commands import verdict_error
from .engine import Engine
from .result import Result


def replay(site, trace, *, filter="kalman", rate=4, sigma=0.1, smooth=False, tag_offset="auto", mode="auto",
           coupling="tight", floor=None, truth=None):
    """Replays `trace` on `site` and returns a Result.

    `site` is a path or a Site. `trace` is a path to a trace.csv (read by the library's own reader: the
    same rows are skipped and counted as by `locus replay`) or the rows as data: a NumPy structured
    array, a pandas DataFrame or a dict with columns t, anchor, range_m — or, for range differences
    (TDoA), t, anchor_a, anchor_b, tdoa_m; or both, each row filling one kind — and optionally tag,
    floor (pushed in time order, ties in input order; unusable rows are skipped and counted). The options
    are `locus replay`'s (--filter, --rate, --sigma, --smooth, --tag-offset, --mode, --coupling,
    --floor, --truth). `Result.summary` is `locus replay --json`'s object, made by the library in
    the same single pass (`locus_engine_summary`) for a file and for rows given as data alike: with
    `truth` (a truth CSV path) also rmse_m, per_tag, cdf, zone_score. Raises InvalidArgumentError
    (E1003) for an invalid option, LocusError for an invalid site or an unreadable trace or truth
    file, and LocusError E4001 with `locus replay`'s reason when the run produced nothing usable (no
    fix; truth that covers no fix): where the CLI exits 1, this raises.
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
        if engine.verdict != 0:
            raise _verdict(engine, summary)
    finally:
        engine.close()
    return Result(raw_positions, raw_events, summary)


def _verdict(engine, summary):
    """The LocusError of a replay that produced nothing: the library's verdict — unless every row was
    skipped here, before the engine (rows given as data whose t, range_m or anchor is not a number
    or an address), which the engine never saw: then the same sentence from this package's counts."""
    if summary["ranges"] > 0 and sum(engine.skipped_here.values()) == summary["ranges"]:
        counts = ", ".join(f"{reason} {engine.skipped_here[reason]}" for reason in SKIP_REASONS if engine.skipped_here.get(reason))
        # RunVerdict's hint for these two reasons (Sources/LocusEvaluation/RunVerdict.swift).
        return verdict_error("replay", f"locus replay: error: no fixes: every row skipped ({counts}) — is this a range trace (t,anchor,range_m, SPEC §2)?")
    return verdict_error("replay", engine.notes)

