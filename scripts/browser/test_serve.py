"""Browser tests of `locus serve` (issue #43): the page in headless Chromium over the DevTools protocol.

Run by scripts/test-browser. The server is `locus serve` (LOCUS_BIN, default .build/debug/locus);
LOCUS_BROWSER_MOCK=1 runs scripts/browser/mock_serve.py in its place (development only). Screenshots
go to out/browser/. Nothing but 127.0.0.1 is contacted; no wall time is asserted (only polled, with
generous timeouts).
"""
import csv
import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cdp  # noqa: E402

ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
LOCUS = os.environ.get("LOCUS_BIN", os.path.join(ROOT, ".build", "debug", "locus"))
OUT = os.path.join(ROOT, "out", "browser")
HALL = os.path.join(ROOT, "Fixtures", "sites", "hall.json")
CORRIDOR = os.path.join(ROOT, "Fixtures", "sites", "corridor.json")
HALL_TRACE = os.path.join(ROOT, "Fixtures", "traces", "hall-walk.csv")
HALL_TRUTH = os.path.join(ROOT, "Fixtures", "traces", "hall-walk-truth.csv")
MOCK = os.environ.get("LOCUS_BROWSER_MOCK") == "1"
SLOW = 180.0  # seconds: a debug build on a busy machine; polled, never asserted
HOSTILE = ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>']

pytestmark = pytest.mark.skipif(cdp.find_chromium() is None, reason="chromium is not installed")


# ---- the server ---------------------------------------------------------------------------------
def start_server(args):
    """Start `locus serve ARGS --listen 127.0.0.1:0`; return (url, process) once it printed its URL."""
    if MOCK:
        cmd = [sys.executable, os.path.join(HERE, "mock_serve.py"), *args]
    else:
        cmd = [LOCUS, "serve", *args]
    cmd += ["--listen", "127.0.0.1:0"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    lines = queue.Queue()
    proc.stderr_lines = []

    def drain():  # keep reading, so that the server never blocks on a full stderr pipe
        for line in proc.stderr:
            proc.stderr_lines.append(line.rstrip("\n"))
            lines.put(line)
        lines.put(None)

    threading.Thread(target=drain, daemon=True).start()
    deadline = time.monotonic() + SLOW
    pattern = re.compile(r"locus serve: .*(http://127\.0\.0\.1:\d+/)")
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("locus serve printed no URL; stderr:\n" + "\n".join(proc.stderr_lines))
            try:
                line = lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise AssertionError("locus serve exited (%s) before printing its URL; stderr:\n%s"
                                     % (proc.wait(), "\n".join(proc.stderr_lines)))
            m = pattern.search(line)
            if m:
                return m.group(1), proc
    except BaseException:
        stop_server(proc)
        raise


def stop_server(proc):
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGINT)  # its own session: the mock's `locus stream` child too
            proc.wait(15)
        except (subprocess.TimeoutExpired, ProcessLookupError):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(15)


def get_json(url):
    assert url.startswith("http://127.0.0.1:")
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.loads(r.read())


# ---- references from `locus replay` -------------------------------------------------------------
def run_replay(site, trace, workdir, truth=None):
    pos, ev = os.path.join(workdir, "P.csv"), os.path.join(workdir, "E.jsonl")
    cmd = [LOCUS, "replay", "--site", site, "--trace", trace, "--positions", pos, "--events", ev]
    if truth:
        cmd += ["--truth", truth]
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=SLOW)
    with open(pos, newline="") as fh:
        tags = sorted({r["tag"] for r in csv.DictReader(fh)})
    with open(ev) as fh:
        events = [json.loads(line) for line in fh if line.strip()]
    return tags, events


