#!/usr/bin/env python3
"""A throwaway stand-in for `locus serve` (docs/serve.md), for developing the page and its browser
tests before the real server lands. Development only (LOCUS_BROWSER_MOCK=1 in the tests).

It takes `locus serve`'s arguments, serves the Page files and the contract's JSON on 127.0.0.1, and
builds the /feed from the real engine: the rows go through `locus stream --format jsonl --tick-ms 0`
(the same outputs as `locus replay`) run on a copy of the site where every zone has callInout true, so
that the enter/exit of callInout:false zones can be sent marked "silent". Status numbers other than
rows/fixes/events/tags are invented. The HDOP map is a plain planar DOP, not `locus geometry`'s.
"""
import argparse
import collections
import csv
import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PAGE = os.path.join(ROOT, "Sources", "LocusServe", "Page")
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
ZONE_DEFAULTS = {"inDist": 3.0, "inCount": 1, "inCountInterval": 1, "outPeriod": 3, "priority": 0,
                 "callInout": True, "dwellSeconds": 5}


def addr_key(a):
    if isinstance(a, int):
        return a
    s = str(a).strip()
    return int(s[2:], 16) if s.lower().startswith("0x") else int(s)


class Feed:
    """Every message since the start, with ids 1, 2, …; viewers wait on a condition."""

    def __init__(self):
        self.messages = []
        self.cond = threading.Condition()
        self.viewers = 0

    def put(self, obj):
        with self.cond:
            self.messages.append(json.dumps(obj, separators=(",", ":")))
            self.cond.notify_all()

    def since(self, n, timeout):
        with self.cond:
            if len(self.messages) <= n:
                self.cond.wait(timeout)
            return list(enumerate(self.messages[n:], start=n + 1))


