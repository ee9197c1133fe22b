#!/usr/bin/env python3
"""Convert the CUHK-SZ planar UWB dataset to the formats of SPEC.md (site JSON, trace CSV, truth CSV).

Source: https://github.com/LIAS-CUHKSZ/Efficient-Pose-Estimation-via-UWB-measurements (MIT licence,
Copyright (c) 2023 Haodong JIANG). Read docs/datasets.md and the README written beside the output.

usage: convert_cuhksz.py SOURCE OUTDIR [--commit REV] [--fixture DIR] [--antenna-offsets nominal|fitted]
       convert_cuhksz.py OUTDIR OUTDIR --fixture DIR --fixture-only

SOURCE is either a checkout / `git archive` export of that repository (a folder holding
`Planar_Dataset/`), or a bare git directory (e.g. the fetched snapshot `/work/.mirror/.../repo`), in
which case files are read with `git show REV:path` (REV defaults to HEAD).

Written under OUTDIR (all metres and seconds, times re-based to the run's first sample), each folder
with its own site.json (the 2022-08-14/15 room, 8 anchors, tagHeightM 0.964):

  fast/tag{0,1,2}/trace.csv       t,anchor,range_m     one tag's ranges, as recorded
  fast/tag{0,1,2}/truth.csv       t,x,y,z              that tag's antenna position from the motion capture
  fast/all/trace.csv, truth.csv   t,tag,anchor,range_m / t,tag,x,y,z   the three tags together (tag0..tag2)
  mid/...                         the same for the medium-speed run
  slow-cleaned/...                the slow run, from the authors' outlier-rejected and interpolated
                                  spreadsheet (the raw slow CSV is not in the repository): NOT raw data
  static-8-14/                    the 2022-08-14 static session, all three tags (tag 0 is also in the
                                  shared conversion): site.json, trace.csv (t,tag,anchor,range_m,
                                  tag = p<k>_deg<d>_tag<j>), truth.csv, points.csv
  static-8-20/                    the 2022-08-20 static session (another room), the same layout
  conversion.json                 counts

--fixture DIR also writes the small excerpt kept in the Locus repository (Fixtures/real/
cuhksz-planar-uwb-fast-tags12: fast run, tags 1 and 2, t 20-50 s, 25 Hz); --fixture-only writes just
that, from an existing OUTDIR.

The tag position follows the planar convention of the source authors (see the output README): the
heading is the angle of the rotated body x-axis in the ground plane, the tag's (x, y) offset is
rotated by it and added to the centroid, z is the centroid's z. The offsets are the source READMEs'
(--antenna-offsets nominal, the default and the shared conversion) or fitted to the static session of
the same room (--antenna-offsets fitted; antenna_offsets.py, docs/datasets.md "the antennas are not where the truth
puts them").

Python 3 + numpy only (the .xlsx reader uses zipfile and xml.etree from the standard library).
"""
import datetime
import io
import json
import math
import os
import re
import sys
import zipfile
import xml.etree.ElementTree as ET

import numpy as np

import provenance
import snapshot

ANCHORS_0814 = [  # Planar_Dataset/Dynamic/README.md (same table in Static/README.md, session 2022/8/14)
    (-3.4203, 3.0053, 1.0442), (0.0016, 3.0110, 1.0446), (3.6056, 2.9795, 1.0463), (3.6011, -0.0008, 1.0422),
    (3.5674, -3.0087, 1.0443), (-0.0072, -2.9652, 1.0444), (-3.4673, -2.9587, 1.0445), (-3.4858, -0.0098, 1.0457),
]
TAGS_0814 = [(-0.0689, -0.1423, 0.0011), (-0.0750, 0.1402, 0.0016), (0.2034, 0.1451, -0.0008)]

