"""Trace rows given as data (NumPy structured array, pandas DataFrame, dict of columns, or a list of
(t, anchor, range_m[, tag[, floor]]) tuples) -> arrays of struct locus_range and, for range
differences (TDoA: columns anchor_a, anchor_b, tdoa_m, SPEC §2), struct locus_difference.

A table may hold ranges, differences or both (a hybrid trace: each row fills one kind, NaN or None in
the other's cells). A row with neither a range nor a difference is skipped as "missing_field", a
difference with anchor_a = anchor_b as "same_locator".

Rows are checked as the CLI's reader checks a trace file's (SPEC §2): an anchor that is not a 16-bit
address is skipped and counted as "invalid_anchor", a t or range_m that is not a number as
"unparseable_number"; NaN, infinite and negative values, unknown floors and locators go to the engine,
which skips and counts them itself.
"""
import ctypes

import numpy as np

from . import _ffi
from .errors import LocusError

_COLUMNS = ("t", "anchor", "range_m", "tag", "floor")
REQUIRED = ("t", "anchor", "range_m")
DIFFERENCE_COLUMNS = ("anchor_a", "anchor_b", "tdoa_m")


def columns(trace):
    """The trace's columns as a dict of NumPy arrays."""
    if hasattr(trace, "columns") and hasattr(trace, "to_numpy"):  # a pandas DataFrame
        return {str(name): trace[name].to_numpy() for name in trace.columns}
    if isinstance(trace, np.ndarray) and trace.dtype.names:
        return {name: trace[name] for name in trace.dtype.names}
    if isinstance(trace, dict):
        return {str(k): np.asarray(v) for k, v in trace.items()}
    rows = list(trace)
    width = max((len(r) for r in rows), default=3)
    return {name: np.array([r[k] if k < len(r) else None for r in rows], dtype=object)
            for k, name in enumerate(_COLUMNS[:max(width, 3)])}


def _numbers(values):
    """A column as float64; entries that are not numbers become NaN and are marked in the result mask."""
    try:
        return np.asarray(values, dtype=np.float64), np.zeros(len(values), dtype=bool)
    except (TypeError, ValueError):
        out = np.empty(len(values), dtype=np.float64)
        bad = np.zeros(len(values), dtype=bool)
        for k, v in enumerate(values):
            try:
                out[k] = float(v)
            except (TypeError, ValueError):
                out[k], bad[k] = np.nan, True
        return out, bad


def _anchors(values):
    """A column of locator addresses as uint16, and the mask of entries that are not 16-bit addresses."""
    values = np.asarray(values)
    if values.dtype.kind in "iu":
        bad = (values < 0) | (values > 0xFFFF)
        return np.where(bad, 0, values).astype(np.uint16), bad
    if values.dtype.kind == "f":
        bad = ~np.isfinite(values) | (values != np.floor(values)) | (values < 0) | (values > 0xFFFF)
        return np.where(bad, 0, values).astype(np.uint16), bad
    out = np.zeros(len(values), dtype=np.uint16)
    bad = np.zeros(len(values), dtype=bool)
    for k, v in enumerate(values):
        try:
            text = str(v).strip()
            number = int(text, 16) if text.lower().startswith("0x") else int(text)
            if not 0 <= number <= 0xFFFF:
                raise ValueError(text)
            out[k] = number
        except (TypeError, ValueError):
            bad[k] = True
    return out, bad


def _texts(values, count, keep):
    """A tag or floor column as addresses of NUL-terminated UTF-8 strings (0: none); `keep` holds them."""
    addresses = np.zeros(count, dtype=np.uint64)
    if values is None:
        return addresses
    texts = np.array(["" if v is None or (isinstance(v, float) and v != v) else
                      (v.decode() if isinstance(v, bytes) else str(v)) for v in values], dtype=object)
    uniques, inverse = np.unique(texts.astype(str), return_inverse=True)
    table = np.zeros(len(uniques), dtype=np.uint64)
    for k, text in enumerate(uniques):
        if text:
            data = text.encode("utf-8")
            keep.append(data)
            table[k] = ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value
    return table[inverse.reshape(-1)]


def _present(values, count):
    """The mask of cells that hold something (not None, not NaN, not an empty string)."""
    if values is None:
        return np.zeros(count, dtype=bool)
    values = np.asarray(values)
    if values.dtype.kind == "f":
        return ~np.isnan(values)
    if values.dtype.kind in "iu":
        return np.ones(count, dtype=bool)
    return np.array([not (v is None or (isinstance(v, float) and v != v) or (isinstance(v, str) and not v.strip()))
                     for v in values], dtype=bool)


