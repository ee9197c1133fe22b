"""LocusError: a failed call of liblocus (or a run that produced nothing), with the stable code of
docs/errors.md and a plain message; InvalidArgumentError: every invalid argument, code E1003."""
import ctypes
import re

# What the command line puts around a message, which a Python caller has no use for: the command's
# prefix ("locus replay: error: ") and the code the library appends (" [E5001]"); the code is
# `LocusError.code`, and str(error) shows it once.
_PREFIX = re.compile(r"^locus \w+: (?:error|warning): ")
_CODE_SUFFIX = re.compile(r"\s*\[E\d{4}\]$")


def plain_message(message):
    """`message` without the command line's prefix and the trailing `[Ennnn]` code."""
    return _CODE_SUFFIX.sub("", _PREFIX.sub("", message.strip()))


class LocusError(Exception):
    """A non-zero status from liblocus, or a run that produced nothing usable.

    `code` is the stable error code as text ("E3104"; table in docs/errors.md), `status` the same as a
    number (3104), `message` the plain message (no command prefix, no code: str(error) is
    "CODE: message").
    """

    def __init__(self, code, message, status=0):
        message = plain_message(message)
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status or (int(code[1:]) if re.fullmatch(r"E\d{4}", code) else 0)


class InvalidArgumentError(LocusError, ValueError):
    """An argument outside its domain — a name the option does not know (filter="ukf") or a number
    out of range (rate=-1), whether Python or the library finds it: always code E1003. It is a
    ValueError too, so `except ValueError` keeps working."""

    def __init__(self, message):
        super().__init__("E1003", message, 1003)


def error(code, message, status=0):
    """The exception for `code`: InvalidArgumentError for E1003, LocusError otherwise."""
    return InvalidArgumentError(message) if code == "E1003" else LocusError(code, message, status)


def last_error(lib):
    """The calling thread's last error of `lib` as a LocusError (InvalidArgumentError for E1003)."""
    status = lib.locus_last_error_code()
    length = lib.locus_last_error_message(None, 0)
    buffer = ctypes.create_string_buffer(length + 1)
    lib.locus_last_error_message(buffer, len(buffer))
    return error(lib.locus_status_name(status).decode(), buffer.value.decode(errors="replace"), status)


def check(lib, status):
    """Raises the last error when `status` is not 0."""
    if status != 0:
        raise last_error(lib)
