"""A headless Chromium driven over the Chrome DevTools Protocol, with the standard library only.

Chromium is started with `--remote-debugging-port=0`, so it picks a free port and writes it to
`DevToolsActivePort` in its profile directory; we speak to the browser endpoint over a minimal
WebSocket client (RFC 6455: masked client frames, no extensions) and drive one page through a
flattened target session.
"""

import base64
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time


class BrowserError(Exception):
    pass


class WebSocket:
    """Just enough of RFC 6455 for CDP: text frames out, text/continuation/ping/close in."""

    def __init__(self, host, port, path, timeout=30):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                   f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
        self.sock.sendall(request.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise BrowserError("DevTools closed the connection during the WebSocket handshake")
            head += chunk
        if not head.startswith(b"HTTP/1.1 101"):
            raise BrowserError("WebSocket handshake refused: " + head.decode(errors="replace"))

    def send(self, text):
        payload = text.encode()
        header = bytes([0x81])  # FIN + text
        n = len(payload)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 1 << 16:
            header += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def _exactly(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise BrowserError("DevTools connection closed")
            data += chunk
        return data

    def receive(self):
        message = b""
        while True:
            first, second = self._exactly(2)
            opcode, n = first & 0x0F, second & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._exactly(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._exactly(8))[0]
            mask = self._exactly(4) if second & 0x80 else None
            payload = self._exactly(n)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if opcode == 0x8:
                raise BrowserError("DevTools closed the WebSocket")
            if opcode == 0x9:  # ping: answer with a masked pong
                mask = os.urandom(4)
                self.sock.sendall(bytes([0x8A, 0x80 | len(payload)]) + mask
                                  + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
                continue
            if opcode in (0x0, 0x1, 0x2):
                message += payload
                if first & 0x80:
                    return message.decode()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class Browser:
    """One headless Chromium with one page (tab) attached through a flattened session."""

    def __init__(self, executable=None, width=1000, height=900):
        executable = executable or os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
        if not executable:
            raise BrowserError("chromium not found (scripts/bootstrap --test installs it)")
        self.profile = tempfile.mkdtemp(prefix="tandem-chromium-")
        arguments = [executable, "--headless=new", "--remote-debugging-port=0", f"--user-data-dir={self.profile}",
                     "--no-first-run", "--no-default-browser-check", "--disable-gpu", "--disable-dev-shm-usage",
                     "--disable-extensions", "--disable-background-networking", "--disable-sync",
                     f"--window-size={width},{height}", "about:blank"]
        if os.geteuid() == 0:
            arguments.insert(1, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
        self.log = open(os.path.join(self.profile, "chromium.log"), "w+")
        # Its own process group, so stopping it also stops its renderer and GPU processes.
        self.process = subprocess.Popen(arguments, stdout=self.log, stderr=self.log, start_new_session=True)
        self.events = []
        self.next_id = 0
        # What to type into the page's next prompt(); None dismisses dialogs. Each dialog's message is kept.
        self.prompt_answer = None
        self.dialogs = []
        self.socket = None
        try:
            port, path = self._devtools_address()
            self.socket = WebSocket("127.0.0.1", port, path)
            target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Page", "Runtime", "Log"):
                self.page(f"{domain}.enable")
        except BaseException:
            self.close()
            raise

    def _devtools_address(self, timeout=60):
        file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise BrowserError(f"chromium exited {self.process.returncode}: {self._log_tail()}")
            try:
                with open(file) as f:
                    lines = f.read().split("\n")
                if len(lines) >= 2 and lines[0].strip() and lines[1].strip():
                    return int(lines[0]), lines[1].strip()
            except FileNotFoundError:
                pass
            time.sleep(0.05)
        raise BrowserError(f"no DevToolsActivePort after {timeout}s: {self._log_tail()}")

    def _log_tail(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()[-2000:]

    def call(self, method, params=None, session=None, timeout=30):
        """Sends one command; returns its result, keeping events that arrive meanwhile."""
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self.socket.send(json.dumps(message))
        self.socket.sock.settimeout(timeout)
        while True:
            reply = json.loads(self.socket.receive())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if reply.get("method") == "Page.javascriptDialogOpening":
                self._answer_dialog(reply)
            elif "method" in reply:
                self.events.append(reply)

    def _answer_dialog(self, event):
        """A dialog blocks the page (and commands waiting on it) until answered, so answer now."""
        self.dialogs.append(event["params"].get("message"))
        params = {"accept": self.prompt_answer is not None}
        if self.prompt_answer is not None:
            params["promptText"] = self.prompt_answer
            self.prompt_answer = None
        # Its reply carries an id no caller waits for, so the loop above drops it.
        self.socket.send(json.dumps({"id": 1_000_000 + len(self.dialogs), "method": "Page.handleJavaScriptDialog",
                                     "params": params, "sessionId": event.get("sessionId")}))

    def page(self, method, params=None, timeout=30):
        return self.call(method, params, session=self.session, timeout=timeout)

    # WebAuthn domain: virtual authenticators, per page (target).

    def add_virtual_authenticator(self, session=None):
        """A platform passkey authenticator in the page of `session` (default: the main page): CTAP2 over
        the internal transport, with resident (discoverable) keys and user verification that succeeds,
        and presence simulated (no prompt). Returns its authenticatorId."""
        session = session or self.session
        self.call("WebAuthn.enable", {"enableUI": False}, session=session)
        options = {"protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
                   "isUserVerified": True, "automaticPresenceSimulation": True}
        return self.call("WebAuthn.addVirtualAuthenticator", {"options": options}, session=session)["authenticatorId"]

    def authenticator_credentials(self, authenticator, session=None):
        """The credentials the virtual authenticator holds (credentialId, rpId, privateKey, userHandle, signCount, ...)."""
        return self.call("WebAuthn.getCredentials", {"authenticatorId": authenticator}, session=session or self.session)["credentials"]

    def add_authenticator_credential(self, authenticator, credential, session=None):
        """Puts a credential (as `authenticator_credentials` returned it) into a virtual authenticator."""
        self.call("WebAuthn.addCredential", {"authenticatorId": authenticator, "credential": credential}, session=session or self.session)

    # What Chromium answers when a navigation replaced the page while (or before) an expression ran.
    NAVIGATED = ("Inspected target navigated or closed", "Execution context was destroyed", "Cannot find context with specified id")

    def evaluate(self, expression):
        """The value of a JavaScript expression in the page (promises awaited). An expression that
        a navigation cut short (a form's submit landing, a redirect) runs again in the new page,
        for up to 5 s: the flow waits for that page anyway, and the answer came from none."""
        deadline = time.monotonic() + 5
        while True:
            try:
                result = self.page("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
                break
            except BrowserError as error:
                if time.monotonic() > deadline or not any(text in str(error) for text in self.NAVIGATED):
                    raise
                time.sleep(0.1)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise BrowserError(f"{expression!r} threw: {details.get('exception', {}).get('description') or details.get('text')}")
        return result["result"].get("value")

    def wait_for(self, expression, timeout=30, what=None):
        """Polls until `expression` is truthy; returns its value."""
        deadline = time.monotonic() + timeout
        value = None
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.1)
        raise BrowserError(f"timed out after {timeout}s waiting for {what or expression} (last value {value!r})")

    def open(self, url):
        """Navigates and waits for the load event (images included)."""
        self.events.clear()
        result = self.page("Page.navigate", {"url": url})
        if result.get("errorText"):
            raise BrowserError(f"navigating to {url}: {result['errorText']}")
        self.wait_for(f"location.href === {json.dumps(url)} && document.readyState === 'complete'", what=f"{url} to load")

    def click(self, selector):
        """A real mouse click (pressed and released) at the centre of the element."""
        box = self.evaluate(f"""(() => {{ const e = document.querySelector({json.dumps(selector)});
            if (!e) return null; e.scrollIntoView({{block: "center"}}); const r = e.getBoundingClientRect();
            return {{x: r.left + r.width / 2, y: r.top + r.height / 2, w: r.width, h: r.height}}; }})()""")
        if not box or box["w"] == 0 or box["h"] == 0:
            raise BrowserError(f"{selector} is not on the page or not visible")
        for kind in ("mousePressed", "mouseReleased"):
            self.page("Input.dispatchMouseEvent", {"type": kind, "x": box["x"], "y": box["y"], "button": "left", "clickCount": 1})

    def screenshot(self, path):
        data = self.page("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def exceptions(self):
        """Uncaught page exceptions, console errors and failed loads since the last `open`."""
        found = []
        for event in self.events:
            if event.get("method") == "Runtime.exceptionThrown":
                details = event["params"]["exceptionDetails"]
                found.append(details.get("exception", {}).get("description") or details.get("text"))
            elif event.get("method") == "Runtime.consoleAPICalled" and event["params"].get("type") == "error":
                found.append(" ".join(str(a.get("value", a.get("description"))) for a in event["params"].get("args", [])))
            elif event.get("method") == "Log.entryAdded" and event["params"]["entry"].get("level") == "error":
                entry = event["params"]["entry"]
                if not entry.get("url", "").endswith("/favicon.ico"):  # browsers ask for one; the server has none
                    found.append(f"{entry.get('text')} {entry.get('url', '')}".strip())
        return found

    def close(self):
        if self.socket:
            self.socket.close()
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.process.wait()
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def add_store_arguments(parser):
    """Adds `--data DIR` (required) and `--store URL` (optional: the PostgreSQL database the Swift
    tests name under TANDEM_TEST_STORE=postgres, decision P38) for the `tandem` commands a driver runs."""
    parser.add_argument("--data", required=True, help="the server's data directory")
    parser.add_argument("--store", help="the server's store when it is not the data directory's SQLite")


def store_arguments(a):
    """The `--data` (and `--store`) arguments of `add_store_arguments`, for a `tandem` command line."""
    return ["--data", a.data] + (["--store", a.store] if a.store else [])


class CheckFailed(Exception):
    """A browser test's check failed; its message names the check and what was seen."""


def check(condition, what, detail=""):
    """Prints `ok - what`, or raises `CheckFailed` naming `what` and `detail`."""
    if not condition:
        raise CheckFailed(f"{what}{': ' + str(detail) if detail != '' else ''}")
    print(f"ok - {what}", flush=True)


def run_checks(checks, passed, cleanup=None):
    """Starts headless Chromium, runs `checks(browser)` and prints the verdict. Returns the exit
    status the Swift tests read: 0 when every check passed (`passed` is printed), 1 when one
    failed, 2 when Chromium did not start. `cleanup` runs whatever happened."""
    started = time.monotonic()
    try:
        try:
            browser = Browser()
        except BrowserError as error:
            print(f"FAIL - chromium did not start: {error}", flush=True)
            return 2
        print(f"ok - chromium started in {time.monotonic() - started:.1f}s", flush=True)
        try:
            with browser:
                checks(browser)
        except (CheckFailed, BrowserError) as error:
            print(f"FAIL - {error}", flush=True)
            return 1
    finally:
        if cleanup:
            cleanup()
    print(passed, flush=True)
    return 0