@pytest.fixture(scope="module")
def hall_reference(tmp_path_factory):
    """`locus replay`'s tags and events for the hall walk, and the enter/exit of its callInout:false
    zones (the feed's silent events), from a replay of the same site with callInout true everywhere."""
    d = tmp_path_factory.mktemp("replay")
    tags, events = run_replay(HALL, HALL_TRACE, str(d), truth=HALL_TRUTH)
    site = json.load(open(HALL))
    quiet = {(str(f["id"]), str(z["id"])) for f in site["floors"] for z in f.get("zones", []) if z.get("callInout", True) is False}
    for f in site["floors"]:
        for z in f.get("zones", []):
            z["callInout"] = True
    loud_site = d / "hall-loud.json"
    loud_site.write_text(json.dumps(site))
    loud_dir = d / "loud"
    loud_dir.mkdir()
    _, loud_events = run_replay(str(loud_site), HALL_TRACE, str(loud_dir))
    silent = [e for e in loud_events if (e["floor"], e["zone"]) in quiet and e["event"] in ("enter", "exit")]
    rest = [e for e in loud_events if not ((e["floor"], e["zone"]) in quiet and e["event"] in ("enter", "exit"))]
    assert rest == events, "callInout changed more than enter/exit of its zones"
    return {"tags": tags, "events": events, "silent": silent, "quiet": quiet}


# ---- the browser --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser():
    b = cdp.Browser()
    try:
        yield b
    finally:
        b.close()


