#!/usr/bin/env python3
"""CloudKit JS's sign-in flow against the Tandem sign-in page, in headless Chromium.

Run by Tests/TandemServerTests/Accounts/SignInBrowserTests.swift against a real `tandem serve`;
runnable by hand with the same arguments. Serves a static "app" page on two loopback ports
(two origins): the allowed one, and a foreign one the API token does not list. Prints one line
per check; exits 0 when all pass, 1 on the first failure, 2 when the browser cannot start.

  popup      the app page (allowed origin) opens /signin?ckAPIToken=... with window.open, the
             driver types email and password into the popup, allows the app on the consent page,
             and the app page receives exactly one message {ckSession: token} from the server's
             origin; the token is a working web auth token (users/current names the user).
  foreign    the same flow opened from the foreign origin: the popup signs in, but the page
             receives nothing, and nothing was posted with target "*".
  redirect   an API token with a callback URL: signing in navigates to the callback with
             ckWebAuthToken= appended, and that token works.
  headers    the sign-in page sends a CSP with script-src 'self' and has no inline script.
"""

import argparse
import http.server
import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import BrowserError, run_checks, CheckFailed, check, add_store_arguments, store_arguments  # noqa: E402

APP_HTML = b"""<!doctype html><html><head><meta charset="utf-8"><title>App</title>
<script src="/app.js"></script></head><body><p>A static app page.</p></body></html>"""

APP_JS = b"""window.received = [];
window.addEventListener("message", function (event) {
  window.received.push({origin: event.origin, data: event.data});
});
window.openSignIn = function (url) {
  window.popup = window.open(url, "tandem-signin", "width=480,height=640");
  return !!window.popup;
};
"""



def app_handler(html, script):
    """A static app: `script` at /app.js, `html` at every other path."""
    class AppHandler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            path = urllib.parse.urlparse(self.path).path
            body, kind = (script, "text/javascript") if path == "/app.js" else (html, "text/html")
            self.send_response(200)
            self.send_header("Content-Type", kind + "; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass
    return AppHandler


def serve_app(html=APP_HTML, script=APP_JS):
    """Serves the static app on a free loopback port; returns the server and its origin."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), app_handler(html, script))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def current_user(a, token):
    url = f"{a.server}/database/1/{a.container}/development/public/users/current"
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read()).get("userRecordName")
    except urllib.error.HTTPError as error:
        return json.loads(error.read() or b"{}").get("serverErrorCode")


def popup_session(browser, url_prefix, timeout=30):
    """Attaches to the popup whose URL starts with `url_prefix`; returns its session id."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for target in browser.call("Target.getTargets")["targetInfos"]:
            if target["type"] == "page" and target["url"].startswith(url_prefix):
                session = browser.call("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})["sessionId"]
                browser.call("Runtime.enable", session=session)
                return session
        time.sleep(0.1)
    raise BrowserError(f"no popup at {url_prefix} after {timeout}s")


def evaluate_in(browser, session, expression):
    result = browser.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}, session=session)
    if "exceptionDetails" in result:
        raise BrowserError(f"{expression!r} threw: {result['exceptionDetails']}")
    return result["result"].get("value")


def wait_in(browser, session, expression, what, timeout=30):
    deadline = time.monotonic() + timeout
    value = None
    while time.monotonic() < deadline:
        try:
            value = evaluate_in(browser, session, expression)
        except BrowserError:
            value = None  # the page is navigating
        if value:
            return value
        time.sleep(0.1)
    raise BrowserError(f"timed out waiting for {what} (last value {value!r})")


def fill_and_submit(browser, session, email, password):
    wait_in(browser, session, "!!document.getElementById('signin')", "the sign-in form")
    evaluate_in(browser, session, f"""(() => {{
        document.getElementById('email').value = {json.dumps(email)};
        document.getElementById('password').value = {json.dumps(password)};
        document.getElementById('signin').requestSubmit(); return true; }})()""")


