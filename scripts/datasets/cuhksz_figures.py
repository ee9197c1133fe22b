#!/usr/bin/env python3
"""The CUHK-SZ figures of docs/datasets.md, against one conversion's truth.

usage: cuhksz_figures.py LOCUS CONVERTED [--runs fast,mid] [--tags 0,1,2] [--json]

CONVERTED is an OUTDIR of convert_cuhksz.py (--antenna-offsets nominal or fitted). For each run and
tag: `locus replay` of the raw site (--filter none, causal, --smooth), and of the site calibrated with
truth on that tag's points of the same room's static session (static-8-14; `locus calibrate --truth`,
without and with --slope; causal and --smooth). The calibration reads the static truth of the same
conversion, so both the fit and the score use one antenna offset. Prints horizontal rmse_m.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import replay_figures  # noqa: E402  (its `replay`: one `locus replay --json`)


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr))
    return p.stdout


def replay(locus, site, d, extra=()):
    return replay_figures.replay(locus, d, list(extra), [], site=site)["rmse_m"]


def static_tag(converted, tag, tmp):
    """That tag's rows of static-8-14 (trace and truth) as files of their own."""
    d = os.path.join(converted, "static-8-14")
    paths = []
    for name in ("trace.csv", "truth.csv"):
        dest = os.path.join(tmp, "static-tag%d-%s" % (tag, name))
        with open(os.path.join(d, name)) as f, open(dest, "w") as g:
            g.write(f.readline())
            suffix = "_tag%d," % tag
            g.writelines(line for line in f if suffix in line)
        paths.append(dest)
    return paths


def main():
    args = sys.argv[1:]
    as_json = "--json" in args
    args = [a for a in args if a != "--json"]
    runs, tags = ["fast", "mid"], [0, 1, 2]
    if "--runs" in args:
        i = args.index("--runs")
        runs = args[i + 1].split(",")
        del args[i:i + 2]
    if "--tags" in args:
        i = args.index("--tags")
        tags = [int(t) for t in args[i + 1].split(",")]
        del args[i:i + 2]
    locus, converted = args
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for tag in tags:
            trace, truth = static_tag(converted, tag, tmp)
            sites = {}
            for label, extra in (("calibrated", []), ("calibrated --slope", ["--slope"])):
                out = os.path.join(tmp, "cal-tag%d%s.json" % (tag, "-slope" if extra else ""))
                run([locus, "calibrate", "--site", os.path.join(converted, "static-8-14", "site.json"),
                     "--trace", trace, "--truth", truth, "--out", out, *extra])
                sites[label] = out
            for name in runs:
                d = os.path.join(converted, name, "tag%d" % tag)
                raw_site = os.path.join(d, "site.json")
                row = {"run": name, "tag": tag,
                       "raw site: raw": replay(locus, raw_site, d, ["--filter", "none"]),
                       "raw site: causal": replay(locus, raw_site, d),
                       "raw site: smoothed": replay(locus, raw_site, d, ["--smooth"])}
                for label, site in sites.items():
                    row[label + ": causal"] = replay(locus, site, d)
                    row[label + ": smoothed"] = replay(locus, site, d, ["--smooth"])
                rows.append(row)
                if not as_json:
                    if len(rows) == 1:
                        keys = [k for k in row if k not in ("run", "tag")]
                        print("| run | tag | " + " | ".join(keys) + " |")
                        print("|---|---|" + "---:|" * len(keys))
                    print("| %s | %d | " % (name, tag) + " | ".join("%.4f" % row[k] for k in keys) + " |")
                    sys.stdout.flush()
    if as_json:
        print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
