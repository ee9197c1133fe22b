#!/usr/bin/env python3
"""Convert the libRSF "Indoor_UWB" recording ("The Labyrinth Dataset", Tim Pfeifer, TU Chemnitz) to the
formats of SPEC.md.

Source: https://github.com/TUC-ProAut/libRSF, folder datasets/Indoor_UWB/ (the dataset is CC BY-SA 4.0,
datasets/Indoor_UWB/LICENSE.txt; the library's code is GPL-3.0 and is not used here).

usage: convert_librsf_uwb.py SOURCE OUTDIR [--commit REV]

SOURCE is a checkout / `git archive` export of libRSF (a folder holding datasets/Indoor_UWB/) or a bare
git directory (files then read with `git show REV:path`).

Written under OUTDIR: site.json (4 anchors from the range rows, z 0, tagHeightM 0: the source is 2D),
trace.csv (t,anchor,range_m: every `range2` row, range as given), truth.csv (t,x,y: every `point2` row).
Times are kept as in the source (seconds from its start). Python 3 + numpy-free (standard library only).
"""
import json
import os
import sys

import provenance
import snapshot

DIR = "datasets/Indoor_UWB/"


def main():
    args = snapshot.arguments(__doc__)
    src = snapshot.Snapshot(args.source, args.commit, "datasets")

    def read(name):
        return src.read(DIR + name).decode("utf-8")

    anchors = {}
    trace = ["t,anchor,range_m"]
    for line in read("Indoor_UWB_Input.txt").splitlines():
        p = line.split()
        if not p or p[0] != "range2":
            continue
        t, rng, ax, ay, module = float(p[1]), float(p[2]), float(p[4]), float(p[5]), int(p[6])
        if module in anchors and anchors[module] != (ax, ay):
            raise SystemExit("anchor %d moves: %s vs %s" % (module, anchors[module], (ax, ay)))
        anchors[module] = (ax, ay)
        trace.append("%.6f,%d,%.6f" % (t, module, rng))
    truth = ["t,x,y"]
    for line in read("Indoor_UWB_GT.txt").splitlines():
        p = line.split()
        if not p or p[0] not in ("point2", "gt2"):
            continue
        truth.append("%.6f,%.6f,%.6f" % (float(p[1]), float(p[2]), float(p[3])))
    xs = [a[0] for a in anchors.values()]
    ys = [a[1] for a in anchors.values()]
    floor = {"id": "F1", "name": "Labyrinth",
             "originX": round(min(xs) - 0.5, 3), "originY": round(min(ys) - 0.5, 3),
             "widthM": round(max(xs) - min(xs) + 1.0, 3), "heightM": round(max(ys) - min(ys) + 1.0, 3),
             "tagHeightM": 0, "sessionId": 1,
             "locators": [{"address": k, "x": v[0], "y": v[1], "z": 0} for k, v in sorted(anchors.items())],
             "zones": []}
    site = {"building": {"id": "librsf-indoor-uwb", "name": "libRSF Indoor UWB (Labyrinth)", "floorCount": 1},
            "floors": [floor]}
    os.makedirs(args.outdir, exist_ok=True)
    with open(os.path.join(args.outdir, "site.json"), "w") as f:
        f.write(json.dumps(site, indent=1) + "\n")
    with open(os.path.join(args.outdir, "trace.csv"), "w") as f:
        f.write("\n".join(trace) + "\n")
    with open(os.path.join(args.outdir, "truth.csv"), "w") as f:
        f.write("\n".join(truth) + "\n")
    provenance.write(
        args.outdir, title="libRSF Indoor_UWB (\"The Labyrinth Dataset\"): a small robot, 4 anchors polled round robin",
        source_url="https://github.com/TUC-ProAut/libRSF, folder datasets/Indoor_UWB/ (Tim Pfeifer, TU Chemnitz)",
        commit=src.commit_hash(),
        licence="CC BY-SA 4.0 (share-alike: keep these files outside the Locus repository)",
        licence_text=read("LICENSE.txt"), converter="convert_librsf_uwb.py",
        argv=sys.argv[1:], description=__doc__,
        notes=["**Known**: the anchors read 0.07-0.15 m long; the truth's origin is not stated; each epoch holds one "
               "range (a round robin: docs/datasets.md)."])
    print(json.dumps({"ranges": len(trace) - 1, "truth_rows": len(truth) - 1, "anchors": sorted(anchors)}))


if __name__ == "__main__":
    main()
