#!/usr/bin/env python3
"""Replay a recorded range trace through liblocus with ctypes (no other packages).

    swift build --product locus-c        # builds .build/debug/liblocus-c.so
    python3 examples/python/replay.py --lib .build/debug/liblocus-c.so \
        --site Fixtures/sites/hall.json --trace Fixtures/traces/hall-walk.csv \
        [--positions OUT.csv] [--events OUT.jsonl] [--filter kalman|none] [--rate HZ] [--sigma M]
        [--coupling tight|loose] [--mode auto|planar|spatial] [--tag-offset auto|on|off] [--smooth] [--batch N]

Reads the trace (columns t, anchor, range_m, optional tag and floor, in any order), pushes the rows
in time order (ties in file order) in batches, polls positions and zone events as it goes, and
writes them exactly as `locus replay --positions/--events` does (the library formats the rows), then
prints a summary. The struct declarations mirror include/locus.h; ctypes checks their sizes against
the header's pinned sizes at start-up.
"""
import argparse
import csv
import ctypes as C
import sys

ID_CAPACITY = 64
REJECTED_CAPACITY = 8
NUL_TERMINATED = C.c_size_t(-1).value
EVENT_KINDS = {0: "exit", 1: "enter", 2: "dwell"}
OPTION_SMOOTH, OPTION_TAG_OFFSET_ON, OPTION_TAG_OFFSET_OFF = 1, 2, 4  # enum locus_option_flag
MODES = {"auto": 0, "planar": 1, "spatial": 2}


class Options(C.Structure):
    _fields_ = [("rate_hz", C.c_double), ("sigma_m", C.c_double), ("default_floor", C.c_char_p),
                ("filter", C.c_int32), ("coupling", C.c_int32), ("mode", C.c_int32), ("flags", C.c_uint32)]


class Range(C.Structure):
    _fields_ = [("t_s", C.c_double), ("range_m", C.c_double), ("tag", C.c_char_p), ("floor", C.c_char_p),
                ("anchor", C.c_uint16)]


class Position(C.Structure):
    _fields_ = [("t_s", C.c_double), ("x_m", C.c_double), ("y_m", C.c_double), ("z_m", C.c_double),
                ("vx_mps", C.c_double), ("vy_mps", C.c_double), ("vz_mps", C.c_double),
                ("speed_mps", C.c_double), ("course_rad", C.c_double), ("covariance_m2", C.c_double * 6),
                ("accuracy_m", C.c_double), ("accuracy95_m", C.c_double), ("hdop", C.c_double),
                ("vdop", C.c_double), ("pdop", C.c_double), ("residual_rms_m", C.c_double),
                ("flags", C.c_int32), ("anchors_used", C.c_int32), ("rejected_count", C.c_int32),
                ("rejected", C.c_uint16 * REJECTED_CAPACITY), ("tag", C.c_char * ID_CAPACITY),
                ("floor", C.c_char * ID_CAPACITY)]


class Event(C.Structure):
    _fields_ = [("t_s", C.c_double), ("dwell_s", C.c_double), ("kind", C.c_int32),
                ("tag", C.c_char * ID_CAPACITY), ("floor", C.c_char * ID_CAPACITY), ("zone", C.c_char * ID_CAPACITY)]


class Stats(C.Structure):
    _fields_ = [(name, C.c_int64) for name in ("ranges_accepted", "ranges_skipped", "epochs", "epochs_failed",
                                               "epochs_before_track", "rejected_ranges", "pending_positions",
                                               "pending_events")]


# The sizes include/locus.h pins with static asserts.
for struct, size in ((Options, 40), (Range, 40), (Position, 328), (Event, 216), (Stats, 64)):
    assert C.sizeof(struct) == size, f"{struct.__name__}: {C.sizeof(struct)} bytes, locus.h says {size}"


class LocusError(Exception):
    """A non-zero status from liblocus, with the library's message."""

    def __init__(self, lib, status, call):
        buffer = C.create_string_buffer(1024)
        lib.locus_last_error_message(buffer, len(buffer))
        name = lib.locus_status_name(status).decode()
        super().__init__(f"{call}: {name}: {buffer.value.decode(errors='replace')}")
        self.status = status


def load(path):
    """Loads liblocus and declares the functions used here."""
    lib = C.CDLL(path)
    engine_p = C.c_void_p
    size_p = C.POINTER(C.c_size_t)
    lib.locus_version.restype = C.c_char_p
    lib.locus_status_name.restype = C.c_char_p
    lib.locus_status_name.argtypes = [C.c_int]
    lib.locus_last_error_message.restype = C.c_size_t
    lib.locus_last_error_message.argtypes = [C.c_char_p, C.c_size_t]
    lib.locus_positions_csv_header.restype = C.c_char_p
    for name, args in (
        ("locus_engine_create_file", [C.c_char_p, C.POINTER(Options), C.POINTER(engine_p)]),
        ("locus_engine_destroy", [engine_p]),
        ("locus_engine_push_ranges", [engine_p, C.POINTER(Range), C.c_size_t, size_p]),
        ("locus_engine_finish", [engine_p]),
        ("locus_engine_poll_positions", [engine_p, C.POINTER(Position), C.c_size_t, size_p]),
        ("locus_engine_poll_events", [engine_p, C.POINTER(Event), C.c_size_t, size_p]),
        ("locus_engine_stats", [engine_p, C.POINTER(Stats)]),
        ("locus_event_to_json", [C.POINTER(Event), C.c_char_p, C.c_size_t, size_p]),
        ("locus_position_to_csv", [C.POINTER(Position), C.c_char_p, C.c_size_t, size_p]),
    ):
        function = getattr(lib, name)
        function.argtypes = args
        function.restype = C.c_int
    return lib


