#!/usr/bin/env python3
"""Replay converted recordings with `locus replay` in its three modes and print rmse_m for each.

usage: replay_figures.py LOCUS DIR [DIR ...] [-- EXTRA-REPLAY-OPTIONS ...]

Each DIR holds site.json, trace.csv and truth.csv (SPEC.md). Modes: --filter none (raw solver;
"no fix" when it gives none, e.g. a round robin's one-range epochs), the default causal filter, and
--smooth. Prints one Markdown table row per DIR:
| DIR | fixes | raw | causal | smoothed | causal <= raw | smoothed <= causal |
"""
import json
import os
import subprocess
import sys


def replay(locus, d, extra, common, site=None):
    """`locus replay --json` of DIR's trace against its truth (on DIR's site.json, or `site`), parsed."""
    cmd = [locus, "replay", "--site", site or os.path.join(d, "site.json"), "--trace", os.path.join(d, "trace.csv"),
           "--truth", os.path.join(d, "truth.csv"), "--json"] + common + extra
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    locus, rest = sys.argv[1], sys.argv[2:]
    common = []
    if "--" in rest:
        common = rest[rest.index("--") + 1:]
        rest = rest[:rest.index("--")]
    dirs = rest
    print("| recording | fixes | raw rmse_m | causal rmse_m | smoothed rmse_m | causal ≤ raw | smoothed ≤ causal |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for d in dirs:
        try:
            r = replay(locus, d, ["--filter", "none"], common)["rmse_m"]
        except subprocess.CalledProcessError:
            r = None  # no raw fix (e.g. a round robin: one range an epoch)
        causal = replay(locus, d, [], common)
        smooth = replay(locus, d, ["--smooth"], common)
        c, s = causal["rmse_m"], smooth["rmse_m"]
        print("| %s | %d | %s | %.4f | %.4f | %s | %s |" % (
            d, causal["fixes"], "no fix" if r is None else "%.4f" % r, c, s,
            "(no raw fix)" if r is None else "yes" if c <= r else "**no**", "yes" if s <= c else "**no**"))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
