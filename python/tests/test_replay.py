"""locus.replay against `locus replay`: byte-identical files, array input, skipped rows, summary."""
import json

import numpy as np
import pytest

import locus
from conftest import DATASET, FIXTURES

OPTION_SETS = [
    ({}, []),
    ({"filter": "none"}, ["--filter", "none"]),
    ({"sigma": 0.2, "rate": 2}, ["--sigma", "0.2", "--rate", "2"]),
    ({"sigma": 0.05, "rate": 5, "smooth": True}, ["--sigma", "0.05", "--rate", "5", "--smooth"]),
    ({"sigma": 0.2, "coupling": "loose", "tag_offset": "on", "smooth": True},
     ["--sigma", "0.2", "--coupling", "loose", "--tag-offset", "on", "--smooth"]),
    ({"filter": "none", "tag_offset": "off", "mode": "planar", "smooth": True},
     ["--filter", "none", "--tag-offset", "off", "--mode", "planar", "--smooth"]),
]


def written(result, tmp_path):
    result.write(positions=tmp_path / "p.csv", events=tmp_path / "e.jsonl")
    return (tmp_path / "p.csv").read_bytes(), (tmp_path / "e.jsonl").read_bytes()


def read_csv_rows(path):
    """The trace file as a structured array (t, tag, anchor, range_m, floor)."""
    return np.genfromtxt(path, delimiter=",", names=True, dtype=None, encoding="utf-8")


@pytest.mark.parametrize("fixture", ["hall", "corridor"])
@pytest.mark.parametrize("options,flags", OPTION_SETS, ids=[" ".join(f) or "default" for _, f in OPTION_SETS])
def test_file_replay_is_byte_identical_to_cli(fixture, options, flags, cli_replay, tmp_path):
    site, trace = FIXTURES / "sites" / f"{fixture}.json", FIXTURES / "traces" / f"{fixture}-walk.csv"
    positions, events, summary = cli_replay(site, trace, *flags)
    result = locus.replay(site, trace, **options)
    assert written(result, tmp_path) == (positions, events)
    cli = json.loads(summary)
    assert result.summary["fixes"] == cli["fixes"] == len(result.positions)
    assert result.summary["skipped"] == cli["skipped"]
    assert result.summary["events"] == cli["events"]
    assert result.summary["ranges"] == cli["ranges"]


@pytest.mark.parametrize("fixture", ["hall", "corridor"])
def test_array_input_gives_the_file_input_bytes(fixture, tmp_path):
    site, trace = FIXTURES / "sites" / f"{fixture}.json", FIXTURES / "traces" / f"{fixture}-walk.csv"
    from_file = locus.replay(locus.Site.load(site), trace)
    rows = read_csv_rows(trace)
    from_array = locus.replay(site, rows)
    assert written(from_array, tmp_path) == written(from_file, tmp_path / "..")
    # A file's summary is `locus replay --json`'s; the array's has the engine's counts: they agree.
    for key in ("fixes", "ranges", "epochs", "skipped", "events", "epochs_before_track", "rejected_ranges", "filter", "smooth"):
        assert from_array.summary[key] == from_file.summary[key], key
    shuffled = rows[np.random.default_rng(1).permutation(len(rows))]  # input order does not matter (sorted)
    shuffled = shuffled[np.argsort(shuffled["t"], kind="stable")]
    assert locus.replay(site, shuffled).positions_csv() == from_file.positions_csv()


def test_dict_and_dataframe_input():
    site, trace = FIXTURES / "sites" / "hall.json", FIXTURES / "traces" / "hall-walk.csv"
    rows = read_csv_rows(trace)
    expected = locus.replay(site, trace).positions_csv()
    assert locus.replay(site, {name: rows[name] for name in rows.dtype.names}).positions_csv() == expected
    pandas = pytest.importorskip("pandas")
    frame = pandas.read_csv(trace)
    result = locus.replay(site, frame)
    assert result.positions_csv() == expected
    assert list(result.to_pandas().columns[:6]) == ["t", "tag", "floor", "x", "y", "z"]


def test_positions_and_events_fields():
    result = locus.replay(FIXTURES / "sites" / "hall.json", FIXTURES / "traces" / "hall-walk.csv")
    p = result.positions
    for name in ("t", "tag", "x", "y", "z", "floor", "accuracy", "hdop"):
        assert name in p.dtype.names
    assert set(p["tag"]) == {"T1", "T2"} and np.all(np.diff(p["t"]) >= 0)
    assert result.events and set(result.events[0]) >= {"t", "tag", "floor", "zone", "event"}
    assert result.summary["events"] == {k: sum(e["event"] == k for e in result.events) for k in ("dwell", "enter", "exit")}


