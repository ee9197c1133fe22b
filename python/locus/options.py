"""Engine options as keyword arguments (the options of `locus replay`) -> struct locus_options."""
from . import _ffi
from .errors import InvalidArgumentError


def make_options(filter="kalman", rate=4, sigma=0.1, smooth=False, tag_offset="auto", mode="auto",
                 coupling="tight", floor=None):
    """A struct locus_options from `locus replay`'s options: --filter, --rate, --sigma, --smooth,
    --tag-offset, --mode, --coupling, and the default floor (--floor; None: the site's first).
    Raises InvalidArgumentError (E1003) for a value the CLI does not accept by name; the library checks
    the ranges and raises the same."""
    def pick(table, value, name):
        if value not in table:
            raise InvalidArgumentError(f"{name} must be one of {', '.join(table)}, not {value!r}")
        return table[value]

    flags = _ffi.OPTION_SMOOTH if smooth else 0
    flags |= pick({"auto": 0, "on": _ffi.OPTION_TAG_OFFSET_ON, "off": _ffi.OPTION_TAG_OFFSET_OFF}, tag_offset,
                  "tag_offset")
    return _ffi.Options(rate_hz=float(rate), sigma_m=float(sigma),
                        default_floor=None if floor is None else str(floor).encode(),
                        filter=pick(_ffi.FILTERS, filter, "filter"), coupling=pick(_ffi.COUPLINGS, coupling, "coupling"),
                        mode=pick(_ffi.MODES, mode, "mode"), flags=flags)
