#!/usr/bin/env python3
"""Fit where each tag's UWB antenna sits on a motion-capture rigid body, from a static session.

A motion-capture system tracks a rigid body's centroid c and heading psi; a tag's "truth" is
c + R(psi) o with o the antenna's offset in the body frame, measured by hand. If o is a few
centimetres off (or the antenna's phase centre is not where its case is), every truth point of a
moving tag is off by R(psi) (o_true - o): an error that turns with the body, which no positioning
engine can remove (it does not know the heading) and which a truth time shift only partly mimics.

A static session with several headings at each place observes o: the same place seen at six
headings puts the antenna on a small circle of radius |o| around the centroid, and the ranges
tell where on the circle. Model, per tag, for the median range m_ij of point j to anchor i:

    m_ij = || (c_j + R(psi_j) o, h) - a_i || + b_i + e_ij

with unknowns o (2, metres, body frame) and one bias b_i per anchor (metres); h is the tag height.
Solved by Gauss-Newton with Huber weights (k = 1.345 x the residuals' MAD scale, IRLS); standard
errors from (J^T W J)^-1 s^2 at the solution. Python 3 + numpy only.

usage:
  antenna_offsets.py CONVERTED [--session 8-14|8-20] [--json]   fit every tag of a converted static
                                                                 session (convert_cuhksz.py OUTDIR)
  antenna_offsets.py --self-test                                 recover known offsets from a
                                                                 simulated session

CONVERTED is the OUTDIR of convert_cuhksz.py; the nominal offsets and the centroid poses come from
that script's tables (the source READMEs). convert_cuhksz.py --antenna-offsets fitted uses fit_tag.
"""
import argparse
import collections
import csv
import json
import math
import os
import sys

import numpy as np


def _rotate(yaw, o):
    c, s = np.cos(yaw), np.sin(yaw)
    return np.stack([c * o[0] - s * o[1], s * o[0] + c * o[1]], axis=-1)


def fit_tag(anchors, poses, medians, nominal, height, iterations=50):
    """Fit one tag's body-frame antenna offset and per-anchor biases.

    anchors  list of (x, y, z) per anchor index
    poses    list of (centroid x, centroid y, yaw radians), one per static point
    medians  dict (point index, anchor index) -> median range (metres)
    nominal  (x, y) offset to start from and to compare with (metres)
    height   the tag's z (metres)

    Returns a dict: offset, offset_sd, shift (offset - nominal), biases, rms_nominal (residual RMS
    with the nominal offset and its own best biases), rms_fitted, observations.
    """
    keys = sorted(medians)
    if len(keys) < len(anchors) + 3:
        raise ValueError("too few point-anchor medians to fit an offset: %d" % len(keys))
    j_idx = np.array([k[0] for k in keys])
    a_idx = np.array([k[1] for k in keys])
    m = np.array([medians[k] for k in keys])
    A = np.asarray(anchors, dtype=float)[a_idx]
    C = np.asarray(poses, dtype=float)[j_idx]
    yaw = C[:, 2]
    n_anchor = len(anchors)

    def solve(free_offset):
        theta = np.zeros(n_anchor + 2)
        theta[n_anchor:] = nominal
        scale = None
        for _ in range(iterations):
            o = theta[n_anchor:]
            p = C[:, :2] + _rotate(yaw, o)
            d3 = np.column_stack([p - A[:, :2], height - A[:, 2]])
            dist = np.linalg.norm(d3, axis=1)
            r = m - dist - theta[a_idx]
            J = np.zeros((len(m), n_anchor + 2))
            J[np.arange(len(m)), a_idx] = 1.0
            if free_offset:
                u = d3[:, :2] / dist[:, None]  # d dist / d p
                c, s = np.cos(yaw), np.sin(yaw)
                J[:, n_anchor] = u[:, 0] * c + u[:, 1] * s  # d dist / d o_x
                J[:, n_anchor + 1] = -u[:, 0] * s + u[:, 1] * c  # d dist / d o_y
            cols = slice(None) if free_offset else slice(0, n_anchor)
            mad = np.median(np.abs(r - np.median(r))) * 1.4826
            scale = max(mad, 1e-4)
            k = 1.345 * scale
            w = np.where(np.abs(r) <= k, 1.0, k / np.maximum(np.abs(r), 1e-12))
            Jc = J[:, cols]
            step = np.linalg.solve(Jc.T @ (w[:, None] * Jc), Jc.T @ (w * r))
            theta[cols] += step
            if np.max(np.abs(step)) < 1e-7:
                break
        o = theta[n_anchor:]
        p = C[:, :2] + _rotate(yaw, o)
        dist = np.linalg.norm(np.column_stack([p - A[:, :2], height - A[:, 2]]), axis=1)
        r = m - dist - theta[a_idx]
        Jc = J[:, cols]
        cov = np.linalg.inv(Jc.T @ (w[:, None] * Jc)) * float(np.sum(w * r * r) / max(len(r) - Jc.shape[1], 1))
        sd = np.sqrt(np.diag(cov))[n_anchor:] if free_offset else np.zeros(2)
        return theta, sd, float(np.sqrt(np.mean(r * r)))

    theta0, _, rms0 = solve(False)
    theta, sd, rms = solve(True)
    o = theta[n_anchor:]
    return {
        "offset": [float(o[0]), float(o[1])],
        "offset_sd": [float(sd[0]), float(sd[1])],
        "nominal": [float(nominal[0]), float(nominal[1])],
        "shift": [float(o[0] - nominal[0]), float(o[1] - nominal[1])],
        "biases": [float(b) for b in theta[:n_anchor]],
        "rms_nominal": rms0,
        "rms_fitted": rms,
        "observations": len(m),
    }


