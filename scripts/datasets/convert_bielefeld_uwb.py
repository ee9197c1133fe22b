#!/usr/bin/env python3
"""Convert the Bielefeld University TREK1000 laboratory recordings (Cung Lian Sang, "positioning algorithms
for UWB in Matlab") to the formats of SPEC.md.

Source: https://github.com/cliansang/positioning-algorithms-for-uwb-matlab (MIT licence, Copyright (c) 2022
Cung Lian Sang): `exp_data/UWB_data_Ranges/output_range_uwb_<run>.txt` (Decawave TREK1000 two-way ranging,
one tag, 4 anchors, ~10 rounds/s: `HHMMSSmmm tag r0 r1 r2 r3`, local time of the logging PC, ranges in mm)
and `exp_data/Vicon_mat/<Run>.mat` (Vicon motion capture of the tag's rigid body, 200 Hz, unix time,
`posedata_uwb` = [frame, s, ns, x, y, z, qx, qy, qz, qw]), recorded 2018-11-29 in a 6 x 6 x 3.7 m laboratory.

usage: convert_bielefeld_uwb.py SOURCE OUTDIR [--commit REV]

SOURCE is a checkout / `git archive` export of the repository (a folder holding exp_data/) or a bare git
directory (files then read with `git show REV:path`).

**The truth is aligned to the anchors by a fit to the ranges.** The anchors' positions are given in 2-D only
(tape-measured, in the authors' script compare_EKF_UKF_Multilat_TS_Trilat_Vicon_demo_lab.m: (0, 0),
(5.77, 0), (5.55, 5.69), (0, 5.65) m), the Vicon frame is another one (the authors registered it to their own
UWB estimates), and the two logs' clocks differ by ~8 s. So this converter fits, by robust least squares on
the ranges of the five line-of-sight runs (walks m1l, m2r, m3s; static 4vnm, 4vnm2; a soft-L1 loss with a
0.3 m scale): one rotation and translation of the Vicon ground plane onto the anchors' frame, one anchor
height in the Vicon frame (the anchors stand level: the authors call the set-up coplanar), and one clock
offset per walk (a static run's truth does not depend on it: the walks' median is used). Seven parameters
against ~30,000 ranges: a common range bias is partly taken up by the anchor height and per-anchor biases
are left in the ranges, but the absolute figures against this truth are not independent of the ranges
(compare estimators with each other on it: raw, causal and smoothed see the same truth). The rigid body's
origin is not the antenna (its offset is not given).

Written under OUTDIR, each folder with site.json (the 4 anchors, addresses 0-3, at the fitted height;
tagHeightM the tag's mean Vicon height), trace.csv (t,anchor,range_m: every positive range; rows with a
zero range dropped and counted) and truth.csv (t,x,y,z: the Vicon rigid body in the anchors' frame, every
200 Hz sample), t in seconds since the run's first range (the truth on the range clock):

  walk-m1l, walk-m2r, walk-m3s        the tag carried in a loop, a ring and an S (44-89 s)
  static-4vnm, static-4vnm2           the tag still, antenna vertical, two places (~240 s each)
  static-4hnm, static-4hnm2           the same with the antenna horizontal (not in the fit)
  blocked-a<k>, blocked-a<k>-2        the tag still while a person 1 m away blocks anchor k (not in the fit)
  conversion.json                     the fitted alignment, counts, and each run's per-anchor range residual
                                      (median and robust spread, m) against the aligned truth

Python 3 with numpy and scipy (scipy.io.loadmat reads the MATLAB files, scipy.optimize the fit).
"""
import datetime
import io
import json
import os
import sys

import numpy as np
import scipy.io
from scipy.optimize import least_squares

import provenance
import snapshot

ANCHORS_2D = np.array([[0.0, 0.0], [5.77, 0.0], [5.55, 5.69], [0.0, 5.65]])
# (output folder, range file stem, Vicon file stem, used in the alignment fit, a walk)
RUNS = [("walk-m1l", "m1l", "m1L", True, True), ("walk-m2r", "m2r", "m2R", True, True),
        ("walk-m3s", "m3s", "m3S", True, True),
        ("static-4vnm", "4vnm", "4vnm", True, False), ("static-4vnm2", "4vnm2", "4Vnm2", True, False),
        ("static-4hnm", "4hnm", "4Hnm", False, False), ("static-4hnm2", "4hnm2", "4Hnm2", False, False),
        ("blocked-a0", "4vba0", "4vbA0", False, False), ("blocked-a1", "4vba1", "4vbA1", False, False),
        ("blocked-a2", "4vba2s", "4vbA2s", False, False), ("blocked-a3", "4vba3s", "4vbA3s", False, False),
        ("blocked-a0-2", "4vba02", "4VbA02", False, False), ("blocked-a1-2", "4vba12", "4VbA12", False, False),
        ("blocked-a2-2", "4vba22", "4VbA22", False, False), ("blocked-a3-2", "4vba32", "4VbA32", False, False)]
