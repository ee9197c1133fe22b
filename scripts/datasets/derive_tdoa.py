#!/usr/bin/env python3
"""Range differences (TDoA rows, SPEC §2) formed from a converted two-way-ranging recording, to judge the
engine's TDoA path on real data: no public TDoA recording with truth can be used here (docs/datasets.md).

usage: derive_tdoa.py SRC OUT [--reference ADDR|shortest]

SRC holds site.json, trace.csv (ranges: t,anchor,range_m[,tag][,floor]) and truth.csv. Each round — a tag's rows
with one timestamp, each locator at most once — becomes a blink: with A the reference (ADDR when the round has it,
else the round's shortest range; default: every round's shortest) one row t,tag,anchor_a,anchor_b,tdoa_m per other
locator B, tdoa_m = r_B − r_A. Rounds of fewer than 3 ranges are dropped (no difference pair determines anything).
OUT gets the differences as trace.csv, site.json and truth.csv copied, and provenance.txt.

What this is and is not: the arrivals are the recording's real ranges, so their multipath, NLOS excess and
per-locator delays are real; the tag's own antenna delay, common to its ranges, cancels in every difference, as in
real TDoA. A real TDoA system adds the locators' clock-synchronisation error per arrival, which no TWR recording
has, and receives one transmission at every locator at once, where the TWR rounds range the locators a few ms apart
(the tag moves ≤ a few mm in between at walking speed). Keep OUT outside the repository (the source's licence).
"""
import csv
import os
import shutil
import sys


def rounds(path):
    """Yields (t, tag, floor, [(anchor, range)]) per round of the trace at `path`, in file order."""
    with open(path, newline="") as f:
        rows = csv.DictReader(f)
        key, members = None, []
        for row in rows:
            tag = row.get("tag") or "tag"
            floor = row.get("floor") or ""
            k = (row["t"], tag, floor)
            anchor = row["anchor"]
            if k != key or any(a == anchor for a, _ in members):
                if members:
                    yield key[0], key[1], key[2], members
                key, members = k, []
            members.append((anchor, float(row["range_m"])))
        if members:
            yield key[0], key[1], key[2], members


def main():
    args = sys.argv[1:]
    reference = "shortest"
    if "--reference" in args:
        i = args.index("--reference")
        reference = args[i + 1]
        del args[i:i + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    src, out = args
    os.makedirs(out, exist_ok=True)
    blinks = rows_written = dropped = 0
    with open(os.path.join(out, "trace.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["t", "tag", "anchor_a", "anchor_b", "tdoa_m", "floor"])
        for t, tag, floor, members in rounds(os.path.join(src, "trace.csv")):
            if len(members) < 3:
                dropped += 1
                continue
            by_anchor = dict(members)
            a = reference if reference in by_anchor else min(members, key=lambda m: m[1])[0]
            for b, r in members:
                if b != a:
                    w.writerow([t, tag, a, b, "%.4f" % (r - by_anchor[a]), floor])
                    rows_written += 1
            blinks += 1
    for name in ("site.json", "truth.csv"):
        shutil.copyfile(os.path.join(src, name), os.path.join(out, name))
    with open(os.path.join(out, "provenance.txt"), "w") as f:
        f.write("Range differences formed by scripts/datasets/derive_tdoa.py from %s (reference: %s):\n"
                "%d blinks, %d difference rows, %d rounds of fewer than 3 ranges dropped.\n"
                "The source's README and licence apply (%s).\n" % (os.path.abspath(src), reference, blinks, rows_written,
                                                                   dropped, os.path.join(os.path.abspath(src), "README.md")))
    print("%s: %d blinks, %d rows, %d rounds dropped" % (out, blinks, rows_written, dropped))


if __name__ == "__main__":
    main()
