"""Site: a site description (SPEC §1) loaded once, kept as JSON text, checked by the library."""
import ctypes
import json
import os

from . import _library
from .errors import check


class Site:
    """A site: its JSON text (`json`), the parsed document (`document`), the floor ids (`floors`) and
    each floor's locator addresses (`locators`: floor id -> list of int)."""

    def __init__(self, text, source="<json>"):
        self.json = text if isinstance(text, str) else bytes(text).decode("utf-8")
        self.source = source
        lib = _library.library()
        engine = ctypes.c_void_p()
        data = self.json.encode("utf-8")
        check(lib, lib.locus_engine_create_json(data, len(data), None, ctypes.byref(engine)))  # the library's checks
        lib.locus_engine_destroy(engine)
        self.document = json.loads(self.json)
        self.floors = [floor["id"] for floor in self.document.get("floors", [])]
        self.locators = {floor["id"]: [_address(l["address"]) for l in floor.get("locators", [])]
                         for floor in self.document.get("floors", [])}

    @classmethod
    def load(cls, path):
        """The site in the file at `path`. Raises LocusError (e.g. code "E3104") for an invalid site,
        OSError when the file cannot be read."""
        with open(path, "rb") as f:
            return cls(f.read(), source=os.fspath(path))

    def __repr__(self):
        return f"Site({self.source!r}, floors={self.floors})"


def _address(value):
    """A locator address as an int (the site allows 40407, "40407" and "0x9DD7")."""
    if isinstance(value, str):
        return int(value, 16) if value.lower().startswith("0x") else int(value)
    return int(value)