GARBAGE = ["0.5000,T1,40407,garbage,1F", "0.6000,T1,0xZZZZ,10.0,1F", "0.7000,T1,40407,-3.0,1F",
           "0.8000,T1,40407,10.0,9F", "0.9000,T1"]


def test_garbage_rows_are_skipped_and_counted_like_the_cli(cli_replay, tmp_path):
    site = FIXTURES / "sites" / "hall.json"
    lines = (FIXTURES / "traces" / "hall-walk.csv").read_text().splitlines()
    trace = tmp_path / "bad.csv"
    trace.write_text("\n".join(lines[:20] + GARBAGE + lines[20:]) + "\n")
    positions, events, summary = cli_replay(site, trace)
    result = locus.replay(site, trace)  # not raised
    assert written(result, tmp_path) == (positions, events)
    assert result.summary["skipped"] == json.loads(summary)["skipped"]
    # Each garbage row is counted for its reason (a rejected range still moves its tag's clock, so
    # later rows may be counted as time_backwards too — by the CLI alike).
    for reason in ("unparseable_number", "invalid_anchor", "negative_range", "unknown_floor", "missing_field"):
        assert result.summary["skipped"][reason] == 1


def test_garbage_rows_in_an_array_are_skipped_and_counted():
    site, trace = FIXTURES / "sites" / "hall.json", FIXTURES / "traces" / "hall-walk.csv"
    good = locus.replay(site, trace)
    rows = read_csv_rows(trace)
    bad = np.zeros(5, dtype=rows.dtype)
    bad["t"] = [0.5, 0.6, 0.7, np.nan, 0.9]
    bad["tag"], bad["floor"] = "T1", "1F"
    bad["anchor"] = [40407, 70000, 40407, 40407, 40407]
    bad["range_m"] = [np.nan, 10.0, -3.0, 10.0, 10.0]
    bad["floor"][4] = "9F"
    result = locus.replay(site, np.concatenate([rows, bad]))
    assert result.summary["skipped"] == {"invalid_anchor": 1, "negative_range": 1, "non_finite": 2, "unknown_floor": 1}
    assert result.positions_csv() == good.positions_csv()


def test_dataset_replay_is_byte_identical_to_cli(cli_replay, tmp_path):
    if not (DATASET / "trace.csv").is_file():
        pytest.skip(f"{DATASET} is absent")
    site, trace = DATASET / "site.json", DATASET / "trace.csv"
    positions, events, summary = cli_replay(site, trace)
    result = locus.replay(site, trace)
    assert written(result, tmp_path) == (positions, events)
    assert result.summary["skipped"] == json.loads(summary)["skipped"]
    assert len(result.positions) > 100


TDOA_OPTIONS = [({}, []), ({"filter": "none", "rate": 2}, ["--filter", "none", "--rate", "2"]),
                ({"coupling": "loose"}, ["--coupling", "loose"]), ({"smooth": True}, ["--smooth"])]


@pytest.mark.parametrize("mode", ["uplink", "downlink"])
@pytest.mark.parametrize("options,flags", TDOA_OPTIONS, ids=[" ".join(f) or "default" for _, f in TDOA_OPTIONS])
def test_tdoa_file_and_rows_are_byte_identical_to_cli(mode, options, flags, tdoa_trace, cli_replay, tmp_path):
    """Range differences (anchor_a, anchor_b, tdoa_m): the file through the library's reader, and the
    same rows as a NumPy structured array, give `locus replay`'s bytes and counts."""
    site, trace, truth = tdoa_trace(mode)
    positions, events, summary = cli_replay(site, trace, *flags)
    from_file = locus.replay(site, trace, **options)
    assert written(from_file, tmp_path) == (positions, events)
    assert from_file.summary["skipped"] == json.loads(summary)["skipped"]
    rows = np.genfromtxt(trace, delimiter=",", names=True, dtype=None, encoding="utf-8")
    assert set(rows.dtype.names) >= {"t", "tag", "anchor_a", "anchor_b", "tdoa_m"}
    from_rows = locus.replay(site, rows, **options)
    assert written(from_rows, tmp_path / "..") == (positions, events)


