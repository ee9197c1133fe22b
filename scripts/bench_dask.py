"""The timed part of scripts/bench-dask (a file, not stdin: Dask's worker processes re-import the
main module)."""
import filecmp, glob, json, os, sys, time
import distributed
import locus.distributed


def main():

    work, recordings, runs, tags, duration = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
    traces = sorted(glob.glob(os.path.join(work, "rec*.csv")))
    site = os.path.abspath("Fixtures/sites/hall.json")
    results = []
    for partitions in (1, 2):
        results.append(measure(work, traces, site, runs, partitions))
    for r in results:
        r.update({"recordings": len(traces), "tags": tags, "duration_s": duration, "build": "release"})
        print(json.dumps(r))


def measure(work, traces, site, runs, partitions):
    """Best wall time of `runs` archive replays on 1 and on 2 workers; outputs compared."""
    walls = {}
    for workers in (1, 2):
        cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                           scheduler_port=0, dashboard_address=None)
        client = distributed.Client(cluster)
        best = None
        for r in range(runs):
            out = os.path.join(work, f"out{workers}-{partitions}")
            start = time.perf_counter()
            summaries = locus.distributed.replay_archive(client, traces, site, out, partitions_per_trace=partitions)
            wall = time.perf_counter() - start
            best = wall if best is None else min(best, wall)
        fixes = sum(s["fixes"] for s in summaries.values())
        walls[workers] = best
        client.close()
        cluster.close()
    same = all(filecmp.cmp(os.path.join(work, f"out1-{partitions}", os.path.basename(t)[:-4], name), os.path.join(work, f"out2-{partitions}", os.path.basename(t)[:-4], name),
                           shallow=False) for t in traces for name in ("positions.csv", "events.jsonl"))
    return {"bench": f"dask_archive_p{partitions}", "partitions_per_trace": partitions, "fixes": fixes,
            "wall_1_worker_s": round(walls[1], 3), "wall_2_workers_s": round(walls[2], 3), "speedup_x": round(walls[1] / walls[2], 2),
            "fixes_per_s_2_workers": round(fixes / walls[2]), "identical": same}


if __name__ == "__main__":
    main()
