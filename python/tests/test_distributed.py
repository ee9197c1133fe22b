"""Archive replay on Dask (locus.distributed): byte-identical to `locus replay` for any partition
count, on a LocalCluster of 2 worker processes on 127.0.0.1 that the test starts and stops."""
import json
import os

import pytest

from conftest import DATASET, FIXTURES

distributed = pytest.importorskip("distributed", reason="dask[distributed] is not installed (pip install ./python[distributed])")

import locus.distributed  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       scheduler_port=0, dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


# The summary's timing fields: the merge's are the slowest partition's, not the CLI run's.
TIMING = ("elapsed_s", "fixes_per_s")


def untimed(summary):
    """A summary without its timing fields and the partition count."""
    return {key: value for key, value in summary.items() if key not in TIMING and key != "partitions"}


@pytest.mark.parametrize("stem", ["hall-walk", "corridor-walk"])
def test_partition_merge_without_a_cluster(cli_replay, tmp_path, stem):
    """The partitions merged in-process give the CLI's bytes and, through locus_merge_summaries, its
    `--json` summary but for the timings (1, 2, 3 and 5 partitions; the corridor's stragglers are
    late_range, counted by their tag's partition only)."""
    site, trace = FIXTURES / "sites" / f"{stem.split('-')[0]}.json", FIXTURES / "traces" / f"{stem}.csv"
    positions, events, cli_summary = cli_replay(site, trace)
    expected = json.loads(cli_summary)
    for n in (1, 2, 3, 5):
        parts = [locus.distributed.replay_partition(str(site), str(trace), k, n, {}) for k in range(n)]
        merged_positions, merged_events = locus.distributed.merge_partitions(parts)
        summary = locus.distributed._write_trace(str(tmp_path / f"p{n}"), merged_positions, merged_events, parts)
        assert (tmp_path / f"p{n}" / "positions.csv").read_bytes() == positions, n
        assert (tmp_path / f"p{n}" / "events.jsonl").read_bytes() == events, n
        assert summary["partitions"] == n
        assert untimed(summary) == untimed(expected), n
        assert set(summary) == set(expected) | {"partitions"}, n


def test_summary_merge_refusals():
    """Summaries of different runs, with truth, or none: refused, not guessed."""
    site, trace = FIXTURES / "sites" / "hall.json", FIXTURES / "traces" / "hall-walk.csv"
    parts = [locus.distributed.replay_partition(str(site), str(trace), k, 2, {})["summary"] for k in range(2)]
    assert untimed(locus.distributed.merge_summaries(parts))["fixes"] == sum(p["fixes"] for p in parts)
    with pytest.raises(ValueError):
        locus.distributed.merge_summaries([parts[0], dict(parts[1], ranges=parts[1]["ranges"] + 1)])
    with pytest.raises(ValueError):
        locus.distributed.merge_summaries([parts[0], dict(parts[1], filter="none")])
    with pytest.raises(ValueError):
        locus.distributed.merge_summaries([dict(p, rmse_m=0.1) for p in parts])
    with pytest.raises(ValueError):
        locus.distributed.merge_summaries([])


@pytest.mark.parametrize("partitions", [1, 2, 3])
def test_archive_on_a_local_cluster(client, cli_replay, tmp_path, partitions):
    """Two recordings (hall, corridor: zones, NLOS, dropouts) on 2 workers: every file byte-identical."""
    traces = {"hall-walk": FIXTURES / "sites" / "hall.json", "corridor-walk": FIXTURES / "sites" / "corridor.json"}
    for stem, site in traces.items():
        trace = FIXTURES / "traces" / f"{stem}.csv"
        summaries = locus.distributed.replay_archive(client, [str(trace)], str(site), str(tmp_path / "out"),
                                                     partitions_per_trace=partitions)
        positions, events, cli_summary = cli_replay(site, trace)
        assert (tmp_path / "out" / stem / "positions.csv").read_bytes() == positions
        assert (tmp_path / "out" / stem / "events.jsonl").read_bytes() == events
        written = json.loads((tmp_path / "out" / stem / "summary.json").read_text())
        expected = json.loads(cli_summary)
        assert written == summaries[str(trace)]
        assert written["partitions"] == partitions
        assert untimed(written) == untimed(expected)


@pytest.mark.parametrize("mode", ["uplink", "downlink"])
def test_tdoa_archive_on_a_local_cluster(client, cli_replay, tdoa_trace, tmp_path, mode):
    """A range-difference (TDoA) recording in 3 partitions: the single run's bytes."""
    site, trace, _ = tdoa_trace(mode)
    locus.distributed.replay_archive(client, [str(trace)], str(site), str(tmp_path / "out"), partitions_per_trace=3)
    positions, events, _ = cli_replay(site, trace)
    assert (tmp_path / "out" / mode / "positions.csv").read_bytes() == positions
    assert (tmp_path / "out" / mode / "events.jsonl").read_bytes() == events


def test_real_recording_on_a_local_cluster(client, cli_replay, tmp_path):
    if not (DATASET / "site.json").exists():
        pytest.skip(f"{DATASET} is not present")
    locus.distributed.replay_archive(client, [str(DATASET / "trace.csv")], str(DATASET / "site.json"), str(tmp_path),
                                     partitions_per_trace=2)
    positions, events, _ = cli_replay(DATASET / "site.json", DATASET / "trace.csv")
    assert (tmp_path / "trace" / "positions.csv").read_bytes() == positions
    assert (tmp_path / "trace" / "events.jsonl").read_bytes() == events


def test_refusals(client, tmp_path):
    with pytest.raises(ValueError):
        locus.distributed.replay_archive(client, ["a/x.csv", "b/x.csv"], "site.json", str(tmp_path))
    with pytest.raises(ValueError):
        locus.distributed.replay_archive(client, ["x.csv"], "site.json", str(tmp_path), partitions_per_trace=2, smooth=True)
