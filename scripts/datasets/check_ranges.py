#!/usr/bin/env python3
"""Residual check of a converted recording: measured range minus the distance from the truth position
(interpolated linearly in time) to each anchor.

usage: check_ranges.py SITE TRACE TRUTH [--tag ID] [--shifts -0.2,0.2,0.01] [--json]

Prints, per anchor, the count, the median residual (the range bias) and the robust spread (1.4826 x
MAD) of the residual once that median is taken out; then the spread pooled over anchors for each
time shift (a range at t compared with the truth at t + shift, the convention of `locus replay
--truth-shift`), and the shift that gives the smallest. A wrong antenna
offset or heading convention shows as a larger pooled spread; a clock offset as a best shift away
from 0. Python 3 + numpy only. Reads SPEC.md files (one floor; the anchors of the first floor).
"""
import argparse
import csv
import json
import sys

import numpy as np


def read_site(path):
    with open(path) as f:
        site = json.load(f)
    floor = site["floors"][0]
    anchors = {}
    for loc in floor["locators"]:
        a = loc["address"]
        if isinstance(a, str):
            a = int(a, 16) if a.lower().startswith("0x") else int(a)
        anchors[a] = (float(loc["x"]), float(loc["y"]), float(loc.get("z", 0.0)))
    return anchors, float(floor.get("tagHeightM", 0.0))


def read_csv(path, tag):
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(line for line in f if line.strip() and not line.startswith("#"))]
    if tag is not None:
        rows = [r for r in rows if r.get("tag") == tag]
    return rows


def residuals(anchors, trace, truth, shift, tag_height):
    tt = np.array([float(r["t"]) for r in truth]) - shift  # range at t <-> truth at t + shift
    tx = np.array([float(r["x"]) for r in truth])
    ty = np.array([float(r["y"]) for r in truth])
    tz = np.array([float(r["z"]) if r.get("z") not in (None, "") else tag_height for r in truth])
    t = np.array([float(r["t"]) for r in trace])
    a = np.array([int(r["anchor"]) for r in trace])
    rng = np.array([float(r["range_m"]) for r in trace])
    ok = (t >= tt[0]) & (t <= tt[-1])
    t, a, rng = t[ok], a[ok], rng[ok]
    x, y, z = np.interp(t, tt, tx), np.interp(t, tt, ty), np.interp(t, tt, tz)
    ax = np.array([anchors[k][0] for k in a])
    ay = np.array([anchors[k][1] for k in a])
    az = np.array([anchors[k][2] for k in a])
    d = np.sqrt((x - ax) ** 2 + (y - ay) ** 2 + (z - az) ** 2)
    return a, rng - d


def robust_sd(v):
    return float(1.4826 * np.median(np.abs(v - np.median(v)))) if len(v) else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("site")
    ap.add_argument("trace")
    ap.add_argument("truth")
    ap.add_argument("--tag")
    ap.add_argument("--shifts", default="-0.2,0.2,0.01")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    anchors, tag_height = read_site(args.site)
    trace = read_csv(args.trace, args.tag)
    truth = read_csv(args.truth, args.tag)
    a, r = residuals(anchors, trace, truth, 0.0, tag_height)
    per_anchor = {}
    centred = []
    for k in sorted(set(a.tolist())):
        v = r[a == k]
        m = float(np.median(v))
        per_anchor[k] = {"n": int(len(v)), "median_m": round(m, 4), "robust_sd_m": round(robust_sd(v - m), 4)}
        centred.append(v - m)
    pooled = robust_sd(np.concatenate(centred)) if centred else float("nan")
    lo, hi, step = (float(x) for x in args.shifts.split(","))
    best = None
    for s in np.arange(lo, hi + step / 2, step):
        a2, r2 = residuals(anchors, trace, truth, float(s), tag_height)
        c = np.concatenate([r2[a2 == k] - np.median(r2[a2 == k]) for k in set(a2.tolist())])
        sd = robust_sd(c)
        if best is None or sd < best[1]:
            best = (round(float(s), 3), sd)
    out = {"ranges": int(len(r)), "per_anchor": per_anchor, "pooled_robust_sd_m": round(pooled, 4),
           "best_shift_s": best[0], "pooled_robust_sd_at_best_m": round(best[1], 4)}
    if args.json:
        print(json.dumps(out))
        return
    print("anchor      n  median_m  robust_sd_m")
    for k, v in per_anchor.items():
        print("%6s %6d  %8.3f  %10.3f" % (k, v["n"], v["median_m"], v["robust_sd_m"]))
    print("pooled robust sd (per-anchor median removed): %.4f m" % pooled)
    print("best truth shift: %+.3f s (pooled robust sd %.4f m)" % best)


if __name__ == "__main__":
    sys.exit(main())
