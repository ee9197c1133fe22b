"""LocusError: a failed call of liblocus, with the library's stable code and message."""
import ctypes


class LocusError(Exception):
    """A non-zero status from liblocus.

    `code` is the stable error code as text ("E3104"; table in docs/errors.md), `status` the same as a
    number (3104), `message` the library's message.
    """

    def __init__(self, code, message, status=0):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status


def last_error(lib):
    """The calling thread's last error of `lib` as a LocusError."""
    status = lib.locus_last_error_code()
    length = lib.locus_last_error_message(None, 0)
    buffer = ctypes.create_string_buffer(length + 1)
    lib.locus_last_error_message(buffer, len(buffer))
    return LocusError(lib.locus_status_name(status).decode(), buffer.value.decode(errors="replace"), status)


def check(lib, status):
    """Raises the last error when `status` is not 0."""
    if status != 0:
        raise last_error(lib)
