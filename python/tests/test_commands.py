"""locus.geometry, locus.calibrate and replay summaries: the library's typed calls give the command line's --json objects."""
import json
import subprocess

import pytest

import locus
from conftest import DATASET, FIXTURES, cli_path


def test_geometry_equals_the_cli(tmp_path):
    site = FIXTURES / "sites" / "hall.json"
    summary = locus.geometry(site, grid=1.0, svg=tmp_path / "map.svg")
    assert summary["cells"] > 0 and 0 < summary["coverage"] <= 1 and "warnings" in summary
    assert (tmp_path / "map.svg").read_text().startswith("<?xml")
    cli = cli_path()
    if cli:
        out = subprocess.run([cli, "geometry", "--site", str(site), "--grid", "1.0", "--json"], capture_output=True, text=True,
                             check=True).stdout
        expected = json.loads(out)
        assert {k: v for k, v in summary.items() if k != "svg"} == {k: v for k, v in expected.items() if k != "svg"}


def test_tdoa_geometry_equals_the_cli():
    """tdoa=True is `locus geometry --tdoa` (the typed C call's LOCUS_GEOMETRY_TDOA flag)."""
    site = FIXTURES / "sites" / "hall.json"
    summary = locus.geometry(site, grid=1.0, tdoa=True)
    assert summary["measurement"] == "tdoa" and summary["cells"] > 0
    assert "measurement" not in locus.geometry(site, grid=1.0)
    cli = cli_path()
    if cli:
        out = subprocess.run([cli, "geometry", "--site", str(site), "--grid", "1.0", "--tdoa", "--json"], capture_output=True,
                             text=True, check=True).stdout
        assert summary == json.loads(out)


def test_calibrate_with_truth_from_differences(tdoa_trace, tmp_path):
    """Biases from range differences with truth: only their differences are observable, their mean
    is kept at the site's; a simulated site with known biases gets its spread back."""
    cli = cli_path()
    site_path = FIXTURES / "sites" / "hall.json"
    site = json.loads(site_path.read_text())
    surveyed = [l.get("biasM", 0.0) for l in site["floors"][0]["locators"]]
    biases = [0.05 * k for k in range(len(site["floors"][0]["locators"]))]
    for locator, bias in zip(site["floors"][0]["locators"], biases):
        locator["biasM"] = bias
    (tmp_path / "biased.json").write_text(json.dumps(site))
    subprocess.run([cli, "simulate", "--site", str(tmp_path / "biased.json"), "--tdoa", "uplink", "--tags", "2", "--duration", "120",
                    "--seed", "9", "--trace", str(tmp_path / "d.csv"), "--truth", str(tmp_path / "t.csv")], check=True,
                   capture_output=True)
    summary = locus.calibrate(site_path, tmp_path / "d.csv", truth=tmp_path / "t.csv", out=tmp_path / "cal.json")
    fitted = [l["biasM"] for l in json.loads((tmp_path / "cal.json").read_text())["floors"][0]["locators"]]
    # The gauge: the fitted biases keep the surveyed site's mean; their differences are the true ones.
    shift = sum(surveyed) / len(surveyed) - sum(biases) / len(biases)
    for got, want in zip(fitted, biases):
        assert abs(got - (want + shift)) < 0.02, (fitted, biases)
    assert summary["samples"] > 1000


def test_geometry_of_a_site_object_and_errors():
    site = locus.Site.load(FIXTURES / "sites" / "corridor.json")
    assert locus.geometry(site, suggest=True)["suggestion"]["candidates"] > 0
    with pytest.raises(locus.LocusError) as raised:
        locus.geometry(FIXTURES / "sites" / "hall.json", floor="nowhere")
    assert raised.value.code == "E3002"


