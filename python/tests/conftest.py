"""Shared fixtures of the locus package's tests: the repository, and `locus replay`'s output files.

The CLI is the repository's SwiftPM build (`.build/*/locus`, or $LOCUS_CLI); tests that compare with
it skip when it is absent.
"""
import glob
import os
import pathlib
import subprocess

import pytest

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = REPOSITORY / "Fixtures"
DATASET = pathlib.Path(os.environ.get("LOCUS_DATASETS", REPOSITORY.parent / "shared" / "datasets")) / "cuhksz-planar-uwb"


def cli_path():
    """The `locus` executable to compare with, or None."""
    explicit = os.environ.get("LOCUS_CLI")
    if explicit:
        return explicit
    found = sorted(glob.glob(str(REPOSITORY / ".build" / "*" / "locus")), key=os.path.getmtime, reverse=True)
    return found[0] if found else None


@pytest.fixture(scope="session")
def cli_replay(tmp_path_factory):
    """cli_replay(site, trace, *options) -> (positions bytes, events bytes, summary JSON text) of
    `locus replay --positions … --events … --json`."""
    cli = cli_path()
    if cli is None:
        pytest.skip("no locus executable (swift build --product locus)")

    def run(site, trace, *options):
        out = tmp_path_factory.mktemp("cli")
        result = subprocess.run([cli, "replay", "--site", str(site), "--trace", str(trace), *options,
                                 "--positions", str(out / "p.csv"), "--events", str(out / "e.jsonl"), "--json"],
                                capture_output=True, text=True)
        assert result.returncode in (0, 2), result.stderr  # 2: a warning verdict (e.g. many rows skipped)
        return (out / "p.csv").read_bytes(), (out / "e.jsonl").read_bytes(), result.stdout
    return run


@pytest.fixture(scope="session")
def tdoa_trace(tmp_path_factory):
    """tdoa_trace(mode) -> (site, trace, truth): a range-difference (TDoA) walk of the hall fixture,
    written by `locus simulate --tdoa MODE` (3 tags, 40 s)."""
    cli = cli_path()
    if cli is None:
        pytest.skip("no locus executable (swift build --product locus)")
    made = {}

    def make(mode="uplink"):
        if mode not in made:
            out = tmp_path_factory.mktemp("tdoa")
            site = FIXTURES / "sites" / "hall.json"
            result = subprocess.run([cli, "simulate", "--site", str(site), "--tdoa", mode, "--tags", "3", "--duration", "40",
                                     "--seed", "5", "--trace", str(out / f"{mode}.csv"), "--truth", str(out / "truth.csv")],
                                    capture_output=True, text=True)
            assert result.returncode == 0, result.stderr
            made[mode] = (site, out / f"{mode}.csv", out / "truth.csv")
        return made[mode]
    return make
