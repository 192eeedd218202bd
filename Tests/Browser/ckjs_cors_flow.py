#!/usr/bin/env python3
"""A browser app on another origin doing what CloudKit JS does, in headless Chromium.

Run by Tests/TandemServerTests/CloudKitJS/CloudKitJSBrowserTests.swift against a real
`tandem serve`; runnable by hand with the same arguments. Serves a static app page (its script is
a static file) on a loopback port, a different origin from the server, and makes an API token
that allows that origin. Prints one line per check; exits 0 when all pass, 1 on the first
failure, 2 when the browser cannot start.

From the app page, as CloudKit JS's setUpAuth() and saveRecords() do:
  1. fetch users/caller?ckAPIToken=... (content-type text/plain): the cross-origin answer is
     readable, 421 AUTHENTICATION_REQUIRED with a redirectURL;
  2. window.open(redirectURL, ""): the driver signs in with the password on the sign-in page and
     allows the app;
  3. the first message event whose data has ckSession gives the web auth token;
  4. fetch users/caller with ckAPIToken and ckWebAuthToken: userRecordName is the user's;
  5. records/modify (POST, text/plain) saves a record from the page, and the answer names it.
"""

import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import run_checks, add_store_arguments, store_arguments  # noqa: E402
from signin_flow import CheckFailed, check, evaluate_in, fill_and_submit, popup_session, serve_app, wait_in  # noqa: E402

APP_HTML = b"""<!doctype html><html><head><meta charset="utf-8"><title>CloudKit JS app</title>
<script src="/app.js"></script></head><body><p>An app on another origin.</p></body></html>"""

# What CloudKit JS does, reduced to its requests: fetch with text/plain, window.open, message.
APP_JS = b"""window.sessions = [];
window.addEventListener("message", function (event) {
  if (event.data && event.data.ckSession && window.sessions.length === 0) {
    window.sessions.push({origin: event.origin, token: event.data.ckSession});
  }
});
window.ck = function (config, path, body, webAuthToken) {
  var url = config.server + "/database/1/" + config.container + "/development/" + path +
    "?ckAPIToken=" + encodeURIComponent(config.apiToken) +
    (webAuthToken ? "&ckWebAuthToken=" + encodeURIComponent(webAuthToken) : "");
  var init = {method: body ? "POST" : "GET", headers: {"content-type": "text/plain"}};
  if (body) init.body = JSON.stringify(body);
  return fetch(url, init).then(function (response) {
    return response.json().then(function (json) { return {status: response.status, json: json}; });
  }, function (error) { return {status: 0, error: String(error)}; });
};
window.openSignIn = function (url) {
  window.popup = window.open(url, "");
  return !!window.popup;
};
"""


def flow(browser, a, origin):
    config = json.dumps({"server": a.server, "container": a.container, "apiToken": a.api_token})
    browser.open(f"{origin}/")
    first = browser.evaluate(f"ck({config}, 'public/users/caller')")
    check(first.get("status") == 421, "users/caller without a session: the page reads 421 across origins", first)
    redirect = (first.get("json") or {}).get("redirectURL", "")
    check(first["json"].get("serverErrorCode") == "AUTHENTICATION_REQUIRED" and redirect.startswith(f"{a.server}/signin?ckAPIToken="),
          "the answer carries the sign-in redirectURL", first["json"])
    opened = browser.page("Runtime.evaluate", {"expression": f"openSignIn({json.dumps(redirect)})", "returnByValue": True,
                                               "userGesture": True})["result"].get("value")
    check(opened, "window.open(redirectURL, '') gave a popup")
    session = popup_session(browser, f"{a.server}/signin")
    fill_and_submit(browser, session, a.email, a.password)
    wait_in(browser, session, "!!document.getElementById('allow')", "the consent page")
    evaluate_in(browser, session, "document.getElementById('allow').click(); true")
    received = browser.wait_for("window.sessions.length > 0 && window.sessions[0]", what="a message with ckSession")
    check(received["origin"] == a.server and received["token"].startswith("tdu_"), "the first ckSession message holds a web auth token",
          received)
    token = json.dumps(received["token"])
    caller = browser.evaluate(f"ck({config}, 'public/users/caller', null, {token})")
    check(caller.get("status") == 200 and caller["json"].get("userRecordName") == a.user,
          "users/caller with ckAPIToken and ckWebAuthToken names the signed-in user", caller)
    name = f"from-the-browser-{int(time.time() * 1000)}"
    body = json.dumps({"operations": [{"operationType": "create", "record": {
        "recordName": name, "recordType": "Note", "fields": {"title": {"value": "saved from another origin"}}}}]})
    saved = browser.evaluate(f"ck({config}, 'private/records/modify', {body}, {token})")
    record = ((saved.get("json") or {}).get("records") or [{}])[0]
    check(saved.get("status") == 200 and record.get("recordName") == name and "recordChangeTag" in record,
          "records/modify (text/plain POST) from the page saved the record", saved)
    check(record.get("created", {}).get("userRecordName") == a.user, "the record was created by the signed-in user", record)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True)
    parser.add_argument("--container", required=True)
    parser.add_argument("--email", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--user", required=True, help="the account's userRecordName")
    parser.add_argument("--tandem", required=True, help="the tandem executable, to make the app's API token")
    add_store_arguments(parser)
    a = parser.parse_args()
    app_server, origin = serve_app(APP_HTML, APP_JS)
    command = [a.tandem, "token", "create", "--api", "--container", a.container, "--origin", origin, *store_arguments(a)]
    a.api_token = subprocess.run(command, check=True, capture_output=True, text=True).stdout.split()[-1]

    def checks(browser):
        flow(browser, a, origin)

    def cleanup():
        app_server.shutdown()

    status = run_checks(checks, "all CloudKit JS browser checks passed", cleanup)
    return status


if __name__ == "__main__":
    sys.exit(main())