def test_calibrate_without_truth(tmp_path):
    """A simulated walk on the hall with biases its site file does not have: calibrated from the ranges alone.

    (Simulated on the hall's own site until 2026-12-07: a calibration of a site that is already right is not
    shown better on held-out blocks, and `locus calibrate` now writes nothing then.)"""
    cli = cli_path()
    if cli is None:
        pytest.skip("no locus executable")
    biased = json.loads((FIXTURES / "sites" / "hall.json").read_text())
    for locator, bias in zip(biased["floors"][0]["locators"], [0.15, -0.10, 0.20, 0.05, -0.05, 0.25, 0.10, 0.0]):
        locator["biasM"] = bias
    (tmp_path / "biased.json").write_text(json.dumps(biased))
    trace = tmp_path / "t.csv"
    subprocess.run([cli, "simulate", "--site", str(tmp_path / "biased.json"), "--trace", str(trace), "--truth",
                    str(tmp_path / "truth.csv"), "--duration", "120", "--seed", "4", "--random-walk"], check=True, capture_output=True)
    report = locus.calibrate(FIXTURES / "sites" / "hall.json", trace, out=tmp_path / "cal.json")
    assert report["mode"] == "without_truth" and len(report["locators"]) == 8
    assert not any(l["flagged"] for l in report["locators"])
    assert json.loads((tmp_path / "cal.json").read_text())["floors"][0]["locators"][0]["biasM"] == pytest.approx(
        report["locators"][0]["bias_m"], abs=1e-3)
    # The same bytes as the command line's --out, whatever OpenBLAS's thread count in this process.
    subprocess.run([cli, "calibrate", "--site", str(FIXTURES / "sites" / "hall.json"), "--trace", str(trace), "--out",
                    str(tmp_path / "cli.json")], check=True, capture_output=True)
    assert (tmp_path / "cal.json").read_bytes() == (tmp_path / "cli.json").read_bytes()
    with_truth = locus.calibrate(FIXTURES / "sites" / "hall.json", trace, truth=tmp_path / "truth.csv")
    assert with_truth["samples"] > 0


def test_calibrate_holdout_block(tmp_path):
    """holdout_block is `--holdout-block`: the hall's own walk calibrated without truth is not shown better
    on held-out 10 s blocks, so out= is not written (E4001, with how to write it anyway); 0 turns the
    validation off and writes it as fitted; a length sets the blocks."""
    site, trace = FIXTURES / "sites" / "hall.json", FIXTURES / "traces" / "hall-walk.csv"
    with pytest.raises(locus.LocusError) as raised:
        locus.calibrate(site, trace, out=tmp_path / "refused.json")
    assert raised.value.code == "E4001" and "not shown better" in raised.value.message
    assert "holdout_block=0" in raised.value.message and not (tmp_path / "refused.json").exists()
    report = locus.calibrate(site, trace, out=tmp_path / "cal.json", holdout_block=0)
    assert report["validation"] is None and (tmp_path / "cal.json").exists()
    five = locus.calibrate(site, trace, holdout_block=5)
    ten = locus.calibrate(site, trace)
    assert five["validation"]["block_s"] == 5 and ten["validation"]["block_s"] == 10
    assert five["validation"]["blocks"] > ten["validation"]["blocks"]
    # The fit itself does not depend on the validation.
    assert [l["bias_m"] for l in report["locators"]] == [l["bias_m"] for l in ten["locators"]]


def test_replay_summary_is_the_cli_json_with_truth(cli_replay):
    """For a trace file the summary is `locus replay --json`'s, with truth too (rmse, per_tag, zone_score)."""
    site, trace = FIXTURES / "sites" / "hall.json", FIXTURES / "traces" / "hall-walk.csv"
    result = locus.replay(site, trace, truth=FIXTURES / "traces" / "hall-walk-truth.csv")
    cli = cli_path()
    if cli is None:
        pytest.skip("no locus executable")
    out = subprocess.run([cli, "replay", "--site", str(site), "--trace", str(trace), "--truth",
                          str(FIXTURES / "traces" / "hall-walk-truth.csv"), "--json"], capture_output=True, text=True, check=True).stdout
    expected = json.loads(out)
    timing = ("elapsed_s", "fixes_per_s")
    assert {k: v for k, v in result.summary.items() if k not in timing} == {k: v for k, v in expected.items() if k not in timing}
    assert result.summary["zone_score"]["reference"] > 0 and result.summary["rmse_m"] > 0
    # Rows given as data, with truth: the same object (one pass, the library's own summary).
    import csv
    with open(trace, newline="") as f:
        rows = list(csv.DictReader(f))
    data = {"t": [float(r["t"]) for r in rows], "anchor": [int(r["anchor"], 0) for r in rows],
            "range_m": [float(r["range_m"]) for r in rows]}
    for column in ("tag", "floor"):
        if column in rows[0]:
            data[column] = [r[column] for r in rows]
    from_rows = locus.replay(site, data, truth=FIXTURES / "traces" / "hall-walk-truth.csv")
    assert {k: v for k, v in from_rows.summary.items() if k not in timing} == {k: v for k, v in expected.items() if k not in timing}


def test_calibrate_that_calibrates_nothing_raises(tmp_path):
    """A trace from another site: nothing calibrated, LocusError E4001 with the command's reason."""
    trace = tmp_path / "foreign.csv"
    trace.write_text("t,anchor,range_m\n" + "".join(f"{k * 0.25},{65000 + k % 3},{3.0}\n" for k in range(400)))
    with pytest.raises(locus.LocusError) as raised:
        locus.calibrate(FIXTURES / "sites" / "hall.json", trace)
    assert raised.value.code == "E4001" and "skipped" in raised.value.message