ANCHORS_0820 = [  # Planar_Dataset/Static/README.md, session 2022/8/20
    (0.9998, -2.7280, 1.3172), (-0.0878, -3.0177, 1.3074), (-1.8220, -2.0699, 1.3006), (-1.8172, 0.3327, 1.3017),
    (-1.6477, 2.3528, 1.3042), (0.1867, 2.7016, 1.3053), (1.6764, 2.6419, 1.3152), (2.0707, -0.0953, 1.3030),
]
TAGS_0820 = [(-0.1130, -0.2432, 0.0033), (-0.1316, 0.2363, 0.0020), (0.3492, 0.2542, 0.0000)]
POSES_0820 = {  # (yaw deg, centroid x, centroid y) per pose and nominal heading
    1: [(0.709, -0.0484, -1.2212), (61.488, 0.0256, -1.3399), (119.735, 0.1296, -1.2323),
        (180.135, 0.1648, -1.1303), (240.705, 0.0758, -1.0682), (299.781, -0.0120, -1.1481)],
    2: [(0.343, -0.1892, 0.8942), (60.609, -0.1193, 0.8516), (119.542, -0.0445, 0.8971),
        (180.491, -0.1122, 1.0272), (239.910, -0.2576, 1.0236), (300.254, -0.3659, 0.9337)],
}
POSES_0814 = {  # Planar_Dataset/Static/README.md, session 2022/8/14
    1: [(-0.019, -1.9298, -1.2368), (59.115, -1.8491, -1.2267), (119.623, -1.7694, -1.2333),
        (181.993, -1.7472, -1.2375), (239.020, -1.7584, -1.2758), (300.027, -1.8015, -1.2417)],
    2: [(0.0230, 1.7393, -1.2132), (61.147, 1.7994, -1.2602), (117.430, 1.8223, -1.2492),
        (181.798, 1.8838, -1.1936), (239.441, 1.8009, -1.1736), (301.540, 1.8111, -1.1725)],
    3: [(1.375, 1.7362, 1.2086), (63.249, 1.7884, 1.1501), (121.417, 1.7556, 1.2200),
        (180.125, 1.8451, 1.2942), (240.619, 1.8427, 1.2911), (299.883, 1.7977, 1.2184)],
    4: [(0.322, -1.8708, 1.1814), (59.085, -1.8072, 1.1900), (120.170, -1.8045, 1.1619),
        (180.987, -1.7564, 1.1908), (240.928, -1.7714, 1.1924), (300.233, -1.8324, 1.1826)],
    5: [(0.233, -0.0475, -0.0122), (59.144, -0.0269, 0.0033), (119.408, 0.0089, 0.0259),
        (180.886, 0.0625, 0.0558), (240.289, -0.0111, 0.0741), (299.428, -0.0134, 0.0119)],
}
SESSIONS = {  # folder, file stem, anchors, tag offsets, poses
    "8-14": ("8.14", "8_14", ANCHORS_0814, TAGS_0814, POSES_0814),
    "8-20": ("8.20", "8_20", ANCHORS_0820, TAGS_0820, POSES_0820),
}
HEADINGS = [0, 60, 120, 180, 240, 300]
TAG_HEIGHT = 0.964  # trolley centroid height in the dynamic runs (median of the motion-capture z)


def clock_seconds(stamp):
    """'2022-08-15 9:42:24.766' -> seconds since midnight (local time, no zone given by the source)."""
    d = datetime.datetime.strptime(stamp.strip(), "%Y-%m-%d %H:%M:%S.%f")
    return d.hour * 3600 + d.minute * 60 + d.second + d.microsecond / 1e6


def read_uwb_csv(data):
    """Rows of (clock seconds, [24 strings]) in the source column order a0-t0, a0-t1, a0-t2, a1-t0, ..."""
    rows = []
    for line in data.decode("utf-8").splitlines():
        if not line.strip():
            continue
        parts = line.split(",")
        cells = []
        for p in parts[1:25]:
            p = p.strip()
            v = float(p) if p else float("nan")
            cells.append("%.2f" % v if math.isfinite(v) else "")  # the source logs centimetres
        rows.append((clock_seconds(parts[0]), cells))
    return rows


def read_mocap_csv(data):
    """Array (n, 8): clock seconds, x, y, z, qw, qx, qy, qz. Rows with a repeated timestamp keep the first."""
    out = []
    last = None
    for line in data.decode("utf-8").splitlines()[1:]:
        parts = line.split(",")
        if len(parts) < 8 or not parts[0].strip():
            continue
        t = clock_seconds(parts[0])
        if last is not None and abs(t - last) < 5e-4:
            continue
        vals = [float(v) for v in parts[1:8]]
        if not all(math.isfinite(v) for v in vals):
            continue
        out.append([t] + vals)
        last = t
    return np.array(out)


_NS = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"


def read_xlsx_numbers(data):
    """First sheet of an .xlsx as a list of rows (dict column index -> float)."""
    z = zipfile.ZipFile(io.BytesIO(data))
    rows = []
    for _, el in ET.iterparse(z.open("xl/worksheets/sheet1.xml")):
        if el.tag == _NS + "row":
            r = {}
            for c in el.iter(_NS + "c"):
                v = c.find(_NS + "v")
                if v is None or c.get("t") not in (None, "n"):
                    continue
                letters = re.match(r"[A-Z]+", c.get("r")).group(0)
                col = 0
                for ch in letters:
                    col = col * 26 + ord(ch) - 64
                r[col - 1] = float(v.text)
            rows.append(r)
            el.clear()
    return rows


