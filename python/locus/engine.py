"""Engine: one liblocus engine handle (create, push, advance, finish, poll, counters, destroy)."""
import ctypes
import os

import numpy as np

from . import _ffi, _library, _rows
from .errors import LocusError, check
from .options import make_options
from .site import Site


class Engine:
    """A liblocus engine for one site with `locus replay`'s options. Every call that fails raises
    LocusError; ctypes releases the GIL while the library runs."""

    def __init__(self, site, **options):
        self.lib = _library.library()
        self.handle = ctypes.c_void_p()
        self.options = make_options(**options)
        if isinstance(site, Site):
            data = site.json.encode("utf-8")
            status = self.lib.locus_engine_create_json(data, len(data), ctypes.byref(self.options),
                                                       ctypes.byref(self.handle))
        else:
            status = self.lib.locus_engine_create_file(os.fsencode(site), ctypes.byref(self.options),
                                                       ctypes.byref(self.handle))
        check(self.lib, status)
        self.skipped_here = {}  # rows skipped before reaching the engine (by reason)
        self.rows = 0
        self.finished = False

    def push_file(self, path):
        """Pushes the trace file at `path` with the library's reader (as `locus replay` reads it)."""
        rows, accepted = ctypes.c_size_t(), ctypes.c_size_t()
        check(self.lib, self.lib.locus_engine_push_trace_file(self.handle, os.fsencode(path), ctypes.byref(rows),
                                                              ctypes.byref(accepted)))
        self.rows += rows.value

    def push(self, trace, sort):
        """Pushes rows given as data (see locus._rows); skipped rows are counted, not raised."""
        if self.finished:
            raise LocusError("E1002", "the engine is finished", 1002)
        runs, keep, skipped = _rows.rows(trace, sort)
        for reason, count in skipped.items():
            self.skipped_here[reason] = self.skipped_here.get(reason, 0) + count
        self.rows += sum(len(records) for _, records in runs) + sum(skipped.values())
        for kind, records in runs:
            accepted = ctypes.c_size_t()
            push = self.lib.locus_engine_push_ranges if kind == "range" else self.lib.locus_engine_push_differences
            # A non-zero status names the first skipped row: skipped rows are counted, not raised.
            push(self.handle, records.ctypes.data, len(records), ctypes.byref(accepted))
        del keep  # the library copied the strings

    def set_truth(self, path, zone_window=0):
        """Compares what the engine releases with the truth CSV at `path` (`locus replay --truth`;
        zone_window: the zone score's window, s, 0: 5). Before the first row."""
        check(self.lib, self.lib.locus_engine_set_truth(self.handle, os.fsencode(os.fspath(path)), float(zone_window)))

    def summary(self):
        """After finish(): `locus replay --json`'s summary of what was pushed (the library's own, one
        pass), with the rows this package skipped before the engine added to `ranges` and `skipped`.
        Keeps the library's verdict (`verdict`: 0, or 1 when the run produced nothing usable, the
        CLI's exit 1) and its notes (`notes`: the lines the CLI writes on stderr)."""
        from .commands import run_json
        summary, self.notes, self.verdict = run_json(self.lib.locus_engine_summary, self.handle)
        if self.skipped_here:
            skipped = dict(summary["skipped"])
            for reason, count in self.skipped_here.items():
                skipped[reason] = skipped.get(reason, 0) + count
                summary["ranges"] += count
            summary["skipped"] = {reason: skipped[reason] for reason in sorted(skipped)}
        return summary

    def set_partition(self, index, count):
        """Makes this engine partition `index` of `count`: it solves the tags whose index of first
        appearance is index mod count and only observes the others' rows (before the first row)."""
        check(self.lib, self.lib.locus_engine_set_partition(self.handle, int(index), int(count)))

    def tag_index(self, tag):
        """The index of `tag` (str or bytes) in order of first appearance."""
        out = ctypes.c_int64()
        name = tag if isinstance(tag, bytes) else tag.encode("utf-8")
        check(self.lib, self.lib.locus_engine_tag_index(self.handle, name, ctypes.byref(out)))
        return out.value

    def advance(self, t):
        """Moves the engine's clock to `t` (s)."""
        check(self.lib, self.lib.locus_engine_advance(self.handle, float(t)))

    def finish(self):
        """Ends the stream: everything is released."""
        check(self.lib, self.lib.locus_engine_finish(self.handle))
        self.finished = True

    def _poll(self, function, dtype):
        chunks = []
        count = ctypes.c_size_t()
        while True:
            buffer = np.zeros(4096, dtype=dtype)
            check(self.lib, function(self.handle, buffer.ctypes.data, len(buffer), ctypes.byref(count)))
            chunks.append(buffer[:count.value])
            if count.value < len(buffer):
                return np.concatenate(chunks)

    def poll_positions(self):
        """The positions released since the last poll, as struct locus_position records."""
        return self._poll(self.lib.locus_engine_poll_positions, _ffi.POSITION_DTYPE)

    def poll_events(self):
        """The zone events released since the last poll, as struct locus_event records."""
        return self._poll(self.lib.locus_engine_poll_events, _ffi.EVENT_DTYPE)

    def stats(self):
        """The engine's counters (struct locus_stats) as a dict."""
        s = _ffi.Stats()
        check(self.lib, self.lib.locus_engine_stats(self.handle, ctypes.byref(s)))
        return {name: getattr(s, name) for name, _ in _ffi.Stats._fields_}

    def skipped(self):
        """Rows skipped by reason (non-zero only, in key order), here and in the engine."""
        counts = (ctypes.c_int64 * len(_ffi.SKIP_REASONS))()
        check(self.lib, self.lib.locus_engine_skipped(self.handle, counts, len(counts)))
        tally = dict(zip(_ffi.SKIP_REASONS, counts))
        for reason, count in self.skipped_here.items():
            tally[reason] += count
        return {reason: tally[reason] for reason in sorted(tally) if tally[reason]}

    def close(self):
        """Destroys the engine (idempotent)."""
        if self.handle:
            self.lib.locus_engine_destroy(self.handle)
            self.handle = ctypes.c_void_p()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
