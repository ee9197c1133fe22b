"""The command line's geometry and calibration from Python: `locus geometry` and `locus calibrate`
run in-process through the library (`locus_command`), their `--json` summaries returned as dicts."""
import ctypes
import json
import os
import re

from . import _library
from .errors import LocusError, check
from .site import Site


def command(*arguments):
    """Runs `locus ARGUMENTS...` in this process; returns (exit status, stdout text, stderr text)."""
    lib = _library.library()
    argv = (ctypes.c_char_p * len(arguments))(*[os.fsencode(str(a)) for a in arguments])
    capacity = 1 << 20
    while True:
        out, err = ctypes.create_string_buffer(capacity), ctypes.create_string_buffer(capacity)
        out_length, err_length, status = ctypes.c_size_t(), ctypes.c_size_t(), ctypes.c_int()
        result = lib.locus_command(argv, len(arguments), out, capacity, ctypes.byref(out_length), err, capacity,
                                   ctypes.byref(err_length), ctypes.byref(status))
        needed = max(out_length.value, err_length.value) + 1
        if result != 0 and needed > capacity:
            capacity = needed
            continue
        check(lib, result)
        return status.value, out.value.decode("utf-8"), err.value.decode("utf-8")


def _json_command(name, arguments, summary_on_failure=False):
    """`locus NAME ARGUMENTS... --json` → the summary dict; a failure raises LocusError with the code
    (with `summary_on_failure`, a run-time failure — exit 1, e.g. no fix — that printed its summary
    returns it: the verdict is in the figures)."""
    status, out, err = command(name, *arguments, "--json")
    if status == 1 and summary_on_failure and out.strip().startswith("{"):
        return json.loads(out)
    if status != 0:
        found = re.search(r"\[(E\d{4})\]", err)
        code = found.group(1) if found else ("E1001" if status == 2 else "E0000")
        raise LocusError(code, err.strip() or f"locus {name} exited {status}", int(code[1:]))
    return json.loads(out)


def _site_path(site, keep):
    if isinstance(site, Site):
        import tempfile
        handle = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        handle.write(site.json)
        handle.close()
        keep.append(handle.name)
        return handle.name
    return os.fspath(site)


def _options(pairs):
    arguments = []
    for flag, value in pairs:
        if value is None or value is False:
            continue
        arguments += [flag] if value is True else [flag, str(value)]
    return arguments


def geometry(site, *, floor=None, grid=None, max_range=None, svg=None, suggest=False, accuracy=None, trace=None):
    """`locus geometry`: DOP map, coverage and warnings of a floor's layout, as the `--json` dict
    (cells, hdop_p50, hdop_p95, hdop_max, coverage, warnings, …; `suggestion` with suggest=True,
    `accuracy` with accuracy=σ, `survey` with trace=PATH); svg=PATH also writes the heatmap."""
    keep = []
    try:
        arguments = ["--site", _site_path(site, keep)] + _options([("--floor", floor), ("--grid", grid), ("--max-range", max_range),
                                                                  ("--svg", svg), ("--suggest", suggest), ("--accuracy", accuracy),
                                                                  ("--trace", trace)])
        return _json_command("geometry", arguments)
    finally:
        for path in keep:
            os.unlink(path)


def calibrate(site, trace, *, truth=None, out=None, slope=False, fix_positions=False, floor=None, estimator=None,
              min_samples=None):
    """`locus calibrate`: each locator's bias and noise — from truth (truth=PATH), or from the ranges
    alone with a survey check of every locator — as the `--json` dict; out=PATH writes the
    calibrated site."""
    keep = []
    try:
        arguments = ["--site", _site_path(site, keep), "--trace", os.fspath(trace)]
        arguments += _options([("--truth", truth), ("--out", out), ("--slope", slope), ("--fix-positions", fix_positions),
                               ("--floor", floor), ("--estimator", estimator), ("--min-samples", min_samples)])
        return _json_command("calibrate", arguments)
    finally:
        for path in keep:
            os.unlink(path)