WATCH = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));
"""


def open_page(browser, url):
    page = browser.new_page()
    page.record_requests()
    page.send("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH})
    page.navigate(url)
    assert page.evaluate("window.locusView.ready.then(() => true)", await_promise=True, timeout=SLOW)
    return page


def check_clean(page):
    """No dialog, no uncaught exception, no CSP violation, no request off 127.0.0.1."""
    assert page.dialogs == [], "a dialog opened: %r" % page.dialogs
    assert page.exceptions == [], page.exceptions
    assert page.evaluate("window.__csp") == [], "CSP violations"
    errors = [e for e in page.log if e[0] == "error" and "favicon" not in (e[3] or "")]
    assert errors == [], errors
    for u in page.requests:
        assert u.startswith("http://127.0.0.1:") or u.startswith("data:"), u


def shot(page, name):
    page.screenshot(os.path.join(OUT, name + ".png"))


def close_page(browser, page):
    try:
        browser.send("Target.closeTarget", {"targetId": page.target_id}, timeout=10)
    except cdp.CDPError:
        pass


def visible_tags(page):
    return page.evaluate("""[...document.querySelectorAll('#map g.tag')]
        .filter((g) => g.getAttribute('display') !== 'none')
        .map((g) => ({tag: g.getAttribute('data-tag'), label: g.querySelector('text.label').textContent}))""")


def event_list(page):
    return page.evaluate("""[...document.querySelectorAll('#events li')].map((li) =>
        [Number(li.getAttribute('data-t')), li.getAttribute('data-tag'), li.getAttribute('data-zone'), li.getAttribute('data-event')])""")


def zones_drawn(page):
    return page.evaluate("""[...document.querySelectorAll('#map g.zone')].map((g) => ({
        zone: g.getAttribute('data-zone'), floor: g.getAttribute('data-floor'),
        occupants: g.getAttribute('data-occupants'), occupied: g.classList.contains('occupied')}))""")


def counter(page, name):
    return page.evaluate("""(() => { for (const dt of document.querySelectorAll('#counters dt'))
        if (dt.textContent === %s) return dt.nextElementSibling.textContent; return null; })()""" % json.dumps(name))


def occupancy(events, t):
    occ = {}
    for e in events:  # in time order
        if e["t"] > t:
            break
        key = (e["floor"], e["zone"])
        if e["event"] == "enter":
            occ.setdefault(key, set()).add(e["tag"])
        elif e["event"] == "exit":
            occ.setdefault(key, set()).discard(e["tag"])
    return {k: len(v) for k, v in occ.items()}


# ---- 1. replay of the hall fixture --------------------------------------------------------------
def test_replay_hall(browser, hall_reference):
    url, proc = start_server(["--site", HALL, "--replay", HALL_TRACE, "--truth", HALL_TRUTH, "--speed", "0"])
    page = None
    try:
        page = open_page(browser, url)
        page.wait_for("window.locusView.ended()", timeout=SLOW)
        site = json.load(open(HALL))
        want_zones = {(str(f["id"]), str(z["id"])) for f in site["floors"] for z in f.get("zones", [])}
        assert {(z["floor"], z["zone"]) for z in zones_drawn(page)} == want_zones
        addresses = page.evaluate("[...document.querySelectorAll('#map g.locator')].map((g) => g.getAttribute('data-address'))")
        assert len(addresses) == sum(len(f["locators"]) for f in site["floors"])
        # Live at the end: every tag of the replay drawn, its label its id.
        want_tags = hall_reference["tags"]
        page.wait_for("document.querySelectorAll('#map g.tag:not([display])').length >= %d" % len(want_tags), timeout=SLOW)
        drawn = visible_tags(page)
        assert sorted(d["tag"] for d in drawn) == want_tags
        assert all(d["tag"] == d["label"] for d in drawn)
        state = page.evaluate("window.locusView.state()")
        assert state["ended"] and state["fixes"] > 0 and state["floor"] == "1F"
        # Locators are heard at the end of the run (the trace ranges to all of them).
        page.wait_for("document.querySelectorAll('#map g.locator[data-heard=\"true\"]').length > 0", timeout=SLOW)
        # Truth: the error beside each estimate.
        assert page.evaluate("document.querySelectorAll('#map g.tag text.err').length") == len(want_tags)
        shot(page, "replay-end")

        events, all_events = hall_reference["events"], sorted(hall_reference["events"] + hall_reference["silent"],
                                                              key=lambda e: e["t"])
        for t in (10, 30, 45, 60, 85):
            assert page.evaluate("window.locusView.seek(%r)" % float(t)) == t
            st = page.evaluate("window.locusView.state()")
            assert st["viewTime"] == t
            want = [[e["t"], e["tag"], e["zone"], e["event"]] for e in events if e["t"] <= t][::-1]
            assert event_list(page) == want, "event list at t=%s" % t
            occ = occupancy(all_events, t)
            for z in zones_drawn(page):
                n = occ.get((z["floor"], z["zone"]), 0)
                assert int(z["occupants"]) == n, "occupants of %s at t=%s" % (z["zone"], t)
                assert z["occupied"] == (n > 0)
            if t == 45:
                shot(page, "replay-t45")
        # Play from 5 s at 16× (the speed picker, as a user works it): the view time moves on, capped
        # at the newest data; then the Live button follows the newest data again.
        page.evaluate("window.locusView.seek(5)")
        rendered = page.evaluate("window.locusView.stats().framesRendered")
        page.evaluate("""(() => { const s = document.getElementById('speed'); s.value = '16';
            s.dispatchEvent(new Event('change')); })()""")
        page.wait_for("window.locusView.state().viewTime > 20", timeout=SLOW)
        st = page.evaluate("window.locusView.state()")
        assert st["viewTime"] <= st["clock"]
        assert page.evaluate("window.locusView.stats().framesRendered") > rendered
        page.evaluate("document.getElementById('live').click()")
        page.wait_for("window.locusView.state().viewTime === window.locusView.state().clock", timeout=SLOW)
        assert page.evaluate("document.getElementById('live').classList.contains('on')")
        check_clean(page)
    finally:
        if page:
            close_page(browser, page)
        stop_server(proc)


# ---- 2. hostile ids -----------------------------------------------------------------------------
def test_hostile_ids(browser, tmp_path):
    trace = tmp_path / "hostile.csv"
    names = {}
    with open(HALL_TRACE, newline="") as src, open(trace, "w", newline="") as dst:
        rows = csv.DictReader(src)
        w = csv.DictWriter(dst, fieldnames=rows.fieldnames, lineterminator="\n")
        w.writeheader()
        for r in rows:
            r["tag"] = names.setdefault(r["tag"], HOSTILE[len(names) % len(HOSTILE)])
            w.writerow(r)
    assert sorted(names.values()) == sorted(HOSTILE)
    url, proc = start_server(["--site", HALL, "--replay", str(trace), "--speed", "0"])
    page = None
    try:
        page = open_page(browser, url)
        page.wait_for("window.locusView.ended()", timeout=SLOW)
        page.wait_for("document.querySelectorAll('#map g.tag:not([display])').length >= 2", timeout=SLOW)
        labels = page.evaluate("[...document.querySelectorAll('#map g.tag text.label')].map((t) => t.textContent)")
        assert sorted(labels) == sorted(HOSTILE)
        assert sorted(d["tag"] for d in visible_tags(page)) == sorted(HOSTILE)
        listed = page.evaluate("[...document.querySelectorAll('#events li')].map((li) => [li.getAttribute('data-tag'), li.querySelector('.tag').textContent])")
        assert listed and all(a == b and a in HOSTILE for a, b in listed)
        assert page.evaluate("document.querySelectorAll('img').length") == 0
        assert page.evaluate("[...document.scripts].map((s) => s.getAttribute('src'))") == ["/app.js"]
        assert page.evaluate("document.querySelectorAll('[onerror]').length") == 0
        shot(page, "hostile-ids")
        check_clean(page)
    finally:
        if page:
            close_page(browser, page)
        stop_server(proc)


# ---- 3. live over UDP ---------------------------------------------------------------------------
def free_udp_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_live_udp(browser):
    port = free_udp_port()
    url, proc = start_server(["--site", HALL, "--input", "udp://127.0.0.1:%d" % port])
    page = None
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        page = open_page(browser, url)
        site = get_json(url + "api/site")
        assert site["mode"] == "live"
        with open(HALL_TRACE, newline="") as fh:
            rows = [r for r in csv.DictReader(fh) if float(r["t"]) <= 8.0]
        # Twice real time: 8 s of data in about 4 s.
        wall0, t0 = time.monotonic(), float(rows[0]["t"])
        for r in rows:
            t = float(r["t"])
            delay = (t - t0) / 2.0 - (time.monotonic() - wall0)
            if delay > 0:
                time.sleep(delay)
            msg = {"t": t, "tag": r["tag"], "anchor": int(r["anchor"]), "range_m": float(r["range_m"])}
            sock.sendto(json.dumps(msg).encode(), ("127.0.0.1", port))
        page.wait_for("document.querySelectorAll('#map g.tag:not([display])').length >= 2", timeout=SLOW)
        assert sorted(d["tag"] for d in visible_tags(page)) == ["T1", "T2"]
        page.wait_for("""(() => { for (const dt of document.querySelectorAll('#counters dt'))
            if (dt.textContent === 'Rows') return Number(dt.nextElementSibling.textContent) > 0; return false; })()""", timeout=SLOW)
        assert int(counter(page, "Rows")) > 0
        assert page.evaluate("window.locusView.state().fixes") > 0
        assert page.evaluate("window.locusView.ended()") is False
        shot(page, "live-udp")
        check_clean(page)
    finally:
        sock.close()
        if page:
            close_page(browser, page)
        stop_server(proc)


# ---- 4. HDOP overlay, floors, URL parameters ----------------------------------------------------
def test_overlay(browser):
    url, proc = start_server(["--site", HALL, "--replay", HALL_TRACE, "--speed", "0"])
    page = None
    try:
        page = open_page(browser, url)
        assert page.evaluate("document.querySelectorAll('#map image.hdop').length") == 0
        page.evaluate("document.getElementById('overlay').click()")
        cells = page.wait_for("(() => { const i = document.querySelector('#map image.hdop'); return i && Number(i.getAttribute('data-cells')); })()",
                              timeout=SLOW)
        geometry = get_json(url + "api/geometry/0")
        assert geometry["nx"] * geometry["ny"] == len(geometry["hdop"])
        assert cells == sum(1 for h in geometry["hdop"] if h is not None) > 0
        assert page.evaluate("document.querySelector('#map image.hdop').getAttribute('href').startsWith('data:image/png')")
        shot(page, "overlay")
        page.evaluate("document.getElementById('overlay').click()")
        page.wait_for("document.querySelectorAll('#map image.hdop').length === 0", timeout=SLOW)
        # Zoom (button, wheel) and pan (drag) move the view box.
        box = "document.getElementById('map').getAttribute('viewBox').split(' ').map(Number)"
        b0 = page.evaluate(box)
        page.evaluate("document.getElementById('zoom-in').click()")
        b1 = page.evaluate(box)
        assert b1[2] < b0[2] and b1[3] < b0[3]
        page.send("Input.dispatchMouseEvent", {"type": "mouseWheel", "x": 400, "y": 400, "deltaX": 0, "deltaY": 300})
        b2 = page.wait_for("(() => { const b = %s; return b[2] > %r ? b : null; })()" % (box, b1[2]), timeout=SLOW)
        for kind, x in (("mousePressed", 400), ("mouseMoved", 500), ("mouseReleased", 500)):
            page.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": 400, "button": "left", "buttons": 1 if kind != "mouseReleased" else 0,
                                                   "clickCount": 1})
        b3 = page.wait_for("(() => { const b = %s; return b[0] < %r ? b : null; })()" % (box, b2[0]), timeout=SLOW)
        assert abs(b3[2] - b2[2]) < 1e-6  # a drag pans, it does not zoom
        page.evaluate("document.getElementById('zoom-fit').click()")
        assert page.evaluate(box) == b0
        check_clean(page)
    finally:
        if page:
            close_page(browser, page)
        stop_server(proc)


def two_floor_site(tmp_path):
    """A fixture site with two floors if there is one, else the hall and the corridor as one site."""
    sites = os.path.join(ROOT, "Fixtures", "sites")
    for name in sorted(os.listdir(sites)):
        if name.endswith(".json"):
            d = json.load(open(os.path.join(sites, name)))
            if len(d.get("floors", [])) >= 2:
                return os.path.join(sites, name), d
    hall, corridor = json.load(open(HALL)), json.load(open(CORRIDOR))
    site = {"building": {"id": "hq", "name": "Two floors", "floorCount": 2}, "floors": hall["floors"] + corridor["floors"]}
    path = tmp_path / "two-floors.json"
    path.write_text(json.dumps(site))
    return str(path), site


def test_floors_and_url(browser, tmp_path):
    site_path, site = two_floor_site(tmp_path)
    first, second = str(site["floors"][0]["id"]), str(site["floors"][1]["id"])
    url, proc = start_server(["--site", site_path, "--replay", HALL_TRACE, "--speed", "0"])
    page = None
    try:
        page = open_page(browser, url)
        page.wait_for("window.locusView.ended()", timeout=SLOW)
        assert page.evaluate("document.getElementById('floorpick').hidden") is False
        assert page.evaluate("document.querySelectorAll('#floor option').length") == len(site["floors"])
        page.wait_for("document.querySelectorAll('#map g.tag:not([display])').length >= 2", timeout=SLOW)
        shown = """((id) => [...document.querySelectorAll('#map g.zone')].filter((z) => z.getAttribute('data-floor') === id)
            .every((z) => z.parentNode.getAttribute('display') !== 'none'))"""
        assert page.evaluate(shown + "(%s)" % json.dumps(first))
        # The switcher, as a user works it.
        page.evaluate("""(() => { const s = document.getElementById('floor'); s.value = '1';
            s.dispatchEvent(new Event('change')); })()""")
        page.wait_for("window.locusView.state().floor === %s" % json.dumps(second), timeout=SLOW)
        page.wait_for("document.querySelectorAll('#map g.tag:not([display])').length === 0", timeout=SLOW)
        assert page.evaluate(shown + "(%s)" % json.dumps(second))
        assert not page.evaluate(shown + "(%s)" % json.dumps(first))
        shot(page, "floor-second")
        assert page.evaluate("window.locusView.showFloor(%s)" % json.dumps(first))
        assert len(visible_tags(page)) >= 2
        check_clean(page)
        close_page(browser, page)
        page = None
        # ?t=&floor= opens paused at t on that floor.
        page = open_page(browser, url + "?t=30&floor=" + second)
        page.wait_for("window.locusView.ended()", timeout=SLOW)
        st = page.evaluate("window.locusView.state()")
        assert st["viewTime"] == 30 and st["floor"] == second
        assert page.evaluate("window.locusView.showFloor(%s)" % json.dumps(first))
        assert page.evaluate("window.locusView.state().viewTime") == 30
        assert all(float(t) <= 30 for t in page.evaluate("[...document.querySelectorAll('#events li')].map((li) => li.getAttribute('data-t'))"))
        check_clean(page)
    finally:
        if page:
            close_page(browser, page)
        stop_server(proc)
