"""A tiny Chrome DevTools Protocol client over --remote-debugging-pipe (Python stdlib only).

    with Browser() as b:
        page = b.new_page()
        page.navigate("http://127.0.0.1:8080/")
        page.evaluate("window.locusView.ready", await_promise=True)
        page.screenshot("out/browser/x.png")
        assert not page.dialogs

Chromium reads the protocol on fd 3 and writes on fd 4, one JSON message per NUL-terminated chunk.
Sessions are flattened (Target.attachToTarget flatten=true): every page message carries its sessionId.
The browser is started with every host name resolving to nothing except 127.0.0.1, so a page can
reach no address but this machine's loopback.
"""
import base64
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time

CHROMIUM_FLAGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", "--no-first-run",
    "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-default-apps",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
    "--window-size=1400,900",
]


def find_chromium():
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


class CDPError(RuntimeError):
    pass


class Browser:
    def __init__(self, binary=None, extra_flags=(), timeout=30.0):
        self.binary = binary or find_chromium()
        if not self.binary:
            raise CDPError("chromium not found")
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="locus-chromium-")
        to_child_r, self._to_child = os.pipe()     # we write, chromium reads on fd 3
        self._from_child, from_child_w = os.pipe()  # chromium writes on fd 4, we read

        def arrange():  # in the child, before exec: put the pipe ends on 3 and 4
            a = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)    # out of the way first: either may be 3 or 4
            b = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        args = [self.binary, *CHROMIUM_FLAGS, *extra_flags, "--user-data-dir=" + self.profile, "about:blank"]
        self.proc = subprocess.Popen(args, preexec_fn=arrange, pass_fds=(3, 4, to_child_r, from_child_w),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     close_fds=True)
        # preexec_fn runs before the child closes the fds not in pass_fds, so 3 and 4 must be kept.
        os.close(to_child_r)
        os.close(from_child_w)
        self._next_id = 0
        self._lock = threading.Lock()
        self._cond = threading.Condition()
        self._replies = {}
        self._listeners = []   # callables(message)
        self._closed = False
        self.stderr_tail = []
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    # -- transport ----------------------------------------------------------------------------
    def _drain_stderr(self):
        for line in self.proc.stderr:
            self.stderr_tail.append(line.decode("utf-8", "replace").rstrip())
            del self.stderr_tail[:-50]

    def _read_loop(self):
        buf = b""
        while True:
            try:
                chunk = os.read(self._from_child, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                break
            buf += chunk
            while True:
                i = buf.find(b"\0")
                if i < 0:
                    break
                raw, buf = buf[:i], buf[i + 1:]
                try:
                    msg = json.loads(raw)
                except ValueError:
                    continue
                if "id" in msg:
                    with self._cond:
                        self._replies[msg["id"]] = msg
                        self._cond.notify_all()
                else:
                    for fn in list(self._listeners):
                        try:
                            fn(msg)
                        except Exception:  # a listener's bug must not kill the reader
                            pass
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def send(self, method, params=None, session_id=None, timeout=None):
        with self._lock:
            self._next_id += 1
            mid = self._next_id
            msg = {"id": mid, "method": method, "params": params or {}}
            if session_id:
                msg["sessionId"] = session_id
            data = json.dumps(msg).encode() + b"\0"
            view = memoryview(data)
            while view:
                n = os.write(self._to_child, view)
                view = view[n:]
        deadline = time.monotonic() + (timeout or self.timeout)
        with self._cond:
            while mid not in self._replies:
                left = deadline - time.monotonic()
                if self._closed:
                    raise CDPError("chromium closed the pipe during %s; stderr: %s" % (method, "\n".join(self.stderr_tail[-10:])))
                if left <= 0:
                    raise CDPError("no reply to %s within %.0f s" % (method, timeout or self.timeout))
                self._cond.wait(left)
            reply = self._replies.pop(mid)
        if "error" in reply:
            raise CDPError("%s: %s" % (method, reply["error"]))
        return reply.get("result", {})

    def listen(self, fn):
        self._listeners.append(fn)

    # -- pages --------------------------------------------------------------------------------
    def new_page(self, width=1400, height=900):
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, target, session)
        page.send("Page.enable")
        page.send("Page.bringToFront")  # a background tab gets no animation frames
        page.send("Runtime.enable")
        page.send("Log.enable")  # CSP violations and failed loads arrive as log entries
        page.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        return page

    def close(self):
        try:
            if self.proc.poll() is None:
                try:
                    self.send("Browser.close", timeout=5)
                except CDPError:
                    pass
                try:
                    self.proc.wait(5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(5)
        finally:
            for fd in (self._to_child, self._from_child):
                try:
                    os.close(fd)
                except OSError:
                    pass
            shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Page:
    """One tab. Records dialogs (alert/confirm/prompt: dismissed at once), console calls, uncaught
    exceptions, log entries (CSP violations among them) and, after record_requests(), every request URL."""

    def __init__(self, browser, target_id, session_id):
        self.browser, self.target_id, self.session_id = browser, target_id, session_id
        self.dialogs, self.console, self.exceptions, self.requests, self.log = [], [], [], [], []
        browser.listen(self._on_message)

    def _on_message(self, msg):
        if msg.get("sessionId") != self.session_id:
            return
        method, params = msg.get("method"), msg.get("params", {})
        if method == "Page.javascriptDialogOpening":
            self.dialogs.append(params.get("message"))
            threading.Thread(target=self._dismiss, daemon=True).start()
        elif method == "Runtime.consoleAPICalled":
            self.console.append((params.get("type"), [a.get("value", a.get("description")) for a in params.get("args", [])]))
        elif method == "Runtime.exceptionThrown":
            d = params.get("exceptionDetails", {})
            self.exceptions.append((d.get("exception") or {}).get("description") or d.get("text"))
        elif method == "Log.entryAdded":
            e = params.get("entry", {})
            self.log.append((e.get("level"), e.get("source"), e.get("text"), e.get("url")))
        elif method == "Network.requestWillBeSent":
            self.requests.append(params.get("request", {}).get("url"))

    def _dismiss(self):
        try:
            self.send("Page.handleJavaScriptDialog", {"accept": False}, timeout=5)
        except CDPError:
            pass

    def send(self, method, params=None, timeout=None):
        return self.browser.send(method, params, session_id=self.session_id, timeout=timeout)

    def record_requests(self):
        self.send("Network.enable")

    def navigate(self, url, timeout=30.0):
        r = self.send("Page.navigate", {"url": url}, timeout=timeout)
        if r.get("errorText"):
            raise CDPError("navigate %s: %s" % (url, r["errorText"]))
        self.wait_for("document.readyState === 'complete'", timeout=timeout)
        return r

    def evaluate(self, expression, await_promise=False, timeout=30.0):
        r = self.send("Runtime.evaluate", {"expression": expression, "awaitPromise": await_promise,
                                           "returnByValue": True, "userGesture": True}, timeout=timeout + 5)
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            raise CDPError("evaluate failed: %s" % ((d.get("exception") or {}).get("description") or d.get("text")))
        return r.get("result", {}).get("value")

    def wait_for(self, expression, timeout=30.0, interval=0.1):
        """Poll until the expression is truthy; return its value."""
        deadline = time.monotonic() + timeout
        last = None
        while True:
            try:
                last = self.evaluate(expression, timeout=timeout)
            except CDPError:
                last = None
            if last:
                return last
            if time.monotonic() > deadline:
                raise CDPError("timed out after %.0f s waiting for %s (last: %r)" % (timeout, expression, last))
            time.sleep(interval)

    def screenshot(self, path):
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(base64.b64decode(data))
        return path