def read_trace(path):
    """The trace's rows as (t, anchor, range_m, tag, floor) in time order, ties in file order."""
    rows = []
    with open(path, newline="", encoding="utf-8") as f:
        lines = (line for line in f if line.strip() and not line.startswith("#"))
        for row in csv.DictReader(lines):
            anchor = row["anchor"].strip()
            rows.append((float(row["t"]), int(anchor, 16) if anchor.lower().startswith("0x") else int(anchor),
                         float(row["range_m"]), (row.get("tag") or "tag").encode(), (row.get("floor") or "").encode()))
    rows.sort(key=lambda r: r[0])  # sort is stable
    return rows


class Replay:
    """One engine over one trace; collects the output lines."""

    def __init__(self, lib, site, options):
        self.lib = lib
        self.engine = C.c_void_p()
        self.check(lib.locus_engine_create_file(site.encode(), C.byref(options), C.byref(self.engine)),
                   "locus_engine_create_file")
        self.positions = [lib.locus_positions_csv_header().decode()]
        self.events = []
        self.kinds = {}
        self.line = C.create_string_buffer(1024)
        self.positions_buffer = (Position * 64)()
        self.events_buffer = (Event * 64)()

    def check(self, status, call):
        if status != 0:
            raise LocusError(self.lib, status, call)

    def push(self, batch):
        ranges = (Range * len(batch))()
        for k, (t, anchor, range_m, tag, floor) in enumerate(batch):
            ranges[k] = Range(t, range_m, tag, floor or None, anchor)
        accepted = C.c_size_t()
        status = self.lib.locus_engine_push_ranges(self.engine, ranges, len(batch), C.byref(accepted))
        if status != 0:  # skipped rows are reported, not fatal (as in `locus replay`)
            print(f"warning: {LocusError(self.lib, status, 'push')}", file=sys.stderr)

    def poll(self):
        count = C.c_size_t()
        length = C.c_size_t()
        while True:
            self.check(self.lib.locus_engine_poll_positions(self.engine, self.positions_buffer, 64, C.byref(count)), "poll")
            for k in range(count.value):
                self.check(self.lib.locus_position_to_csv(C.byref(self.positions_buffer[k]), self.line, len(self.line),
                                                          C.byref(length)), "locus_position_to_csv")
                self.positions.append(self.line.value.decode())
            if count.value < 64:
                break
        while True:
            self.check(self.lib.locus_engine_poll_events(self.engine, self.events_buffer, 64, C.byref(count)), "poll")
            for k in range(count.value):
                event = self.events_buffer[k]
                self.kinds[EVENT_KINDS[event.kind]] = self.kinds.get(EVENT_KINDS[event.kind], 0) + 1
                self.check(self.lib.locus_event_to_json(C.byref(event), self.line, len(self.line), C.byref(length)),
                           "locus_event_to_json")
                self.events.append(self.line.value.decode())
            if count.value < 64:
                break

    def finish(self):
        self.check(self.lib.locus_engine_finish(self.engine), "locus_engine_finish")
        self.poll()
        stats = Stats()
        self.check(self.lib.locus_engine_stats(self.engine, C.byref(stats)), "locus_engine_stats")
        self.check(self.lib.locus_engine_destroy(self.engine), "locus_engine_destroy")
        return stats


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib", required=True, help="path to the library, e.g. .build/debug/liblocus-c.so")
    parser.add_argument("--site", required=True)
    parser.add_argument("--trace", required=True)
    parser.add_argument("--positions", help="write positions CSV (as locus replay --positions)")
    parser.add_argument("--events", help="write zone events JSON Lines (as locus replay --events)")
    parser.add_argument("--filter", choices=["kalman", "none"], default="kalman")
    parser.add_argument("--rate", type=float, default=4.0)
    parser.add_argument("--sigma", type=float, default=0.1, help="range noise sigma, m")
    parser.add_argument("--coupling", choices=["tight", "loose"], default="tight")
    parser.add_argument("--mode", choices=list(MODES), default="auto")
    parser.add_argument("--tag-offset", choices=["auto", "on", "off"], default="auto")
    parser.add_argument("--smooth", action="store_true", help="offline smoother (positions at finish)")
    parser.add_argument("--batch", type=int, default=100, help="ranges per push")
    args = parser.parse_args()

    lib = load(args.lib)
    flags = (OPTION_SMOOTH if args.smooth else 0) | {"auto": 0, "on": OPTION_TAG_OFFSET_ON, "off": OPTION_TAG_OFFSET_OFF}[args.tag_offset]
    options = Options(rate_hz=args.rate, sigma_m=args.sigma, filter=1 if args.filter == "none" else 0,
                      coupling=1 if args.coupling == "loose" else 0, mode=MODES[args.mode], flags=flags)
    rows = read_trace(args.trace)
    try:
        replay = Replay(lib, args.site, options)
        for start in range(0, len(rows), args.batch):
            replay.push(rows[start:start + args.batch])
            replay.poll()
        stats = replay.finish()
    except LocusError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.positions:
        with open(args.positions, "w", encoding="utf-8", newline="") as f:
            f.write("".join(line + "\n" for line in replay.positions))
    if args.events:
        with open(args.events, "w", encoding="utf-8", newline="") as f:
            f.write("".join(line + "\n" for line in replay.events))
    kinds = ", ".join(f"{k} {replay.kinds.get(k, 0)}" for k in ("exit", "enter", "dwell"))
    print(f"liblocus {lib.locus_version().decode()}: {len(rows)} ranges -> {len(replay.positions) - 1} positions "
          f"({stats.epochs} epochs, {stats.ranges_skipped} ranges skipped); zone events: {kinds}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
