#!/usr/bin/env python3
"""Truth-free calibration on converted recordings, judged against their truth: for each DIR, `locus calibrate`
without truth (its own held-out validation on), then the causal `locus replay --truth` on the site as surveyed
and on the calibrated one when one was written.

usage: calibrate_figures.py LOCUS DIR [DIR ...]

Each DIR holds site.json, trace.csv and truth.csv (SPEC.md). Prints one Markdown table row per DIR:
| DIR | calibrate's exit status | surveyed rmse_m | calibrated rmse_m ("-": nothing written) | calibrated <= surveyed | the first warning |
(issue #42: "truth-free calibration never worse than the surveyed site on any real recording").
"""
import os
import subprocess
import sys
import tempfile

from replay_figures import replay


def rmse(locus, site, d):
    """The causal rmse_m of DIR d's trace against its truth, replayed on `site`."""
    return replay(locus, d, [], [], site=site)["rmse_m"]


def main():
    locus, dirs = sys.argv[1], sys.argv[2:]
    print("| recording | exit | surveyed | calibrated | calibrated ≤ surveyed | first warning |")
    print("| --- | --- | --- | --- | --- | --- |")
    for d in dirs:
        with tempfile.TemporaryDirectory() as work:
            out = os.path.join(work, "calibrated.json")
            run = subprocess.run([locus, "calibrate", "--site", os.path.join(d, "site.json"), "--trace",
                                  os.path.join(d, "trace.csv"), "--out", out], capture_output=True, text=True)
            warning = next((l.split(": warning: ", 1)[1] for l in run.stderr.splitlines() if ": warning: " in l), "")
            surveyed = rmse(locus, os.path.join(d, "site.json"), d)
            calibrated = rmse(locus, out, d) if os.path.exists(out) else None
        verdict = "(nothing written)" if calibrated is None else "yes" if calibrated <= surveyed else "**no**"
        print("| %s | %d | %.4f | %s | %s | %s |" % (d, run.returncode, surveyed, "-" if calibrated is None else "%.4f" % calibrated,
                                                   verdict, warning[:120].replace("|", "/")))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
