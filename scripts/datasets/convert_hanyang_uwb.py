#!/usr/bin/env python3
"""Convert the Hanyang University outdoor UWB dataset (dynamic runs) to the formats of SPEC.md.

Source: https://github.com/cucudasluv/UWB-dataset (Apache License 2.0, file LICENSE; collected by the
ADIP laboratory, Hanyang University). DWM1001 two-way ranging, 4 anchors (ids 3, 5, 9, 12) whose
coordinates are carried in every range row; truth from RTK GNSS already expressed by the authors in
the anchors' local frame (`trajectory.csv`, x, y in metres, z a height change near 0).

usage: convert_hanyang_uwb.py SOURCE OUTDIR [--commit REV] [--tag-height 1.0]

SOURCE is a checkout / `git archive` export of the repository (a folder holding Dynamic_measurements/)
or a bare git directory (files then read with `git show REV:path`).

For each of the 8 dynamic runs (LOS/NLOS x Trajectory_A/B x 2 cases) OUTDIR/<los|nlos>-<a|b>-case<k>/
gets site.json (the run's 4 anchors; tagHeightM from --tag-height: the tag height is not given by the
source), trace.csv (t,anchor,range_m: every row of A3/A5/A9/A12.csv, t from field.stamp, range
`distanceFromTag` as logged) and truth.csv (t,x,y: every trajectory.csv row with |z| < 0.5, the
filter the authors' own evaluation applies). t is seconds since the run's first sample (range or
truth); both logs carry ROS time stamps (ns) of the same computer. Standard library only.
"""
import json
import os
import sys

import provenance
import snapshot

RUNS = [("LOS", "A", 1), ("LOS", "A", 2), ("LOS", "B", 3), ("LOS", "B", 4),
        ("NLOS", "A", 1), ("NLOS", "A", 2), ("NLOS", "B", 3), ("NLOS", "B", 4)]
ANCHOR_FILES = ["A3", "A5", "A9", "A12"]


def convert(src, outdir, los, traj, case, tag_height):
    base = "Dynamic_measurements/%s/Trajectory_%s/Case_%d/" % (los, traj, case)
    ranges = []
    anchors = {}
    for name in ANCHOR_FILES:
        lines = src.read(base + name + ".csv").decode("utf-8").splitlines()
        for line in lines[1:]:
            p = line.split(",")
            if len(p) < 7:
                continue
            stamp_ns, aid = int(p[1]), int(p[2])
            pos = (float(p[3]), float(p[4]), float(p[5]))
            if aid in anchors and anchors[aid] != pos:
                raise SystemExit("%s%s: anchor %d moves %s -> %s" % (base, name, aid, anchors[aid], pos))
            anchors[aid] = pos
            ranges.append((stamp_ns, aid, p[6]))
    ranges.sort(key=lambda r: (r[0], r[1]))
    truth = []
    dropped_z = 0
    for line in src.read(base + "trajectory.csv").decode("utf-8").splitlines()[1:]:
        p = line.split(",")
        if len(p) < 4:
            continue
        t_ns = int(round(float(p[0])))
        if abs(float(p[3])) >= 0.5:
            dropped_z += 1
            continue
        truth.append((t_ns, float(p[1]), float(p[2])))
    truth.sort()
    t0 = min(ranges[0][0], truth[0][0])
    name = "%s-%s-case%d" % (los.lower(), traj.lower(), case)
    d = os.path.join(outdir, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "trace.csv"), "w") as f:
        f.write("t,anchor,range_m\n")
        for t, aid, r in ranges:
            f.write("%.4f,%d,%.4f\n" % ((t - t0) / 1e9, aid, float(r)))
    with open(os.path.join(d, "truth.csv"), "w") as f:
        f.write("t,x,y\n")
        for t, x, y in truth:
            f.write("%.4f,%.4f,%.4f\n" % ((t - t0) / 1e9, x, y))
    xs = [a[0] for a in anchors.values()] + [t[1] for t in truth]
    ys = [a[1] for a in anchors.values()] + [t[2] for t in truth]
    floor = {"id": "F1", "name": "Hanyang outdoor %s" % name,
             "originX": round(min(xs) - 1, 3), "originY": round(min(ys) - 1, 3),
             "widthM": round(max(xs) - min(xs) + 2, 3), "heightM": round(max(ys) - min(ys) + 2, 3),
             "tagHeightM": tag_height, "sessionId": 1,
             "locators": [{"address": k, "x": v[0], "y": v[1], "z": v[2]} for k, v in sorted(anchors.items())],
             "zones": []}
    with open(os.path.join(d, "site.json"), "w") as f:
        f.write(json.dumps({"building": {"id": "hanyang-" + name, "name": "hanyang-" + name, "floorCount": 1},
                            "floors": [floor]}, indent=1) + "\n")
    return name, {"ranges": len(ranges), "truth_rows": len(truth), "truth_dropped_abs_z": dropped_z,
                  "t_last": round((max(ranges[-1][0], truth[-1][0]) - t0) / 1e9, 3),
                  "anchors": {str(k): v for k, v in sorted(anchors.items())}}


def main():
    args = snapshot.arguments(__doc__, lambda ap: ap.add_argument("--tag-height", type=float, default=1.0))
    src = snapshot.Snapshot(args.source, args.commit, "Dynamic_measurements")
    report = {}
    for los, traj, case in RUNS:
        name, info = convert(src, args.outdir, los, traj, case, args.tag_height)
        report[name] = info
    with open(os.path.join(args.outdir, "conversion.json"), "w") as f:
        f.write(json.dumps(report, indent=1) + "\n")
    provenance.write(
        args.outdir, title="Hanyang outdoor UWB: 8 dynamic runs, LOS/NLOS, 4 clustered anchors, RTK GNSS",
        source_url="https://github.com/cucudasluv/UWB-dataset (ADIP laboratory, Hanyang University)",
        commit=src.commit_hash(),
        licence="Apache License 2.0 (these files are a modified form of the source files: the converter's description below says how)",
        licence_text=src.read("LICENSE").decode("utf-8"), converter="convert_hanyang_uwb.py", argv=sys.argv[1:], description=__doc__,
        notes=["**Known**: the truth is stamped about 0.2 s late (`--truth-shift -0.2` fits best); the tag height is "
               "not given (tagHeightM %.2f is assumed); the anchors sit within 2.6 m x 1.7 m and the tag goes up to "
               "50 m away (docs/datasets.md)." % args.tag_height])
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
