"""locus — UWB indoor positioning (Locus) from Python, over liblocus's C ABI with ctypes.

    import locus
    result = locus.replay("site.json", "trace.csv")            # or a NumPy array / DataFrame of rows
    result.positions, result.events, result.summary
    result.write(positions="out.csv", events="out.jsonl")      # the bytes `locus replay` writes

See python/README.md for how the library is found.
"""
from . import _library
from .commands import calibrate, geometry
from .errors import InvalidArgumentError, LocusError
from .replay import replay
from .result import Result
from .session import Session
from .site import Site

__all__ = ["InvalidArgumentError", "LocusError", "Result", "Session", "Site", "calibrate", "geometry", "replay", "version", "library_path"]


def version():
    """The loaded library's version, e.g. "0.3.0" (as `locus --version`)."""
    return _library.library().locus_version().decode()


def library_path():
    """The path of the liblocus the package loads."""
    return _library.path()
