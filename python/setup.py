"""Build hook of the `locus` package: records the repository it is built from.

The package finds liblocus-c.so at run time (locus/_library.py); one place it looks is the SwiftPM
build folder of the repository it was installed from. pip copies the package into site-packages, so
that folder is written here, at build time, into locus/_origin.py (metadata stays in pyproject.toml).
"""
import pathlib

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPyRecordingOrigin(build_py):
    """build_py that also writes locus/_origin.py with the repository's absolute path."""

    def run(self):
        super().run()
        repository = pathlib.Path(__file__).resolve().parent.parent
        target = pathlib.Path(self.build_lib) / "locus" / "_origin.py"
        target.write_text('"""Written by setup.py at build time: the repository the package was built from."""\n'
                          f"REPOSITORY = {str(repository)!r}\n")


setup(cmdclass={"build_py": BuildPyRecordingOrigin})