def medians_of(rows):
    """dict key -> median of the values collected under that key (rows: iterable of (key, value))."""
    bag = collections.defaultdict(list)
    for key, value in rows:
        bag[key].append(value)
    return {k: float(np.median(v)) for k, v in bag.items()}


def fit_converted(outdir, session):
    """Fit every tag of a static session converted by convert_cuhksz.py (its OUTDIR/static-SESSION)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import convert_cuhksz as C
    _, _, anchors, tags, poses = C.SESSIONS[session]
    folder = os.path.join(outdir, "static-" + session)
    point_index = {}
    pose_list = []
    for pose in sorted(poses):
        for k, deg in enumerate(C.HEADINGS):
            yaw_deg, cx, cy = poses[pose][k]
            point_index["p%d_deg%d" % (pose, deg)] = len(pose_list)
            pose_list.append((cx, cy, math.radians(yaw_deg)))
    rows = collections.defaultdict(list)
    with open(os.path.join(folder, "trace.csv")) as f:
        for r in csv.DictReader(f):
            place, tag = r["tag"].rsplit("_tag", 1)
            rows[int(tag)].append(((point_index[place], int(r["anchor"])), float(r["range_m"])))
    return {"tag%d" % t: fit_tag(anchors, pose_list, medians_of(rows[t]), tags[t][:2], C.TAG_HEIGHT)
            for t in sorted(rows)}


def self_test():
    """A simulated static session (8 anchors, 5 places x 6 headings, biases, noise, 3 % outliers):
    the fit must find the true offsets within 1 cm where the nominal ones are 3-5 cm off."""
    rng = np.random.default_rng(7)
    anchors = [(-3.4, 3.0, 1.04), (0.0, 3.0, 1.04), (3.6, 3.0, 1.05), (3.6, 0.0, 1.04),
               (3.6, -3.0, 1.04), (0.0, -3.0, 1.04), (-3.5, -3.0, 1.04), (-3.5, 0.0, 1.05)]
    places = [(-1.9, -1.2), (1.8, -1.2), (1.8, 1.2), (-1.8, 1.2), (0.0, 0.0)]
    poses = [(x + rng.normal(0, 0.05), y + rng.normal(0, 0.05), math.radians(h + rng.normal(0, 2)))
             for x, y in places for h in range(0, 360, 60)]
    biases = rng.uniform(0.1, 0.3, len(anchors))
    worst = 0.0
    for true, nominal in [((-0.066, -0.184), (-0.069, -0.142)), ((-0.115, 0.140), (-0.075, 0.140)),
                          ((0.30, 0.10), (0.27, 0.14))]:
        medians = {}
        for j, (cx, cy, yaw) in enumerate(poses):
            p = np.array([cx, cy]) + _rotate(yaw, np.array(true))
            for i, a in enumerate(anchors):
                d = math.dist((p[0], p[1], 0.964), a)
                samples = d + biases[i] + rng.normal(0, 0.05, 200)
                if rng.random() < 0.03:
                    samples += 0.8  # a point-anchor pair in NLOS
                medians[(j, i)] = float(np.median(samples))
        fit = fit_tag(anchors, poses, medians, nominal, 0.964)
        err = math.dist(fit["offset"], true)
        worst = max(worst, err)
        print("true %s nominal %s fitted %s (sd %s) error %.4f m" % (
            true, nominal, tuple(round(v, 4) for v in fit["offset"]), tuple(round(v, 4) for v in fit["offset_sd"]), err))
        if err > 0.01 or fit["rms_fitted"] >= fit["rms_nominal"]:
            print("self-test FAILED")
            return 1
    print("self-test ok (worst offset error %.4f m)" % worst)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("converted", nargs="?")
    ap.add_argument("--session", default="8-14", choices=["8-14", "8-20"])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    if not args.converted:
        ap.error("CONVERTED is required (or --self-test)")
    fits = fit_converted(args.converted, args.session)
    if args.json:
        print(json.dumps(fits, indent=1))
        return 0
    print("session %s: antenna offset in the body frame (m), fitted with per-anchor biases" % args.session)
    print("tag   nominal x,y        fitted x,y         sd x,y          shift   residual RMS nominal -> fitted")
    for name, f in fits.items():
        print("%-5s %+.4f %+.4f   %+.4f %+.4f   %.4f %.4f   %.4f   %.4f -> %.4f" % (
            name, *f["nominal"], *f["offset"], *f["offset_sd"], math.hypot(*f["shift"]), f["rms_nominal"], f["rms_fitted"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
