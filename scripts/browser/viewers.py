#!/usr/bin/env python3
"""Viewers of a running `locus serve` for a benchmark (StreamBench --viewers, issue #43).

    viewers.py --url http://127.0.0.1:PORT/ --count 5 --seconds 30 [--mode page|feed]

--mode page (default): COUNT headless Chromium processes (scripts/browser/cdp.py), one page each (a
background tab would have its animation frames throttled, a separate browser is a separate viewer),
sampled once a second: the page's frames per second (renders in the last second), its long frames
(gaps over 50 ms between animation frames while busy), the script time of its last render, the tags
drawn and its lag: the newest data time the page received − the view time it rendered
(`stats().lagSeconds`; for a page without it, `state().clock` − the time `#viewtime` shows). A page
whose main thread cannot keep up also holds feed messages unread, which that lag does not see: the
feed lag is the newest frame clock a plain SSE reader here has seen (reading only each frame's
leading `"clock"`) − the view time the page rendered, taken when the sample returns.
--mode feed: COUNT plain SSE readers on /feed that read and parse every message but draw nothing
(the server's cost per viewer without a browser's CPU on the same machine).

Prints one JSON object on stdout: per viewer and their medians.
"""
import argparse
import json
import os
import socket
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


# One sample of a page: stats() with its lag (seconds the rendered view trails the newest data received).
SAMPLE = """(() => {
    const s = window.locusView.stats();
    let lag = s.lagSeconds;
    if (typeof lag !== "number") {  // a page without lagSeconds: the time #viewtime shows ("live · 12.34 s")
        const m = /(-?[0-9.]+) s$/.exec(document.getElementById("viewtime").textContent);
        lag = m ? window.locusView.state().clock - Number(m[1]) : null;
    }
    return Object.assign({}, s, {lag, shown: lag === null ? null : window.locusView.state().clock - lag});
})()"""


class FeedClock:
    """The newest `clock` of the feed's frames, read by a thread from /feed (no JSON parsing)."""

    def __init__(self, url):
        self.host, self.port = url.split("//")[1].rstrip("/").split(":")
        self.clock = None
        self.stopped = False
        threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        s = socket.create_connection((self.host, int(self.port)), timeout=10)
        s.sendall(f"GET /feed HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nAccept: text/event-stream\r\n\r\n".encode())
        s.settimeout(1)
        buf = b""
        key = b'"type":"frame","clock":'
        for d in recv_chunks(s, lambda: not self.stopped):
            buf += d
            *lines, buf = buf.split(b"\n")
            for line in lines:
                i = line.find(key, 0, 80)
                if line.startswith(b"data: ") and i >= 0:
                    j = i + len(key)
                    k = j
                    while k < len(line) and line[k:k + 1] in b"-.0123456789eE+":
                        k += 1
                    try:
                        c = float(line[j:k])
                    except ValueError:
                        continue
                    if self.clock is None or c > self.clock:
                        self.clock = c
        s.close()



def recv_chunks(s, going):
    """What a socket with a timeout receives, chunk by chunk, while going() holds and it is open."""
    while going():
        try:
            d = s.recv(1 << 16)
        except socket.timeout:
            continue
        if not d:
            return
        yield d

def pages(url, count, seconds):
    from cdp import Browser
    browsers, views = [], []
    try:
        for _ in range(count):
            b = Browser()
            browsers.append(b)
            p = b.new_page()
            p.navigate(url)
            p.evaluate("window.locusView.ready", await_promise=True, timeout=60)
            views.append(p)
        feed = FeedClock(url)
        print("viewers ready", file=sys.stderr, flush=True)
        samples = [[] for _ in views]
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            time.sleep(1)
            for i, p in enumerate(views):
                try:
                    x = p.evaluate(SAMPLE)
                    if x.get("shown") is not None and feed.clock is not None:
                        x["feedLag"] = feed.clock - x["shown"]
                    samples[i].append(x)
                except Exception as e:  # a page that stopped answering is part of the result
                    samples[i].append({"error": str(e)})
        out = []
        for s in samples:
            ok = [x for x in s if "error" not in x]
            steady = ok[2:] or ok  # the first seconds load the history
            fps = [x["fps"] for x in steady] or [0]
            lag = [x["lag"] for x in steady if x.get("lag") is not None] or [float("nan")]
            render = [x["renderMs"] for x in steady] or [float("nan")]
            feed_lag = [x["feedLag"] for x in steady if x.get("feedLag") is not None] or [float("nan")]
            out.append({"fps_median": statistics.median(fps), "fps_min": min(fps),
                        "lag_median_s": round(statistics.median(lag), 3), "lag_max_s": round(max(lag), 3),
                        "feed_lag_median_s": round(statistics.median(feed_lag), 3), "feed_lag_max_s": round(max(feed_lag), 3),
                        "render_ms_median": round(statistics.median(render), 2),
                        "long_frames": ok[-1]["longFrames"] if ok else None,
                        "frames_rendered": ok[-1]["framesRendered"] if ok else None,
                        "render_ms_last": round(ok[-1]["renderMs"], 2) if ok else None,
                        "tags": ok[-1]["tags"] if ok else None, "errors": len(s) - len(ok)})
        return out
    finally:
        for b in browsers:
            b.close()


def feeds(url, count, seconds):
    host, port = url.split("//")[1].rstrip("/").split(":")
    results = [None] * count

    def reader(i):
        s = socket.create_connection((host, int(port)), timeout=10)
        s.sendall(f"GET /feed HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/event-stream\r\n\r\n".encode())
        end = time.monotonic() + seconds
        buf, messages, nbytes, gaps, fixes = b"", 0, 0, 0, 0
        s.settimeout(1)
        for d in recv_chunks(s, lambda: time.monotonic() < end):
            nbytes += len(d)
            buf += d
            *blocks, buf = buf.split(b"\n\n")
            for block in blocks:
                for line in block.split(b"\n"):
                    if line.startswith(b"data: "):
                        m = json.loads(line[6:])
                        messages += 1
                        gaps += m.get("type") == "gap"
                        if m.get("type") == "frame":
                            fixes += len(m.get("fixes", ()))
        s.close()
        results[i] = {"messages": messages, "bytes": nbytes, "gaps": gaps, "fixes": fixes}

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    print("viewers ready", file=sys.stderr, flush=True)
    for t in threads:
        t.join()
    return results


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--url", required=True)
    a.add_argument("--count", type=int, default=5)
    a.add_argument("--seconds", type=float, default=30)
    a.add_argument("--mode", choices=["page", "feed"], default="page")
    o = a.parse_args()
    if o.mode == "page":
        per = pages(o.url, o.count, o.seconds)
        summary = {"mode": "page", "viewers": per,
                   "fps_median": statistics.median([v["fps_median"] for v in per]),
                   "lag_median_s": statistics.median([v["lag_median_s"] for v in per]),
                   "lag_max_s": max(v["lag_max_s"] for v in per),
                   "feed_lag_median_s": statistics.median([v["feed_lag_median_s"] for v in per]),
                   "feed_lag_max_s": max(v["feed_lag_max_s"] for v in per),
                   "render_ms_median": statistics.median([v["render_ms_median"] for v in per]),
                   "long_frames_total": sum(v["long_frames"] or 0 for v in per)}
    else:
        per = feeds(o.url, o.count, o.seconds)
        summary = {"mode": "feed", "viewers": per, "gaps_total": sum(v["gaps"] for v in per)}
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
