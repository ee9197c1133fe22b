#!/usr/bin/env python3
"""Replay a recorded range trace with the `locus` Python package (python/, over liblocus).

    swift build --product locus-c && pip install ./python
    python3 Examples/python/replay.py --site Fixtures/sites/hall.json --trace Fixtures/traces/hall-walk.csv \
        [--positions OUT.csv] [--events OUT.jsonl] [--filter kalman|none] [--rate HZ] [--sigma M]
        [--coupling tight|loose] [--mode auto|planar|spatial] [--tag-offset auto|on|off] [--smooth]

Writes the positions and zone events byte for byte as `locus replay --positions/--events` does and
prints the summary. Rows the trace cannot use are skipped and counted, as by `locus replay`.
"""
import argparse
import json

import locus


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", required=True)
    parser.add_argument("--trace", required=True)
    parser.add_argument("--positions")
    parser.add_argument("--events")
    parser.add_argument("--filter", default="kalman", choices=["kalman", "none"])
    parser.add_argument("--rate", type=float, default=4)
    parser.add_argument("--sigma", type=float, default=0.1)
    parser.add_argument("--coupling", default="tight", choices=["tight", "loose"])
    parser.add_argument("--mode", default="auto", choices=["auto", "planar", "spatial"])
    parser.add_argument("--tag-offset", default="auto", choices=["auto", "on", "off"])
    parser.add_argument("--smooth", action="store_true")
    a = parser.parse_args()
    result = locus.replay(a.site, a.trace, filter=a.filter, rate=a.rate, sigma=a.sigma, smooth=a.smooth,
                          tag_offset=a.tag_offset, mode=a.mode, coupling=a.coupling)
    result.write(positions=a.positions, events=a.events)
    print(f"locus {locus.version()}: {json.dumps(result.summary)}")


if __name__ == "__main__":
    main()
