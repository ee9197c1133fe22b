"""Result: the positions, zone events and summary of a replay, and the files `locus replay` writes."""
import ctypes
import json

import numpy as np

from . import _ffi, _library
from .errors import check

#: Result.positions' fields: (name, field of struct locus_position, index in it or None).
_POSITION_FIELDS = [("t", "t_s", None), ("tag", "tag", None), ("floor", "floor", None), ("x", "x_m", None),
                    ("y", "y_m", None), ("z", "z_m", None), ("vx", "vx_mps", None), ("vy", "vy_mps", None),
                    ("vz", "vz_mps", None), ("speed", "speed_mps", None), ("course", "course_rad", None)] + \
                   [(f"cov_{k}", "covariance_m2", i) for i, k in enumerate(("xx", "xy", "xz", "yy", "yz", "zz"))] + \
                   [("accuracy", "accuracy_m", None), ("accuracy95", "accuracy95_m", None), ("hdop", "hdop", None),
                    ("vdop", "vdop", None), ("pdop", "pdop", None), ("residual_rms", "residual_rms_m", None),
                    ("anchors_used", "anchors_used", None), ("rejected_count", "rejected_count", None),
                    ("flags", "flags", None)]

POSITIONS_DTYPE = np.dtype([(name, f"U{_ffi.ID_CAPACITY}" if name in ("tag", "floor") else
                             ("<i4" if name in ("anchors_used", "rejected_count", "flags") else "<f8"))
                            for name, _, _ in _POSITION_FIELDS])


def positions_array(raw):
    """struct locus_position records -> the public structured array (units: m, s, m/s, rad, m²)."""
    out = np.zeros(len(raw), dtype=POSITIONS_DTYPE)
    for name, field, index in _POSITION_FIELDS:
        column = raw[field] if index is None else raw[field][:, index]
        out[name] = np.char.decode(column, "utf-8") if name in ("tag", "floor") and len(raw) else column
    return out


def event_lines(raw):
    """struct locus_event records -> their `locus replay --events` lines (without line breaks)."""
    return _formatted(raw, "locus_event_to_json", 1024)


def position_lines(raw):
    """struct locus_position records -> their `locus replay --positions` rows (without line breaks)."""
    return _formatted(raw, "locus_position_to_csv", 2048)


def _formatted(raw, function, capacity):
    """Each record of `raw` through the library's formatter `function` (its exact bytes), as text."""
    lib = _library.library()
    format_one = getattr(lib, function)
    buffer = ctypes.create_string_buffer(capacity)
    length = ctypes.c_size_t()
    lines = []
    for k in range(len(raw)):
        check(lib, format_one(raw[k:k + 1].ctypes.data, buffer, len(buffer), ctypes.byref(length)))
        lines.append(buffer.value.decode("utf-8"))
    return lines


class Result:
    """What a replay gave: `positions` (NumPy structured array: t, tag, floor, x, y, z, vx, vy, vz,
    speed, course, cov_xx..cov_zz, accuracy, accuracy95, hdop, vdop, pdop, residual_rms, anchors_used,
    rejected_count, flags), `events` (list of dicts with the keys of an `--events` line), `summary`
    (dict: fixes, ranges, epochs, skipped by reason, failed_epochs, epochs_before_track,
    rejected_ranges, events by kind, filter, smooth)."""

    def __init__(self, raw_positions, raw_events, summary):
        self.raw_positions = raw_positions
        self.raw_events = raw_events
        self.positions = positions_array(raw_positions)
        self._event_lines = event_lines(raw_events)
        self.events = [json.loads(line) for line in self._event_lines]
        self.summary = summary

    def to_pandas(self):
        """The positions as a pandas DataFrame (needs pandas)."""
        import pandas
        return pandas.DataFrame(self.positions)

    def positions_csv(self):
        """The positions file `locus replay --positions` writes, as text."""
        header = _library.library().locus_positions_csv_header().decode("utf-8")
        return "".join(line + "\n" for line in [header] + position_lines(self.raw_positions))

    def events_jsonl(self):
        """The events file `locus replay --events` writes, as text."""
        return "".join(line + "\n" for line in self._event_lines)

    def write(self, positions=None, events=None):
        """Writes the positions CSV and/or the events JSON Lines, byte for byte as `locus replay
        --positions PATH --events PATH` does."""
        if positions is not None:
            with open(positions, "w", encoding="utf-8", newline="") as f:
                f.write(self.positions_csv())
        if events is not None:
            with open(events, "w", encoding="utf-8", newline="") as f:
                f.write(self.events_jsonl())

    def __repr__(self):
        return f"Result({len(self.positions)} positions, {len(self.events)} events)"
