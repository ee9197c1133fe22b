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
first appearance) and their zone events in SPEC §4.7 order with the library's own merges
(`locus_merge_positions`, `locus_merge_events`): the single run's bytes; and their summaries with
the library's `locus_merge_summaries`: `locus replay --json`'s object. The workers need
the package and liblocus (and the trace files at the same paths: a shared file system or object
store mount).
"""
import ctypes
import json
import os

import numpy as np

from .commands import take_text
from .engine import Engine
from . import _ffi, _library
from .errors import InvalidArgumentError, check
from .result import event_lines, position_lines



def replay_partition(site, trace, index, count, options):
    """Replays partition `index` of `count` of `trace` in this process. Returns what the merge needs:
    each position's row text (formatted here, on the worker, in parallel) with its time and tag index
    of first appearance, the events (struct locus_event records) and their lines, and the partition's
    own summary (`locus_engine_summary`'s object)."""
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
        summary = engine.summary()
    finally:
        engine.close()
    return {"position_lines": position_lines(positions), "times": np.ascontiguousarray(positions["t_s"], dtype=np.float64),
            "tag_order": order, "events": events, "event_lines": event_lines(events), "summary": summary}


def _merge_order(function, arrays, counts, *extra):
    """Calls one of the library's merges; returns [(partition, index)] in the single run's order."""
    total = int(sum(counts))
    out_part = (ctypes.c_size_t * max(total, 1))()
    out_index = (ctypes.c_size_t * max(total, 1))()
    sizes = (ctypes.c_size_t * len(counts))(*counts)
    check(_library.library(), function(*arrays, sizes, len(counts), *extra, out_part, out_index))
    return [(out_part[n], out_index[n]) for n in range(total)]


def merge_partitions(parts):
    """The partitions' outputs as the single run's: the library's own merge orders
    (`locus_merge_positions`: time, then tag index of first appearance; `locus_merge_events`: SPEC §4.7
    release order), the order `locus replay --jobs N` merges its shards by."""
    lib = _library.library()
    counts = [len(p["times"]) for p in parts]
    times = (ctypes.c_void_p * len(parts))(*[p["times"].ctypes.data for p in parts])
    tags = [np.ascontiguousarray(p["tag_order"], dtype=np.int64) for p in parts]
    tag_pointers = (ctypes.c_void_p * len(parts))(*[t.ctypes.data for t in tags])
    positions = _merge_order(lib.locus_merge_positions, (times, tag_pointers), counts)
    position_rows = [parts[k]["position_lines"][i] for k, i in positions]
    # The header's layout (216-byte records): a concatenation of polls may have packed the fields.
    events = [np.ascontiguousarray(p["events"]).astype(_ffi.EVENT_DTYPE) for p in parts]
    event_pointers = (ctypes.c_void_p * len(parts))(*[e.ctypes.data for e in events])
    ordered = _merge_order(lib.locus_merge_events, (event_pointers,), [len(e) for e in events])
    event_rows = [parts[k]["event_lines"][i] for k, i in ordered]
    return position_rows, event_rows


def merge_summaries(summaries):
    """The single run's `locus replay --json` object from its partitions' summaries (dicts, as
    `locus_engine_summary` gives them): the library's own merge (`locus_merge_summaries`), which knows
    which counts add up over partitions and which every partition counts alike. Raises
    InvalidArgumentError for summaries of different runs (or with truth)."""
    lib = _library.library()
    texts = [json.dumps(s).encode("utf-8") for s in summaries]
    array = (ctypes.c_char_p * len(texts))(*texts)
    out = ctypes.c_void_p()
    check(lib, lib.locus_merge_summaries(array, len(texts), ctypes.byref(out)))
    return json.loads(take_text(lib, out))


def _write_trace(out_dir, position_rows, event_rows, parts):
    """Writes one trace's files from its merged partitions (the bytes `locus replay` writes);
    returns its summary: `locus replay --json`'s object, with the partition count."""
    summary = merge_summaries([p["summary"] for p in parts])
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
        raise InvalidArgumentError("partitions_per_trace must be at least 1")
    if options.get("smooth") and partitions_per_trace > 1:
        raise InvalidArgumentError("smooth=True needs partitions_per_trace=1 (the smoother needs every tag's fixes)")
    stems = [os.path.splitext(os.path.basename(t))[0] for t in traces]
    if len(set(stems)) != len(stems):
        raise InvalidArgumentError("two traces share a file stem: their outputs would collide")
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
        summaries[trace] = _write_trace(os.path.join(out, stem), positions, events, parts)
    return summaries