def read_uwb_xlsx(data):
    """The authors' processed spreadsheets (Dynamic_Experiment/3_Alignment): MATLAB datenum in column A,
    then 24 ranges in tag-major order t0-a0..t0-a7, t1-a0.. . Returned like read_uwb_csv (anchor-major)."""
    rows = []
    for r in read_xlsx_numbers(data):
        t = (r[0] % 1.0) * 86400.0
        t = round(t * 1000.0) / 1000.0  # the source logs whole milliseconds; datenum carries ~1e-5 s of noise
        cells = []
        for a in range(8):
            for tag in range(3):
                v = r.get(1 + tag * 8 + a)
                if v is None or not math.isfinite(v):
                    cells.append("")
                elif abs(v * 100.0 - round(v * 100.0)) < 1e-6:
                    cells.append("%.2f" % v)  # as logged (centimetres)
                else:
                    cells.append("%.4f" % v)  # a value the authors interpolated
        rows.append((t, cells))
    return rows


def heading(q):
    """Angle in the ground plane of the body x-axis rotated by quaternion (w, x, y, z)."""
    w, x, y, z = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    return np.arctan2(2.0 * (x * y + w * z), 1.0 - 2.0 * (y * y + z * z))


def tag_positions(cx, cy, cz, yaw, offset):
    ox, oy = offset[0], offset[1]
    c, s = np.cos(yaw), np.sin(yaw)
    return cx + c * ox - s * oy, cy + s * ox + c * oy, cz


def site_json(building_id, anchors, tag_height):
    xs = [a[0] for a in anchors]
    ys = [a[1] for a in anchors]
    floor = {
        "id": "F1", "name": "Test area",
        "originX": round(min(xs) - 0.5, 4), "originY": round(min(ys) - 0.5, 4),
        "widthM": round(max(xs) - min(xs) + 1.0, 3), "heightM": round(max(ys) - min(ys) + 1.0, 3),
        "tagHeightM": tag_height, "sessionId": 1,
        "locators": [{"address": i, "x": a[0], "y": a[1], "z": a[2]} for i, a in enumerate(anchors)],
        "zones": [],
    }
    return json.dumps({"building": {"id": building_id, "name": building_id, "floorCount": 1}, "floors": [floor]},
                      indent=1)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="\n") as f:
        f.write(text)


def convert_run(src, out, name, uwb_rows, mocap, site_id, offsets=TAGS_0814):
    """One dynamic run: per-tag folders and an all-tags folder, each tag's truth at `offsets`
    (body frame, metres). Returns a dict of counts."""
    t0 = min(uwb_rows[0][0], mocap[0, 0])
    yaw = heading(mocap[:, 4:8])
    stats = {"t0_clock": t0}
    all_trace = ["t,tag,anchor,range_m"]
    all_truth = ["t,tag,x,y,z"]
    per_tag_truth = {}
    for tag in range(3):
        x, y, z = tag_positions(mocap[:, 1], mocap[:, 2], mocap[:, 3], yaw, offsets[tag])
        lines = ["t,x,y,z"]
        for i in range(len(mocap)):
            lines.append("%.3f,%.4f,%.4f,%.4f" % (mocap[i, 0] - t0, x[i], y[i], z[i]))
        per_tag_truth[tag] = lines
    for tag in range(3):
        trace = ["t,anchor,range_m"]
        dropped = 0
        for t, cells in uwb_rows:
            for a in range(8):
                v = cells[a * 3 + tag]
                if v == "" or v.lower() == "nan":
                    dropped += 1
                    continue
                trace.append("%.3f,%d,%s" % (t - t0, a, v))
        write(os.path.join(out, name, "tag%d" % tag, "trace.csv"), "\n".join(trace) + "\n")
        write(os.path.join(out, name, "tag%d" % tag, "truth.csv"), "\n".join(per_tag_truth[tag]) + "\n")
        write(os.path.join(out, name, "tag%d" % tag, "site.json"), site_json(site_id, ANCHORS_0814, TAG_HEIGHT))
        stats["tag%d" % tag] = {"ranges": len(trace) - 1, "dropped_empty": dropped,
                                "t_first": float(trace[1].split(",")[0]), "t_last": float(trace[-1].split(",")[0])}
    for t, cells in uwb_rows:
        for tag in range(3):
            for a in range(8):
                v = cells[a * 3 + tag]
                if v == "" or v.lower() == "nan":
                    continue
                all_trace.append("%.3f,tag%d,%d,%s" % (t - t0, tag, a, v))
    for tag in range(3):
        for line in per_tag_truth[tag][1:]:
            tt, rest = line.split(",", 1)
            all_truth.append("%s,tag%d,%s" % (tt, tag, rest))
    write(os.path.join(out, name, "all", "trace.csv"), "\n".join(all_trace) + "\n")
    write(os.path.join(out, name, "all", "truth.csv"), "\n".join(all_truth) + "\n")
    write(os.path.join(out, name, "all", "site.json"), site_json(site_id, ANCHORS_0814, TAG_HEIGHT))
    stats["truth_rows"] = len(mocap)
    stats["truth_t_last"] = float(mocap[-1, 0] - t0)
    return stats