def rows(trace, sort):
    """(runs, keep, skipped): the usable rows as runs of one kind in push order — a list of
    ("range", struct locus_range records) and ("difference", struct locus_difference records), sorted
    by time (ties in input order) when `sort` —, the objects their string pointers point into, and
    the rows skipped here by reason."""
    cols = columns(trace)
    has_ranges = all(name in cols for name in REQUIRED)
    has_differences = "t" in cols and all(name in cols for name in DIFFERENCE_COLUMNS)
    if not has_ranges and not has_differences:
        wanted = DIFFERENCE_COLUMNS if any(n in cols for n in DIFFERENCE_COLUMNS) and "range_m" not in cols else REQUIRED
        missing = [name for name in ("t",) + tuple(n for n in wanted if n != "t") if name not in cols]
        raise LocusError("E5003", f"trace: missing column(s) {', '.join(missing)}", 5003)
    count = len(cols["t"])
    keep = []
    t, bad_t = _numbers(cols["t"])
    tag = _texts(cols.get("tag"), count, keep)
    floor = _texts(cols.get("floor"), count, keep)
    # Each row's kind: a range where range_m holds something, else a difference where tdoa_m does.
    is_range = _present(cols.get("range_m"), count) if has_ranges else np.zeros(count, dtype=bool)
    is_difference = ~is_range & (_present(cols["tdoa_m"], count) if has_differences else np.zeros(count, dtype=bool))
    if not has_differences:
        is_range = np.ones(count, dtype=bool)
    skipped = {"missing_field": int((~is_range & ~is_difference).sum())}
    kind = np.where(is_range, 0, np.where(is_difference, 1, -1))
    usable = kind >= 0
    if has_ranges:
        range_m, bad_r = _numbers(np.where(is_range, cols["range_m"], 0.0) if has_differences else cols["range_m"])
        anchor, bad_a = _anchors(np.where(is_range, cols["anchor"], 0) if has_differences else cols["anchor"])
        bad_r &= is_range
        bad_a &= is_range
    else:
        range_m, anchor = np.zeros(count), np.zeros(count, dtype=np.uint16)
        bad_r = bad_a = np.zeros(count, dtype=bool)
    if has_differences:
        tdoa, bad_d = _numbers(np.where(is_difference, cols["tdoa_m"], 0.0))
        anchor_a, bad_aa = _anchors(np.where(is_difference, cols["anchor_a"], 0))
        anchor_b, bad_ab = _anchors(np.where(is_difference, cols["anchor_b"], 0))
        bad_d &= is_difference
        bad_ab = (bad_aa | bad_ab) & is_difference
    else:
        tdoa, anchor_a, anchor_b = np.zeros(count), np.zeros(count, dtype=np.uint16), np.zeros(count, dtype=np.uint16)
        bad_d = bad_ab = np.zeros(count, dtype=bool)
    bad_number = usable & (bad_t | bad_r | bad_d)
    bad_anchor = usable & ~bad_number & (bad_a | bad_ab)
    same = usable & ~bad_number & ~bad_anchor & is_difference & (anchor_a == anchor_b)
    skipped["unparseable_number"] = int(bad_number.sum())
    skipped["invalid_anchor"] = int(bad_anchor.sum())
    skipped["same_locator"] = int(same.sum())
    good = usable & ~bad_number & ~bad_anchor & ~same
    order = np.flatnonzero(good)
    if sort:
        order = order[np.argsort(t[order], kind="stable")]
    runs = []
    start = 0
    while start < len(order):
        end = start + 1
        while end < len(order) and kind[order[end]] == kind[order[start]]:
            end += 1
        k = order[start:end]
        if kind[order[start]] == 0:
            records = np.zeros(len(k), dtype=_ffi.RANGE_DTYPE)
            records["t_s"], records["range_m"], records["anchor"] = t[k], range_m[k], anchor[k]
            records["tag"], records["floor"] = tag[k], floor[k]
            runs.append(("range", np.ascontiguousarray(records)))
        else:
            records = np.zeros(len(k), dtype=_ffi.DIFFERENCE_DTYPE)
            records["t_s"], records["tdoa_m"] = t[k], tdoa[k]
            records["anchor_a"], records["anchor_b"] = anchor_a[k], anchor_b[k]
            records["tag"], records["floor"] = tag[k], floor[k]
            runs.append(("difference", np.ascontiguousarray(records)))
        start = end
    return runs, keep, {k: v for k, v in skipped.items() if v}