def test_tdoa_dataframe(tdoa_trace):
    """A pandas DataFrame of difference rows gives the file's positions."""
    pandas = pytest.importorskip("pandas")
    site, trace, _ = tdoa_trace("uplink")
    assert locus.replay(site, pandas.read_csv(trace)).positions_csv() == locus.replay(site, trace).positions_csv()


def test_tdoa_rows_with_truth_and_bad_rows(tdoa_trace):
    """The summary scores differences against the truth; bad difference rows are skipped and counted
    as the CLI counts them (same_locator here, the rest in the engine)."""
    site, trace, truth = tdoa_trace("uplink")
    rows = np.genfromtxt(trace, delimiter=",", names=True, dtype=None, encoding="utf-8")
    result = locus.replay(site, rows, truth=truth)
    assert 0 < result.summary["rmse_m"] < 0.3
    bad = {"t": [1000.0, 1000.0, 1000.0], "tag": ["X", "X", "X"], "anchor_a": [rows["anchor_a"][0]] * 3,
           "anchor_b": [rows["anchor_a"][0], 65000, rows["anchor_b"][0]], "tdoa_m": [0.1, 0.1, 900.0]}
    frame = {name: np.concatenate([rows[name], np.array(bad[name], dtype=rows[name].dtype)]) for name in bad}
    skipped = locus.replay(site, frame).summary["skipped"]
    assert skipped.get("same_locator") == 1 and skipped.get("unknown_anchor") == 1 and skipped.get("difference_too_long") == 1


def test_hybrid_rows(tdoa_trace, tmp_path):
    """Ranges and differences in one table (each row fills one kind; NaN in the other's cells) give
    the file's bytes."""
    site, trace, _ = tdoa_trace("uplink")
    ranges = np.genfromtxt(FIXTURES / "traces" / "hall-walk.csv", delimiter=",", names=True, dtype=None, encoding="utf-8")
    differences = np.genfromtxt(trace, delimiter=",", names=True, dtype=None, encoding="utf-8")
    n, m = len(ranges), len(differences)
    table = {
        "t": np.concatenate([ranges["t"], differences["t"]]),
        "tag": np.concatenate([ranges["tag"].astype(str), differences["tag"].astype(str)]),
        "anchor": np.concatenate([ranges["anchor"].astype(float), np.full(m, np.nan)]),
        "range_m": np.concatenate([ranges["range_m"], np.full(m, np.nan)]),
        "anchor_a": np.concatenate([np.full(n, np.nan), differences["anchor_a"].astype(float)]),
        "anchor_b": np.concatenate([np.full(n, np.nan), differences["anchor_b"].astype(float)]),
        "tdoa_m": np.concatenate([np.full(n, np.nan), differences["tdoa_m"]]),
    }
    order = np.argsort(table["t"], kind="stable")
    lines = ["t,tag,anchor,range_m,anchor_a,anchor_b,tdoa_m"]
    for k in order:
        if k < n:
            lines.append(f"{float(table['t'][k])!r},{table['tag'][k]},{int(table['anchor'][k])},{float(table['range_m'][k])!r},,,")
        else:
            lines.append(f"{float(table['t'][k])!r},{table['tag'][k]},,,{int(table['anchor_a'][k])},{int(table['anchor_b'][k])},"
                         f"{float(table['tdoa_m'][k])!r}")
    (tmp_path / "hybrid.csv").write_text("\n".join(lines) + "\n")
    from_file = locus.replay(site, tmp_path / "hybrid.csv")
    from_rows = locus.replay(site, table)
    assert from_rows.positions_csv() == from_file.positions_csv()
    assert len(from_file.positions) > 0


def test_tdoa_session_in_chunks_equals_replay(tdoa_trace):
    """A live Session fed a TDoA trace's rows in uneven chunks, with clock ticks, releases replay's positions."""
    site, trace, _ = tdoa_trace("downlink")
    rows = np.genfromtxt(trace, delimiter=",", names=True, dtype=None, encoding="utf-8")
    expected = locus.replay(site, trace).positions
    got = []
    with locus.Session(site) as session:
        start, size = 0, 1
        while start < len(rows):
            chunk = rows[start:start + size]
            session.ingest(chunk)
            session.advance(float(chunk["t"][-1]))
            got.append(session.positions())
            start += size
            size = size % 13 + 1
        session.finish()
        got.append(session.positions())
    positions = np.concatenate(got)
    assert len(positions) == len(expected)
    assert np.array_equal(positions["x"], expected["x"]) and np.array_equal(positions["tag"], expected["tag"])
