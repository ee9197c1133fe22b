"""The command line's geometry and calibration from Python: the library's typed calls
(`locus_geometry`, `locus_calibrate_file`) — the same code as `locus geometry` and `locus calibrate`,
their `--json` summaries returned as dicts."""
import ctypes
import json
import numbers
import os

from . import _ffi, _library
from .errors import InvalidArgumentError, LocusError, check, plain_message
from .site import Site


def take_text(lib, pointer):
    """The text the library allocated at `pointer` (a c_void_p), freed; None for NULL."""
    if not pointer.value:
        return None
    try:
        return ctypes.string_at(pointer.value).decode("utf-8")
    finally:
        lib.locus_free(pointer.value)


def run_json(call, *arguments, notes=True):
    """Calls a whole-run function of the library; returns (summary dict or None, notes text, verdict)."""
    lib = _library.library()
    summary, said, verdict = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_int()
    if notes:
        status = call(*arguments, ctypes.byref(summary), ctypes.byref(said), ctypes.byref(verdict))
    else:
        status = call(*arguments, ctypes.byref(summary))
    check(lib, status)
    text = take_text(lib, summary)
    return (None if text is None else json.loads(text)), (take_text(lib, said) or ""), verdict.value


def verdict_error(name, notes):
    """A run that produced nothing usable (the command's exit 1, RunVerdict) as LocusError E4001
    with the command's reason, plainly: its `error:` lines without the `locus NAME: error:` prefix."""
    reason = " ".join(plain_message(line) for line in notes.splitlines() if "error:" in line)
    return LocusError("E4001", reason or f"the {name} produced nothing", 4001)


def _site_path(site, keep):
    if isinstance(site, Site):
        import tempfile
        handle = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        handle.write(site.json)
        handle.close()
        keep.append(handle.name)
        return handle.name
    return os.fspath(site)


def _text(value):
    return None if value is None else os.fsencode(os.fspath(value)) if isinstance(value, (str, bytes, os.PathLike)) else str(value).encode()


def geometry(site, *, floor=None, grid=None, max_range=None, svg=None, suggest=False, accuracy=None, trace=None, tdoa=False):
    """`locus geometry`: DOP map, coverage and warnings of a floor's layout, as the `--json` dict
    (cells, hdop_p50, hdop_p95, hdop_max, coverage, warnings, …; `suggestion` with suggest=True,
    `accuracy` with accuracy=σ, `survey` with trace=PATH); svg=PATH also writes the heatmap.
    tdoa=True plans a range-difference (TDoA) site (`--tdoa`: "measurement": "tdoa")."""
    keep = []
    try:
        flags = (_ffi.GEOMETRY_SUGGEST if suggest else 0) | (_ffi.GEOMETRY_TDOA if tdoa else 0)
        request = _ffi.GeometryRequest(site_path=_text(_site_path(site, keep)), floor=_text(floor), svg_path=_text(svg),
                                       trace_path=_text(trace), grid_m=float(grid or 0), max_range_m=float(max_range or 0),
                                       accuracy_sigma_m=float(accuracy or 0), flags=flags)
        summary, _, _ = run_json(_library.library().locus_geometry, ctypes.byref(request), notes=False)
        return summary
    finally:
        for path in keep:
            os.unlink(path)


def _holdout_block_ms(seconds):
    """`holdout_block` (seconds; None: the default 10 s, 0: no validation) as the request's
    holdout_block_ms (0: the default) and whether LOCUS_CALIBRATE_NO_HOLDOUT is set."""
    if seconds is None:
        return 0, False
    if isinstance(seconds, bool) or not isinstance(seconds, numbers.Real) or not 0 <= seconds <= 86_400:
        raise InvalidArgumentError(f"holdout_block must be a number of seconds in 0 … 86400 (0: no validation), not {seconds!r}")
    if seconds == 0:
        return 0, True
    milliseconds = round(seconds * 1000)
    if milliseconds < 1:
        raise InvalidArgumentError(f"holdout_block {seconds!r} s is below 1 ms (0 turns the validation off)")
    return milliseconds, False


def calibrate(site, trace, *, truth=None, out=None, slope=False, fix_positions=False, floor=None, estimator=None,
              min_samples=None, height=None, holdout_block=None):
    """`locus calibrate`: each locator's bias and noise — from truth (truth=PATH), or from the ranges
    alone with a survey check of every locator — as the `--json` dict; out=PATH writes the
    calibrated site. A run that calibrates nothing (`locus calibrate`'s exit 1) raises LocusError E4001
    with the command's reason; so does an out=PATH that the held-out validation refused or, without
    truth, did not show better (the dict's `validation`, docs/calibration.md: not written).
    holdout_block=SECONDS is `--holdout-block`: the validation's block length (None: 10 s); 0 turns
    the validation off and writes out=PATH as fitted."""
    if estimator not in _ffi.ESTIMATORS:
        raise InvalidArgumentError(f"estimator must be one of tukey, huber, median, not {estimator!r}")
    if height not in _ffi.HEIGHTS:
        raise InvalidArgumentError(f"height must be one of auto, floor, truth, not {height!r}")
    block_ms, no_holdout = _holdout_block_ms(holdout_block)
    keep = []
    try:
        flags = ((_ffi.CALIBRATE_SLOPE if slope else 0) | (_ffi.CALIBRATE_FIX_POSITIONS if fix_positions else 0)
                 | (_ffi.CALIBRATE_NO_HOLDOUT if no_holdout else 0))
        request = _ffi.CalibrateRequest(site_path=_text(_site_path(site, keep)), trace_path=_text(trace), truth_path=_text(truth),
                                        out_path=_text(out), floor=_text(floor), estimator=_ffi.ESTIMATORS[estimator],
                                        height=_ffi.HEIGHTS[height], min_samples=int(min_samples or 0), flags=flags,
                                        holdout_block_ms=block_ms)
        summary, notes, verdict = run_json(_library.library().locus_calibrate_file, ctypes.byref(request))
        if verdict != 0:
            raise verdict_error("calibration", notes)
        return summary
    finally:
        for path in keep:
            os.unlink(path)
