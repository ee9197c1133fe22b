"""The rest of the package's API: version, Site, LocusError, Session, how the library is found."""
import os
import subprocess
import sys

import numpy as np
import pytest

import locus
from conftest import FIXTURES, cli_path


def test_version_equals_the_cli():
    assert locus.version() == "0.3.0"
    cli = cli_path()
    if cli:
        assert subprocess.run([cli, "--version"], capture_output=True, text=True).stdout.split()[1] == locus.version()


def test_site_load():
    site = locus.Site.load(FIXTURES / "sites" / "hall.json")
    assert site.floors == ["1F"]
    assert 0x9DD7 in site.locators["1F"] and len(site.locators["1F"]) == 8
    assert '"floors"' in site.json


def test_bad_site_raises_locus_error_with_code():
    with pytest.raises(locus.LocusError) as caught:
        locus.Site.load(FIXTURES / "sites" / "invalid" / "duplicate-address.json")
    assert caught.value.code == "E3104" and caught.value.message
    with pytest.raises(locus.LocusError) as caught:
        locus.replay(FIXTURES / "sites" / "invalid" / "duplicate-address.json", FIXTURES / "traces" / "hall-walk.csv")
    assert caught.value.code == "E3104"
    with pytest.raises(locus.LocusError) as caught:
        locus.Site("{ not json")
    assert caught.value.code == "E5002"


def test_bad_trace_file_and_option():
    site = FIXTURES / "sites" / "hall.json"
    with pytest.raises(locus.LocusError) as caught:
        locus.replay(site, FIXTURES / "no-such-trace.csv")
    assert caught.value.code == "E5001"
    with pytest.raises(locus.LocusError) as caught:
        locus.replay(site, FIXTURES / "traces" / "hall-walk.csv", rate=0.0000001)
    assert caught.value.code == "E1003"
    with pytest.raises(ValueError):
        locus.replay(site, FIXTURES / "traces" / "hall-walk.csv", filter="particle")


@pytest.mark.parametrize("options", [{}, {"filter": "none"}, {"smooth": True}])
def test_session_gives_the_replay_positions(options):
    site, trace = FIXTURES / "sites" / "hall.json", FIXTURES / "traces" / "hall-walk.csv"
    expected = locus.replay(site, trace, **options)
    rows = np.genfromtxt(trace, delimiter=",", names=True, dtype=None, encoding="utf-8")
    rows = rows[np.argsort(rows["t"], kind="stable")]
    positions, events = [], []
    with locus.Session(locus.Site.load(site), **options) as session:
        for start in range(0, len(rows), 97):
            chunk = rows[start:start + 97]
            session.ingest(chunk)
            session.advance(chunk["t"][-1])
            positions.append(session.positions())
            events += session.events()
        session.finish()
        positions.append(session.positions())
        events += session.events()
        assert len(session.positions()) == 0 and session.events() == []
        with pytest.raises(locus.LocusError) as caught:
            session.ingest(rows[:1])
        assert caught.value.code == "E1002"
    got = np.concatenate(positions)
    assert np.array_equal(got, expected.positions)
    assert events == expected.events
    if not options:
        assert sum(len(p) for p in positions[:-1]) > 0  # released live, before finish


def test_session_accepts_tuples():
    with locus.Session(FIXTURES / "sites" / "hall.json") as session:
        session.ingest([(0.0, 40407, 10.1, "T1"), (0.1, "0x9DD8", 10.2, "T1"), (0.2, "junk", 1.0)])
        assert session.skipped() == {"invalid_anchor": 1}
        assert session.stats()["ranges_accepted"] == 2


def test_library_found_from_the_environment_variable(tmp_path):
    code = "import locus; print(locus.library_path()); print(locus.version())"
    env = dict(os.environ, LOCUS_LIBRARY=str(tmp_path / "missing.so"))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.returncode != 0 and "missing.so" in result.stderr
    env["LOCUS_LIBRARY"] = locus.library_path()
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.returncode == 0 and result.stdout.split() == [locus.library_path(), "0.3.0"]