def popup_flow(browser, a, app_origin, consent):
    """From the app page at `app_origin`, opens the sign-in popup and signs in."""
    browser.open(f"{app_origin}/")
    signin = f"{a.server}/signin?ckAPIToken={urllib.parse.quote(a.api_token, safe='')}"
    opened = browser.page("Runtime.evaluate", {"expression": f"openSignIn({json.dumps(signin)})", "returnByValue": True,
                                               "userGesture": True})["result"].get("value")
    check(opened, f"{app_origin}: window.open gave a popup")
    session = popup_session(browser, f"{a.server}/signin")
    fill_and_submit(browser, session, a.email, a.password)
    if consent:
        wait_in(browser, session, "!!document.getElementById('allow')", "the consent page")
        text = evaluate_in(browser, session, "document.getElementById('consent-text').textContent")
        check(a.container in text, "consent: the page names the app asking", text)
        evaluate_in(browser, session, "document.getElementById('allow').click(); true")
    return session


def popup(browser, a, allowed):
    popup_flow(browser, a, allowed, consent=True)
    received = browser.wait_for("window.received.length > 0 && window.received", what="the opener to receive a message")
    check(len(received) == 1, "popup: the opener received exactly one message", received)
    message = received[0]
    check(message["origin"] == a.server, "popup: the message came from the server's origin", message["origin"])
    token = (message["data"] or {}).get("ckSession")
    check(isinstance(token, str) and token.startswith("tdu_"), "popup: the message is {ckSession: <web auth token>}", message["data"])
    check(current_user(a, token) == a.user, "popup: the token is a working web auth token for the user")
    closed = browser.wait_for("window.popup.closed", what="the popup to close")
    check(closed, "popup: the popup closed itself")


def foreign(browser, a, foreign_origin):
    popup_flow(browser, a, foreign_origin, consent=False)
    # The completion page posts (to the allowed origin only) and closes itself.
    check(browser.wait_for("window.popup.closed", what="the popup to finish and close"), "foreign: the popup signed in and closed")
    time.sleep(1)
    received = browser.evaluate("window.received")
    check(received == [], "foreign: a page of an origin the API token does not allow receives nothing", received)


def redirect(browser, a):
    signin = f"{a.server}/signin?ckAPIToken={urllib.parse.quote(a.redirect_token, safe='')}"
    browser.open(signin)
    fill_and_submit(browser, browser.session, a.email, a.password)
    location = browser.wait_for("location.href.includes('ckWebAuthToken=') && location.href", what="the redirect to the callback")
    parsed = urllib.parse.urlparse(location)
    check(f"{parsed.scheme}://{parsed.netloc}{parsed.path}" == a.callback, "redirect: the browser landed on the callback URL", location)
    token = urllib.parse.parse_qs(parsed.query).get("ckWebAuthToken", [None])[0]
    check(token and current_user(a, token) == a.user, "redirect: ckWebAuthToken is a working web auth token")


def headers(a):
    url = f"{a.server}/signin?ckAPIToken={urllib.parse.quote(a.api_token, safe='')}"
    with urllib.request.urlopen(url, timeout=30) as response:
        csp = response.headers.get("Content-Security-Policy", "")
        html = response.read().decode()
    check("script-src 'self'" in csp and "frame-ancestors 'none'" in csp, "headers: CSP allows only the server's own script", csp)
    check(html.count("<script") == 1 and '<script src="/signin/signin.js"' in html, "headers: the only script is /signin/signin.js")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True)
    parser.add_argument("--container", required=True)
    parser.add_argument("--email", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--user", required=True, help="the account's userRecordName")
    parser.add_argument("--tandem", required=True, help="the tandem executable, to make the app's API tokens")
    add_store_arguments(parser)
    a = parser.parse_args()
    app_server, allowed = serve_app()
    foreign_server, foreign_origin = serve_app()
    a.callback = f"{allowed}/callback"

    def api_token(*extra):
        command = [a.tandem, "token", "create", "--api", "--container", a.container, "--origin", allowed, *store_arguments(a), *extra]
        return subprocess.run(command, check=True, capture_output=True, text=True).stdout.split()[-1]
    a.api_token = api_token()
    a.redirect_token = api_token("--sign-in-callback", a.callback)

    def checks(browser):
        headers(a)
        popup(browser, a, allowed)
        foreign(browser, a, foreign_origin)
        redirect(browser, a)

    def cleanup():
        app_server.shutdown()
        foreign_server.shutdown()

    status = run_checks(checks, "all sign-in checks passed", cleanup)
    return status


if __name__ == "__main__":
    sys.exit(main())