def convert_static(src, out, session, thin=10, offsets=None):
    """One static session, all three tags: every `thin`-th source row, t restarting at 0 per point;
    the truth at `offsets` (body frame, metres; default the session's nominal ones)."""
    folder, stem, anchors, tags, poses = SESSIONS[session]
    tags = offsets or tags
    base = "Planar_Dataset/Static/%s/UWB_static_exp_%s_pos%%d_deg_%%d.csv" % (folder, stem)
    trace = ["t,tag,anchor,range_m"]
    truth = ["t,tag,x,y,z"]
    points = ["point_id,tag_index,x,y,z,yaw_deg,source_file"]
    counts = {}
    for pose in sorted(poses):
        for k, deg in enumerate(HEADINGS):
            rel = base % (pose, deg)
            rows = read_uwb_csv(src.read(rel))
            yaw_deg, cx, cy = poses[pose][k]
            yaw = math.radians(yaw_deg)
            t0 = rows[0][0]
            for tag in range(3):
                pid = "p%d_deg%d_tag%d" % (pose, deg, tag)
                ox, oy = tags[tag][0], tags[tag][1]
                px = cx + math.cos(yaw) * ox - math.sin(yaw) * oy
                py = cy + math.sin(yaw) * ox + math.cos(yaw) * oy
                n = 0
                last = 0.0
                for i in range(0, len(rows), thin):
                    t, cells = rows[i]
                    for a in range(8):
                        v = cells[a * 3 + tag]
                        if v == "" or v.lower() == "nan":
                            continue
                        trace.append("%.3f,%s,%d,%s" % (t - t0, pid, a, v))
                        n += 1
                    last = t - t0
                truth.append("%.3f,%s,%.4f,%.4f,%.3f" % (0.0, pid, px, py, TAG_HEIGHT))
                truth.append("%.3f,%s,%.4f,%.4f,%.3f" % (last, pid, px, py, TAG_HEIGHT))
                points.append("%s,%d,%.4f,%.4f,%.3f,%s,%s" % (pid, tag, px, py, TAG_HEIGHT, yaw_deg, rel.rsplit("/", 1)[1]))
                counts[pid] = n
    d = os.path.join(out, "static-" + session)
    write(os.path.join(d, "trace.csv"), "\n".join(trace) + "\n")
    write(os.path.join(d, "truth.csv"), "\n".join(truth) + "\n")
    write(os.path.join(d, "points.csv"), "\n".join(points) + "\n")
    write(os.path.join(d, "site.json"), site_json("cuhksz-static-" + session, anchors, TAG_HEIGHT))
    return counts


def write_fixture(out, fixture, run="fast", tags=(1, 2), t_from=20.0, t_to=50.0, every=4, truth_every=5):
    """A small excerpt for Fixtures/real/: tags 1 and 2 of the fast run, t in [t_from, t_to), every
    `every`-th source row of ranges (25 Hz) and every `truth_every`-th motion-capture row (25 Hz).
    Times are kept as in the full conversion."""
    names = {"tag%d" % k for k in tags}
    trace = ["t,tag,anchor,range_m"]
    times = []
    with open(os.path.join(out, run, "all", "trace.csv")) as f:
        rows = [line.rstrip("\n").split(",") for line in f][1:]
    for r in rows:
        if not times or times[-1] != r[0]:
            times.append(r[0])
    keep = set(t for i, t in enumerate(t for t in times if t_from <= float(t) < t_to) if i % every == 0)
    for r in rows:
        if r[0] in keep and r[1] in names:
            trace.append(",".join(r))
    truth = ["t,tag,x,y,z"]
    with open(os.path.join(out, run, "all", "truth.csv")) as f:
        trows = [line.rstrip("\n").split(",") for line in f][1:]
    for name in sorted(names):
        sel = [r for r in trows if r[1] == name and t_from - 0.5 <= float(r[0]) < t_to + 0.5]
        truth += [",".join(r) for i, r in enumerate(sel) if i % truth_every == 0]
    write(os.path.join(fixture, "trace.csv"), "\n".join(trace) + "\n")
    write(os.path.join(fixture, "truth.csv"), "\n".join(truth) + "\n")
    write(os.path.join(fixture, "site.json"), site_json("cuhksz-%s" % run, ANCHORS_0814, TAG_HEIGHT) + "\n")
    return {"ranges": len(trace) - 1, "truth_rows": len(truth) - 1}