# The logging PC's clock: local time (CET, UTC+1) of 2018-11-29, the day of the Vicon stamps.
DAY_UTC = datetime.datetime(2018, 11, 29, tzinfo=datetime.timezone.utc).timestamp()
CET_SECONDS = 3600.0


def read_ranges(src, stem):
    """(t, r) with t the logging PC's clock as unix seconds (n,) and r the 4 ranges in metres (n, 4)."""
    rows = []
    for line in src.read("exp_data/UWB_data_Ranges/output_range_uwb_%s.txt" % stem).decode("utf-8").splitlines():
        p = line.split()
        if len(p) < 6:
            continue
        s = int(p[0])
        hh, mm, ss, ms = s // 10000000, (s // 100000) % 100, (s // 1000) % 100, s % 1000
        rows.append([DAY_UTC + hh * 3600 + mm * 60 + ss + ms / 1000.0 - CET_SECONDS] + [int(v) / 1000.0 for v in p[2:6]])
    a = np.array(rows)
    return a[:, 0], a[:, 1:5]


def read_vicon(src, stem):
    """(t, p): unix seconds (n,) and the rigid body's position in the Vicon frame, m (n, 3)."""
    v = scipy.io.loadmat(io.BytesIO(src.read("exp_data/Vicon_mat/%s.mat" % stem)))["posedata_uwb"]
    return v[:, 1] + v[:, 2] * 1e-9, v[:, 3:6]


def to_anchor_frame(p, theta, tx, ty):
    c, s = np.cos(theta), np.sin(theta)
    return np.stack([c * p[:, 0] - s * p[:, 1] + tx, s * p[:, 0] + c * p[:, 1] + ty, p[:, 2]], 1)


def predicted(params, ranges_t, vicon, offset):
    """The 4 distances (n, 4) from the aligned truth at each range time (PC clock − offset) to the anchors."""
    theta, tx, ty, za = params[:4]
    tv, pv = vicon
    t = ranges_t - offset
    p = np.stack([np.interp(t, tv, pv[:, k]) for k in range(3)], 1)
    q = to_anchor_frame(p, theta, tx, ty)
    return np.sqrt((q[:, 0:1] - ANCHORS_2D[None, :, 0]) ** 2 + (q[:, 1:2] - ANCHORS_2D[None, :, 1]) ** 2 + (q[:, 2:3] - za) ** 2)


def fit(data):
    """Least squares (soft L1, 0.3 m) of θ, tx, ty, anchor height and one clock offset per walk."""
    fitted = [r for r in RUNS if r[3]]
    walks = [r[0] for r in fitted if r[4]]

    def offset_of(params, name):
        return params[4 + walks.index(name)] if name in walks else float(np.median(params[4:4 + len(walks)]))

    def residuals(params):
        out = []
        for name, *_ in fitted:
            (rt, rr), vicon = data[name]
            e = predicted(params, rt, vicon, offset_of(params, name)) - rr
            out.append(np.where(rr > 0, e, 0.0).ravel())
        return np.concatenate(out)

    def cost(params):
        e = residuals(params)
        return float(np.sum(2 * 0.3 ** 2 * (np.sqrt(1 + (e / 0.3) ** 2) - 1)))  # the soft-L1 loss, summed

    best = None
    for theta0 in np.linspace(0, 2 * np.pi, 12, endpoint=False):
        for o0 in (6.0, 8.0):
            r = least_squares(residuals, np.array([theta0, 3.0, 3.0, 1.5] + [o0] * len(walks)), loss="soft_l1", f_scale=0.3)
            if best is None or r.cost < best.cost:
                best = r
    # Each walk's clock offset has local minima a motion period apart: scan it over 4-12 s (every 0.02 s,
    # the others held), then refit all parameters from there.
    params = best.x.copy()
    for k in range(len(walks)):
        grid = np.arange(4.0, 12.0, 0.02)
        costs = []
        for o in grid:
            params[4 + k] = o
            costs.append(cost(params))
        params[4 + k] = grid[int(np.argmin(costs))]
    refit = least_squares(residuals, params, loss="soft_l1", f_scale=0.3)
    return (refit.x if refit.cost < best.cost else best.x), offset_of


