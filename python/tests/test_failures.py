"""Failures are raised, once and plainly (issue #41 item 7): a replay that gives no fix raises the
command's verdict (`locus replay` exits 1 with its hint); a LocusError's message carries no CLI prefix
and no repeated code; every invalid argument raises one type, InvalidArgumentError (a LocusError and a
ValueError) with code E1003; the README's Dask snippet runs as written."""
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import locus
from conftest import FIXTURES, REPOSITORY

SITE = FIXTURES / "sites" / "hall.json"
TRACE = FIXTURES / "traces" / "hall-walk.csv"


def plain(error):
    """The message has no `locus CMD:` prefix, no `error:` and no `[Ennnn]` code in it."""
    assert not re.search(r"locus \w+:|error:|\[E\d{4}\]", error.message), error.message
    assert str(error) == f"{error.code}: {error.message}"


def foreign_trace(tmp_path):
    path = tmp_path / "foreign.csv"
    path.write_text("t,anchor,range_m,tag\n" + "".join(f"{k * 0.25},{65000 + k % 3},3.0,T1\n" for k in range(40)))
    return path


def test_replay_of_a_foreign_trace_raises_the_verdict(tmp_path):
    """The CLI exits 1 with 'every row skipped (unknown_anchor 40) — does this trace belong to this
    site?'; Python raises that, not a Result with 0 fixes."""
    with pytest.raises(locus.LocusError) as raised:
        locus.replay(SITE, foreign_trace(tmp_path))
    assert raised.value.code == "E4001"
    assert "unknown_anchor 40" in raised.value.message and "belong to this site" in raised.value.message
    plain(raised.value)


def test_replay_of_rows_all_skipped_before_the_engine_raises(tmp_path):
    """Rows given as data whose anchors are not addresses never reach the engine: still the verdict."""
    rows = {"t": np.arange(5) * 0.25, "anchor": ["zz"] * 5, "range_m": np.full(5, 3.0), "tag": ["T1"] * 5}
    with pytest.raises(locus.LocusError) as raised:
        locus.replay(SITE, rows)
    assert raised.value.code == "E4001" and "invalid_anchor 5" in raised.value.message
    plain(raised.value)


def test_truth_that_covers_no_fix_raises(tmp_path):
    truth = tmp_path / "truth.csv"
    truth.write_text("t,tag,x,y\n" + "".join(f"{1000 + k},T1,1.0,1.0\n" for k in range(5)))
    with pytest.raises(locus.LocusError) as raised:
        locus.replay(SITE, TRACE, truth=truth)
    assert raised.value.code == "E4001" and "truth covers 0" in raised.value.message
    plain(raised.value)


def test_calibrate_failure_is_plain(tmp_path):
    with pytest.raises(locus.LocusError) as raised:
        locus.calibrate(SITE, foreign_trace(tmp_path))
    assert raised.value.code == "E4001" and "skipped" in raised.value.message
    plain(raised.value)


def test_library_errors_carry_their_code_once():
    with pytest.raises(locus.LocusError) as raised:
        locus.replay(SITE, FIXTURES / "no-such-trace.csv")
    assert raised.value.code == "E5001"
    plain(raised.value)


@pytest.mark.parametrize("call", [
    lambda: locus.replay(SITE, TRACE, filter="ukf"),
    lambda: locus.replay(SITE, TRACE, rate=-1),
    lambda: locus.replay(SITE, TRACE, coupling="loose-ish"),
    lambda: locus.calibrate(SITE, TRACE, estimator="mean"),
    lambda: locus.calibrate(SITE, TRACE, height="roof"),
    lambda: locus.calibrate(SITE, TRACE, holdout_block=-1),
    lambda: locus.calibrate(SITE, TRACE, holdout_block=86_401),
    lambda: locus.calibrate(SITE, TRACE, holdout_block="10"),
    lambda: locus.calibrate(SITE, TRACE, holdout_block=True),
    lambda: locus.calibrate(SITE, TRACE, holdout_block=float("nan")),
    lambda: locus.calibrate(SITE, TRACE, holdout_block=1e-5),
    lambda: locus.Session(SITE, mode="4d"),
], ids=["filter", "rate", "coupling", "estimator", "height", "holdout-negative", "holdout-above-a-day", "holdout-text",
        "holdout-bool", "holdout-nan", "holdout-below-a-millisecond", "session-mode"])
def test_every_invalid_argument_raises_one_type_with_E1003(call):
    with pytest.raises(locus.InvalidArgumentError) as raised:
        call()
    assert isinstance(raised.value, locus.LocusError) and isinstance(raised.value, ValueError)
    assert raised.value.code == "E1003" and raised.value.status == 1003
    plain(raised.value)


def readme_dask_snippet():
    """The Python block under '## Archive replay on Dask' in python/README.md, as written."""
    text = (REPOSITORY / "python" / "README.md").read_text()
    section = text[text.index("## Archive replay on Dask"):]
    return section[section.index("```python\n") + len("```python\n"):section.index("```\n", section.index("```python"))]


def test_readme_dask_snippet_runs_as_written(tmp_path):
    """The snippet as a script in a subprocess (spawned workers import __main__), on a LocalCluster on
    127.0.0.1, over rec/a.csv and rec/b.csv beside site.json."""
    pytest.importorskip("distributed", reason="dask[distributed] is not installed (pip install ./python[distributed])")
    (tmp_path / "rec").mkdir()
    shutil.copy(TRACE, tmp_path / "rec" / "a.csv")
    shutil.copy(TRACE, tmp_path / "rec" / "b.csv")
    shutil.copy(FIXTURES / "sites" / "hall.json", tmp_path / "site.json")
    script = tmp_path / "snippet.py"
    script.write_text(readme_dask_snippet())
    result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    for stem in ("a", "b"):
        for name in ("positions.csv", "events.jsonl", "summary.json"):
            assert (tmp_path / "out" / stem / name).exists(), (stem, name)
