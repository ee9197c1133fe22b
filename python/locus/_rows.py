"""Trace rows given as data (NumPy structured array, pandas DataFrame, dict of columns, or a list of
(t, anchor, range_m[, tag[, floor]]) tuples) -> an array of struct locus_range.

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


def ranges(trace, sort):
    """(records, keep, skipped): the usable rows as struct locus_range records (sorted by time, ties
    in input order, when `sort`), the objects their string pointers point into, and the rows skipped
    here by reason."""
    cols = columns(trace)
    missing = [name for name in REQUIRED if name not in cols]
    if missing:
        raise LocusError("E5003", f"trace: missing column(s) {', '.join(missing)}", 5003)
    count = len(cols["t"])
    t, bad_t = _numbers(cols["t"])
    range_m, bad_r = _numbers(cols["range_m"])
    anchor, bad_a = _anchors(cols["anchor"])
    skipped = {"unparseable_number": int((bad_t | bad_r).sum())}
    skipped["invalid_anchor"] = int((bad_a & ~(bad_t | bad_r)).sum())
    keep = []
    records = np.zeros(count, dtype=_ffi.RANGE_DTYPE)
    records["t_s"], records["range_m"], records["anchor"] = t, range_m, anchor
    records["tag"] = _texts(cols.get("tag"), count, keep)
    records["floor"] = _texts(cols.get("floor"), count, keep)
    records = records[~(bad_t | bad_r | bad_a)]
    if sort:
        records = records[np.argsort(records["t_s"], kind="stable")]
    return np.ascontiguousarray(records), keep, {k: v for k, v in skipped.items() if v}