class Engine:
    def __init__(self, args, site_raw, feed):
        self.args, self.feed, self.site_raw = args, feed, site_raw
        self.floors = [str(f["id"]) for f in site_raw["floors"]]
        self.addr = {}  # (floor, int) -> site address as written
        for f in site_raw["floors"]:
            for loc in f.get("locators", []):
                self.addr[(str(f["id"]), addr_key(loc["address"]))] = str(loc["address"])
        self.silent_zones = {(str(f["id"]), str(z["id"])) for f in site_raw["floors"] for z in f.get("zones", [])
                             if z.get("callInout", True) is False}
        self.lock = threading.Lock()
        self.pending_fix, self.pending_ev = [], []
        self.heard_rows = collections.deque()  # (t, floor, address) of rows not yet reported as heard
        self.clock = None
        self.rows = self.fixes = self.events = 0
        self.tags = set()
        self.done = False
        self.progress = 0.0
        self.truth = self.load_truth(args.truth) if args.truth else None
        tmp = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        loud = json.loads(json.dumps(site_raw))
        for f in loud["floors"]:
            for z in f.get("zones", []):
                z["callInout"] = True
        json.dump(loud, tmp)
        tmp.close()
        self.loud_site = tmp.name
        locus = os.environ.get("LOCUS_BIN", os.path.join(ROOT, ".build", "debug", "locus"))
        self.proc = subprocess.Popen([locus, "stream", "--site", self.loud_site, "--format", "jsonl", "--tick-ms", "0"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, bufsize=1)
        threading.Thread(target=self.read_outputs, daemon=True).start()
        threading.Thread(target=self.flusher, daemon=True).start()
        threading.Thread(target=self.status_loop, daemon=True).start()

    @staticmethod
    def load_truth(path):
        by = {}
        for r in csv.DictReader(open(path)):
            by.setdefault(r.get("tag", "tag"), []).append((float(r["t"]), float(r["x"]), float(r["y"])))
        return by

    def truth_at(self, tag, t):
        rows = (self.truth or {}).get(tag)
        if not rows:
            return None
        lo, hi = 0, len(rows) - 1
        if t <= rows[0][0]:
            return rows[0][1:]
        if t >= rows[hi][0]:
            return rows[hi][1:]
        while hi - lo > 1:
            m = (lo + hi) // 2
            if rows[m][0] <= t:
                lo = m
            else:
                hi = m
        (t0, x0, y0), (t1, x1, y1) = rows[lo], rows[hi]
        u = (t - t0) / (t1 - t0) if t1 > t0 else 0
        return (x0 + (x1 - x0) * u, y0 + (y1 - y0) * u)

    def note_row(self, t, floor, anchor):
        floor = floor or self.floors[0]
        with self.lock:
            self.rows += 1
            try:
                a = self.addr.get((floor, addr_key(anchor)))
            except ValueError:
                a = None
            if a is not None:
                self.heard_rows.append((t, floor, a))

    def send_line(self, line):
        try:
            self.proc.stdin.write(line + "\n")
        except (BrokenPipeError, ValueError):
            pass

    def read_outputs(self):
        for line in self.proc.stdout:
            try:
                o = json.loads(line)
            except ValueError:
                continue
            with self.lock:
                if "event" in o:
                    if (o.get("floor"), o.get("zone")) in self.silent_zones:
                        if o["event"] not in ("enter", "exit"):
                            self.events += 1
                        else:
                            o["silent"] = True
                            self.pending_ev.append(o)
                            continue
                    else:
                        self.events += 1
                    self.pending_ev.append(o)
                else:
                    fix = {"t": o["t"], "tag": o["tag"], "floor": o.get("floor"), "x": o["x"], "y": o["y"],
                           "z": o.get("z"), "r95": o.get("r95")}
                    tr = self.truth_at(o["tag"], o["t"]) if self.truth else None
                    if tr:
                        fix["truth"] = [round(tr[0], 4), round(tr[1], 4)]
                        fix["err"] = round(math.hypot(tr[0] - o["x"], tr[1] - o["y"]), 4)
                    self.pending_fix.append(fix)
                    self.fixes += 1
                    self.tags.add(o["tag"])
                    span0 = self.pending_fix[0]["t"]
                    if o["t"] - span0 >= 0.5:
                        self.flush_locked()
        with self.lock:
            self.flush_locked(final=True)
            self.done = True
        self.status()
        self.feed.put({"type": "end", "clock": self.clock})

    def flush_locked(self, final=False):
        if not self.pending_fix and not self.pending_ev and not final:
            return
        ts = [f["t"] for f in self.pending_fix] + [e["t"] for e in self.pending_ev]
        if ts:
            self.clock = max(ts + ([self.clock] if self.clock is not None else []))
        if final and self.heard_rows:
            self.clock = max([self.clock or -math.inf] + [r[0] for r in self.heard_rows])
        if not ts and not final:
            return
        latest = {}
        while self.heard_rows and self.heard_rows[0][0] <= self.clock:
            t, f, a = self.heard_rows.popleft()
            if t > latest.get((f, a), -math.inf):
                latest[(f, a)] = t
        heard = [{"floor": f, "address": a, "t": t} for (f, a), t in latest.items()]
        self.feed.put({"type": "frame", "clock": self.clock, "fixes": self.pending_fix, "events": self.pending_ev,
                       "heard": heard})
        self.pending_fix, self.pending_ev = [], []

    def flusher(self):
        while not self.done:
            time.sleep(0.1)
            with self.lock:
                self.flush_locked()

    def status(self):
        with self.lock:
            self.feed.put({"type": "status", "clock": self.clock, "rows": self.rows, "fixes": self.fixes,
                           "events": self.events, "tags": len(self.tags), "skipped": {}, "malformed": 0,
                           "fixesPerSecond": 4.0 * len(self.tags), "latencyMs": {"p50": 0.05, "p99": 0.2, "max": 0.3},
                           "viewers": self.feed.viewers, "droppedFrames": 0,
                           **({"replay": {"progress": self.progress, "done": self.done}} if self.args.replay else {})})

    def status_loop(self):
        while True:
            time.sleep(1.0)
            self.status()

    def replay(self, path, speed):
        rows = list(csv.DictReader(open(path, newline="")))
        w = csv.writer(self.proc.stdin, lineterminator="\n")
        w.writerow(["t", "tag", "anchor", "range_m", "floor"])
        t0, wall0 = None, time.monotonic()
        for i, r in enumerate(rows):
            t = float(r["t"])
            if speed > 0:
                t0 = t if t0 is None else t0
                delay = (t - t0) / speed - (time.monotonic() - wall0)
                if delay > 0:
                    time.sleep(delay)
            self.note_row(t, r.get("floor"), r["anchor"])
            w.writerow([r["t"], r.get("tag", "tag"), r["anchor"], r["range_m"], r.get("floor") or self.floors[0]])
            self.progress = (i + 1) / len(rows)
        self.proc.stdin.close()

    def udp(self, host, port):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((host, port))
        while True:
            data, _ = s.recvfrom(65536)
            try:
                o = json.loads(data)
            except ValueError:
                continue
            self.note_row(float(o["t"]), o.get("floor"), o["anchor"])
            self.send_line(json.dumps(o))


def hdop_map(floor):
    step = 0.5
    x0, y0 = float(floor.get("originX", 0)), float(floor.get("originY", 0))
    nx, ny = max(1, int(float(floor["widthM"]) / step)), max(1, int(float(floor["heightM"]) / step))
    th = float(floor.get("tagHeightM", 0))
    locs = [(float(l["x"]), float(l["y"]), float(l.get("z", 0))) for l in floor.get("locators", [])]
    out = []
    for j in range(ny):
        for i in range(nx):
            px, py = x0 + step / 2 + i * step, y0 + step / 2 + j * step
            a = b = c = 0.0
            n = 0
            for lx, ly, lz in locs:
                d = math.sqrt((px - lx) ** 2 + (py - ly) ** 2 + (th - lz) ** 2)
                if d > 30 or d < 1e-6:
                    continue
                ux, uy = (px - lx) / d, (py - ly) / d
                a += ux * ux; b += ux * uy; c += uy * uy; n += 1
            det = a * c - b * b
            out.append(round(math.sqrt((a + c) / det), 3) if n >= 3 and det > 1e-9 else None)
    return {"floor": str(floor["id"]), "x0": x0 + step / 2, "y0": y0 + step / 2, "step": step, "nx": nx, "ny": ny,
            "sigmaM": 0.1, "hdop": out}


def page_site(raw, args):
    floors = []
    for i, f in enumerate(raw["floors"]):
        zones = []
        for z in f.get("zones", []):
            zz = {k: z.get(k, d) if z.get(k, d) is not None else d for k, d in ZONE_DEFAULTS.items()}
            zz.update({"id": str(z["id"]), "name": z.get("name", str(z["id"])),
                       "polygon": [[p["x"], p["y"]] for p in z["polygon"]]})
            zones.append(zz)
        floors.append({"index": i, "id": str(f["id"]), "name": f.get("name", str(f["id"])),
                       "originX": f.get("originX", 0), "originY": f.get("originY", 0), "widthM": f["widthM"],
                       "heightM": f["heightM"], "tagHeightM": f.get("tagHeightM", 0),
                       "locators": [{"address": str(l["address"]), "x": l["x"], "y": l["y"], "z": l.get("z", 0)}
                                    for l in f.get("locators", [])],
                       "zones": zones})
    site = {"title": raw.get("building", {}).get("name", "Locus"), "mode": "replay" if args.replay else "live",
            "source": os.path.basename(args.replay or args.input or "-"), "hasTruth": bool(args.truth), "floors": floors}
    if args.replay:
        site["speed"] = args.speed
    return site


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--site", required=True)
    ap.add_argument("--replay")
    ap.add_argument("--truth")
    ap.add_argument("--speed", type=float, default=1.0)
    ap.add_argument("--input")
    ap.add_argument("--listen", default="127.0.0.1:0")
    args = ap.parse_args()
    raw = json.load(open(args.site))
    site = page_site(raw, args)
    feed = Feed()
    geometry = {}
    files = {"/": ("index.html", "text/html; charset=utf-8"), "/app.js": ("app.js", "text/javascript; charset=utf-8"),
             "/app.css": ("app.css", "text/css; charset=utf-8")}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def head(self, code, ctype, length=None):
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            for k, v in (("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"),
                         ("Referrer-Policy", "no-referrer"), ("Content-Security-Policy", CSP)):
                self.send_header(k, v)
            if length is not None:
                self.send_header("Content-Length", str(length))
            self.end_headers()

        def body(self, code, ctype, data):
            self.head(code, ctype, len(data))
            self.wfile.write(data)

        def do_GET(self):
            path = self.path.split("?", 1)[0]
            if path in files:
                name, ctype = files[path]
                with open(os.path.join(PAGE, name), "rb") as fh:
                    return self.body(200, ctype, fh.read())
            if path == "/api/site":
                return self.body(200, "application/json", json.dumps(site).encode())
            if path.startswith("/api/geometry/"):
                try:
                    i = int(path.rsplit("/", 1)[1])
                    f = raw["floors"][i]
                except (ValueError, IndexError):
                    return self.body(404, "text/plain", b"not found\n")
                if i not in geometry:
                    geometry[i] = json.dumps(hdop_map(f)).encode()
                return self.body(200, "application/json", geometry[i])
            if path == "/api/status":
                st = [m for m in feed.messages if '"type":"status"' in m]
                return self.body(200, "application/json", (st[-1] if st else "{}").encode())
            if path == "/feed":
                return self.sse()
            return self.body(404, "text/plain", b"not found\n")

        def sse(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-store")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            try:
                n = int(self.headers.get("Last-Event-ID", "0") or 0)
            except ValueError:
                n = 0
            feed.viewers += 1
            try:
                while True:
                    batch = feed.since(n, 5.0)
                    if not batch:
                        self.wfile.write(b": keep-alive\n\n")
                    for i, m in batch:
                        self.wfile.write(("id: %d\ndata: %s\n\n" % (i, m)).encode())
                        n = i
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError, OSError):
                pass
            finally:
                feed.viewers -= 1

    host, port = args.listen.rsplit(":", 1)
    assert host == "127.0.0.1", "the mock listens on 127.0.0.1 only"
    httpd = ThreadingHTTPServer((host, int(port)), Handler)
    httpd.daemon_threads = True
    engine = Engine(args, raw, feed)
    sys.stderr.write("locus serve: http://127.0.0.1:%d/\n" % httpd.server_address[1])
    sys.stderr.flush()
    if args.replay:
        threading.Thread(target=engine.replay, args=(args.replay, args.speed), daemon=True).start()
    elif args.input and args.input.startswith("udp://"):
        h, p = args.input[len("udp://"):].rsplit(":", 1)
        threading.Thread(target=engine.udp, args=(h, int(p)), daemon=True).start()
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        engine.proc.kill()
        os.unlink(engine.loud_site)


if __name__ == "__main__":
    main()