def main():
    def options(ap):
        ap.add_argument("--fixture", help="also write the small excerpt (Fixtures/real/...) to this folder")
        ap.add_argument("--fixture-only", action="store_true", help="only write the excerpt from an existing OUTDIR")
        ap.add_argument("--antenna-offsets", choices=["nominal", "fitted"], default="nominal",
                        help="each tag's antenna offset on the rigid body: as the source READMEs give it (nominal, "
                             "the shared conversion) or fitted to the static session of the same room "
                             "(antenna_offsets.py: 8-14 for the dynamic runs of 8-15 and for 8-14, 8-20 for 8-20)")
    args = snapshot.arguments(__doc__, options)
    if args.fixture_only:
        print(json.dumps(write_fixture(args.outdir, args.fixture)))
        return
    src = snapshot.Snapshot(args.source, args.commit, "Planar_Dataset")
    report = {}
    dynamic_offsets = TAGS_0814
    static_offsets = {}
    if args.antenna_offsets == "fitted":
        import antenna_offsets
        fits = {}
        for session in ("8-14", "8-20"):
            convert_static(src, args.outdir, session)  # the ranges to fit on (truth rewritten below)
            fit = antenna_offsets.fit_converted(args.outdir, session)
            fits[session] = fit
            z = [t[2] for t in SESSIONS[session][3]]
            static_offsets[session] = [(round(fit["tag%d" % k]["offset"][0], 4), round(fit["tag%d" % k]["offset"][1], 4), z[k])
                                       for k in range(3)]
        dynamic_offsets = static_offsets["8-14"]
        report["antenna_offsets"] = {"source": "fitted to each static session (antenna_offsets.py)",
                                     "sessions": {s: {"offsets": static_offsets[s], "fit": fits[s]} for s in fits}}
    else:
        report["antenna_offsets"] = {"source": "nominal (the source READMEs)", "8-14": TAGS_0814, "8-20": TAGS_0820}
    for name in ("fast", "mid"):
        uwb = read_uwb_csv(src.read("Planar_Dataset/Dynamic/UWB_dynamic_exp_%s.csv" % name))
        mocap = read_mocap_csv(src.read("Planar_Dataset/Dynamic/motion_capture_dynamic_exp_%s.csv" % name))
        report[name] = convert_run(src, args.outdir, name, uwb, mocap, "cuhksz-%s" % name, dynamic_offsets)
    raw_slow = "Planar_Dataset/Dynamic/UWB_dynamic_exp_slow.csv"
    if src.exists(raw_slow):
        uwb = read_uwb_csv(src.read(raw_slow))
        slow_name = "slow"
    else:
        uwb = read_uwb_xlsx(src.read("Dynamic_Experiment/3_Alignment/UWB_dynamic_exp_slow.xlsx"))
        slow_name = "slow-cleaned"
    mocap = read_mocap_csv(src.read("Planar_Dataset/Dynamic/motion_capture_dynamic_exp_slow.csv"))
    report[slow_name] = convert_run(src, args.outdir, slow_name, uwb, mocap, "cuhksz-slow", dynamic_offsets)
    for session in ("8-14", "8-20"):
        report["static-" + session] = convert_static(src, args.outdir, session, offsets=static_offsets.get(session))
    if args.fixture:
        report["fixture"] = write_fixture(args.outdir, args.fixture)
    write(os.path.join(args.outdir, "conversion.json"), json.dumps(report, indent=1) + "\n")
    provenance.write(
        args.outdir, title="CUHK-SZ planar UWB: trolley, 3 tags, 8 anchors, motion capture (antenna offsets %s)" % args.antenna_offsets,
        source_url="https://github.com/LIAS-CUHKSZ/Efficient-Pose-Estimation-via-UWB-measurements",
        commit=src.commit_hash(),
        licence="MIT, Copyright (c) 2023 Haodong JIANG", licence_text=src.read("LICENSE").decode("utf-8"),
        converter="convert_cuhksz.py", argv=sys.argv[1:], description=__doc__,
        notes=["**Known**: every range reads about 0.2 m long, per anchor differently; the tag antennas sit 2-4 cm from "
               "the nominal offsets (docs/datasets.md); the slow run is the authors' cleaned spreadsheet, not raw data."])
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
