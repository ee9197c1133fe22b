"""Finding and loading liblocus (the C ABI, SwiftPM product `locus-c`).

Looked for, in order:
1. the file named by the environment variable LOCUS_LIBRARY;
2. liblocus-c.so or liblocus.so in the package's own folder (a build script may copy it there);
3. the SwiftPM build folder (`.build/*/liblocus-c.so`, the newest first) of the repository the package
   was installed from (recorded by setup.py in locus/_origin.py) or that its source sits in.

The library's RUNPATH names the Swift runtime (/opt/swift/usr/lib/swift/linux), so the runtime
libraries load with it.
"""
import ctypes
import functools
import glob
import os
import pathlib

from . import _ffi

_HERE = pathlib.Path(__file__).resolve().parent
_NAMES = ("liblocus-c.so", "liblocus.so")


def _repositories():
    """Repository roots to search: the recorded one, then the one the source sits in."""
    roots = []
    try:
        from ._origin import REPOSITORY  # written at build time
        roots.append(pathlib.Path(REPOSITORY))
    except ImportError:
        pass
    roots.append(_HERE.parent.parent)
    return roots


def candidates():
    """The paths the library is looked for at, in order (LOCUS_LIBRARY first)."""
    paths = []
    explicit = os.environ.get("LOCUS_LIBRARY")
    if explicit:
        return [pathlib.Path(explicit)]
    paths += [_HERE / name for name in _NAMES]
    for root in _repositories():
        found = [pathlib.Path(p) for p in glob.glob(str(root / ".build" / "*" / "liblocus-c.so"))]
        paths += sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)
    return paths


@functools.lru_cache(maxsize=None)
def library():
    """The loaded library, with its functions declared (loaded once)."""
    tried = candidates()
    for path in tried:
        if path.is_file():
            return _ffi.declare(ctypes.CDLL(str(path)))
    looked = ", ".join(str(p) for p in tried)
    raise OSError(f"liblocus not found (looked at: {looked}); build it with `swift build --product locus-c` "
                  "or set LOCUS_LIBRARY to its path")


def path():
    """The path of the library that `library()` loads (or would load)."""
    for candidate in candidates():
        if candidate.is_file():
            return str(candidate)
    return None