def main():
    args = snapshot.arguments(__doc__)
    src = snapshot.Snapshot(args.source, args.commit, "exp_data")
    data = {name: (read_ranges(src, rstem), read_vicon(src, vstem)) for name, rstem, vstem, _, _ in RUNS}
    params, offset_of = fit(data)
    theta, tx, ty, za = params[:4]
    tag_height = float(np.mean([np.mean(vicon[1][:, 2]) for _, vicon in data.values()]))
    report = {"alignment": {"rotation_deg": round(float(np.degrees(theta)) % 360, 4), "translation_m": [round(tx, 4), round(ty, 4)],
                            "anchor_height_m": round(za, 4), "fitted_on": [r[0] for r in RUNS if r[3]]}}
    for name, rstem, vstem, in_fit, walk in RUNS:
        (rt, rr), (tv, pv) = data[name]
        offset = offset_of(params, name)
        t0 = rt[0]
        d = os.path.join(args.outdir, name)
        os.makedirs(d, exist_ok=True)
        kept = dropped = 0
        with open(os.path.join(d, "trace.csv"), "w") as f:
            f.write("t,anchor,range_m\n")
            for t, r in zip(rt, rr):
                for k in range(4):
                    if r[k] > 0:
                        f.write("%.3f,%d,%.3f\n" % (t - t0, k, r[k]))
                        kept += 1
                    else:
                        dropped += 1
        q = to_anchor_frame(pv, theta, tx, ty)
        with open(os.path.join(d, "truth.csv"), "w") as f:
            f.write("t,x,y,z\n")
            for t, p in zip(tv + offset - t0, q):
                f.write("%.4f,%.4f,%.4f,%.4f\n" % (t, p[0], p[1], p[2]))
        xs = list(ANCHORS_2D[:, 0]) + list(q[:, 0])
        ys = list(ANCHORS_2D[:, 1]) + list(q[:, 1])
        floor = {"id": "F1", "name": "Bielefeld TREK1000 laboratory %s" % name,
                 "originX": round(min(xs) - 0.5, 3), "originY": round(min(ys) - 0.5, 3),
                 "widthM": round(max(xs) - min(xs) + 1.0, 3), "heightM": round(max(ys) - min(ys) + 1.0, 3),
                 "tagHeightM": round(tag_height, 3), "sessionId": 1,
                 "locators": [{"address": k, "x": float(ANCHORS_2D[k, 0]), "y": float(ANCHORS_2D[k, 1]), "z": round(za, 4)}
                              for k in range(4)],
                 "zones": []}
        with open(os.path.join(d, "site.json"), "w") as f:
            f.write(json.dumps({"building": {"id": "bielefeld-" + name, "name": "bielefeld-" + name, "floorCount": 1},
                                "floors": [floor]}, indent=1) + "\n")
        inside = (rt - offset > tv[0]) & (rt - offset < tv[-1])
        e = (rr - predicted(params, rt, (tv, pv), offset))[inside]
        valid = rr[inside] > 0
        med = [float(np.median(e[valid[:, k], k])) for k in range(4)]
        spread = [float((np.percentile(e[valid[:, k], k], 75) - np.percentile(e[valid[:, k], k], 25)) / 1.349) for k in range(4)]
        report[name] = {"source": ["exp_data/UWB_data_Ranges/output_range_uwb_%s.txt" % rstem, "exp_data/Vicon_mat/%s.mat" % vstem],
                        "in_fit": in_fit, "clock_offset_s": round(float(offset), 3), "ranges": kept, "ranges_dropped_zero": dropped,
                        "duration_s": round(float(rt[-1] - rt[0]), 3), "truth_rows": len(tv),
                        "residual_median_m": [round(v, 4) for v in med], "residual_spread_m": [round(v, 4) for v in spread]}
    with open(os.path.join(args.outdir, "conversion.json"), "w") as f:
        f.write(json.dumps(report, indent=1) + "\n")
    provenance.write(
        args.outdir, title="Bielefeld TREK1000 laboratory: one tag, 4 anchors, Vicon (walks, static, blocked anchors)",
        source_url="https://github.com/cliansang/positioning-algorithms-for-uwb-matlab (Cung Lian Sang, Bielefeld University)",
        commit=src.commit_hash(),
        licence="MIT, Copyright (c) 2022 Cung Lian Sang", licence_text=src.read("LICENSE").decode("utf-8"),
        converter="convert_bielefeld_uwb.py", argv=sys.argv[1:], description=__doc__,
        notes=["**Known**: the truth is aligned to the anchors by a fit to the ranges (above); the anchors are given "
               "in 2-D only; the rigid body's origin is not the antenna."])
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
