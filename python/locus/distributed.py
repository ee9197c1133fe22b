"""Archive replay on Dask: many recordings, each split by tag into partitions, one task each.

    from dask.distributed import Client
    import locus.distributed
    client = Client("tcp://scheduler:8786")          # or Client(LocalCluster(...)) on one machine
    locus.distributed.replay_archive(client, ["a.csv", "b.csv"], "site.json", "out/", partitions_per_trace=4)

For each trace T it writes out/<T's file stem>/positions.csv, events.jsonl and summary.json; the
positions and events are byte-identical to `locus replay --site SITE --trace T --positions …
--events …` for any partition count and any number of workers.

How: tags are independent, the engine's clock is not (a silent tag's zone exit depends on it). So
every partition's task reads the whole trace with the library's reader and feeds it to an engine
that solves only its tags and *observes* the others' rows — they are checked and counted and move
the clock exactly as in the single run (`locus_engine_set_partition`), and every partition ends at
the recording's last time. The driver merges the partitions' positions by (time, tag's index of
first appearance) and their zone events in SPEC §4.7 order: the single run's bytes. The workers need
the package and liblocus (and the trace files at the same paths: a shared file system or object
store mount).
"""
import json
import os

import numpy as np

from .engine import Engine
from .replay import summarize_counts
from . import _library
from .result import event_lines, position_lines

_KIND_RANK = {0: 0, 1: 1, 2: 2}  # exit, enter, dwell (an exit at the time of its own enter ranks as an enter)


def replay_partition(site, trace, index, count, options):
    """Replays partition `index` of `count` of `trace` in this process. Returns what the merge needs,
    formatted here (on the worker, in parallel): each position's row text and key (time, tag index of
    first appearance), each event's line and SPEC §4.7 key, and the counters."""
    engine = Engine(site, **options)
    try:
        if count > 1:
            engine.set_partition(index, count)
        engine.push_file(trace)
        engine.finish()
        positions = engine.poll_positions()
        events = engine.poll_events()
        index_of = {tag: engine.tag_index(tag) for tag in set(positions["tag"].tolist())}
        order = np.array([index_of[tag] for tag in positions["tag"].tolist()], dtype=np.int64)
        stats, skipped, rows = engine.stats(), engine.skipped(), engine.rows
    finally:
        engine.close()
    return {"position_lines": position_lines(positions), "times": positions["t_s"].copy(), "tag_order": order,
            "event_lines": event_lines(events), "event_keys": _event_keys(events), "event_kinds": events["kind"].copy(),
            "stats": stats, "skipped": skipped, "rows": rows}


def _event_keys(events):
    """The SPEC §4.7 release key of each event of one partition's stream (ZoneJudge.releasePrecedes):
    time, kind rank (exit < enter, an exit at the time of the same tag and zone's enter ranks as the
    enter), tag, zone, enter before exit, floor."""
    keys = []
    for k in range(len(events)):
        e = events[k]
        t, kind, tag, zone = float(e["t_s"]), int(e["kind"]), bytes(e["tag"]), bytes(e["zone"])
        rank = _KIND_RANK[kind]
        if kind == 0:
            j = k - 1
            while j >= 0 and float(events[j]["t_s"]) == t:
                if int(events[j]["kind"]) == 1 and bytes(events[j]["tag"]) == tag and bytes(events[j]["zone"]) == zone:
                    rank = 1
                    break
                j -= 1
        keys.append((t, rank, tag.decode("utf-8"), zone.decode("utf-8"), 0 if kind == 1 else 1, bytes(e["floor"]).decode("utf-8")))
    return keys


def merge_partitions(parts):
    """The partitions' outputs as the single run's: position rows sorted by (time, tag index), event
    lines in SPEC §4.7 order (ties, which one stream alone can hold, keep that stream's order)."""
    rows = [line for p in parts for line in p["position_lines"]]
    times = np.concatenate([p["times"] for p in parts]) if parts else np.zeros(0)
    order = np.concatenate([p["tag_order"] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
    position_rows = [rows[k] for k in np.lexsort((order, times))]
    keyed = sorted((key, s, k) for s, p in enumerate(parts) for k, key in enumerate(p["event_keys"]))
    event_rows = [parts[s]["event_lines"][k] for _, s, k in keyed]
    return position_rows, event_rows


def _write_trace(out_dir, position_rows, event_rows, parts, options):
    """Writes one trace's files from its merged partitions (the bytes `locus replay` writes);
    returns its summary."""
    # Every partition saw every row: the skip counts are any one's; the engines' counters add up.
    stats = {key: sum(p["stats"][key] for p in parts) for key in parts[0]["stats"]}
    kinds = np.concatenate([p["event_kinds"] for p in parts]) if parts else np.zeros(0)
    summary = summarize_counts(parts[0]["rows"], parts[0]["skipped"], stats, len(position_rows), {"kind": kinds},
                               options.get("filter", "kalman"), options.get("smooth", False))
    summary["partitions"] = len(parts)
    os.makedirs(out_dir, exist_ok=True)
    header = _library.library().locus_positions_csv_header().decode("utf-8")
    with open(os.path.join(out_dir, "positions.csv"), "w", encoding="utf-8", newline="") as f:
        f.write("".join(line + "\n" for line in [header] + position_rows))
    with open(os.path.join(out_dir, "events.jsonl"), "w", encoding="utf-8", newline="") as f:
        f.write("".join(line + "\n" for line in event_rows))
    with open(os.path.join(out_dir, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, sort_keys=True)
        f.write("\n")
    return summary


def replay_archive(client, traces, site, out, partitions_per_trace=1, **options):
    """Replays every trace in `traces` (paths) on `site` (a path readable by the workers) with
    `locus replay`'s options, `partitions_per_trace` tasks per trace on the Dask `client`'s workers,
    and writes out/<stem>/positions.csv, events.jsonl, summary.json (stems must differ). Returns
    {trace: summary}. Options as `locus.replay` (`smooth` needs partitions_per_trace=1: the smoother
    needs every tag)."""
    if partitions_per_trace < 1:
        raise ValueError("partitions_per_trace must be at least 1")
    if options.get("smooth") and partitions_per_trace > 1:
        raise ValueError("smooth=True needs partitions_per_trace=1 (the smoother needs every tag's fixes)")
    stems = [os.path.splitext(os.path.basename(t))[0] for t in traces]
    if len(set(stems)) != len(stems):
        raise ValueError("two traces share a file stem: their outputs would collide")
    site = os.path.abspath(os.fspath(site))
    futures = {}
    for trace in traces:
        path = os.path.abspath(os.fspath(trace))
        futures[trace] = [client.submit(replay_partition, site, path, k, partitions_per_trace, options, pure=False)
                          for k in range(partitions_per_trace)]
    summaries = {}
    for trace, stem in zip(traces, stems):
        parts = client.gather(futures[trace])
        positions, events = merge_partitions(parts)
        summaries[trace] = _write_trace(os.path.join(out, stem), positions, events, parts, options)
    return summaries
