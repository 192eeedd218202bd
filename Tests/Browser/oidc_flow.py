#!/usr/bin/env python3
"""CloudKit JS's sign-in flow through an OpenID Connect provider, in headless Chromium.

Run by Tests/TandemServerTests/Accounts/OIDCSignInTests.swift against a real `tandem serve`
configured with `--oidc-provider CONTAINER,Mock,ISSUER,...` for the loopback provider of
Tests/OIDC/oidc_provider.py. Prints one line per check; exits 0 when all pass, 1 on the first
failure, 2 when the browser cannot start.

  first      the app page opens /signin?ckAPIToken=... in a popup; the driver clicks "Sign in
             with Mock", the provider's own authorization page appears, the driver types the
             subject and authorizes; back on Tandem (code redeemed with PKCE, ID token
             verified) the consent page names the app; after Allow the app page receives
             exactly one {ckSession} from the server's origin, and the token reads users/current.
  again      the same subject signs in a second time: no consent page, the same account.
"""

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import run_checks, add_store_arguments, store_arguments  # noqa: E402
from signin_flow import CheckFailed, check, current_user, evaluate_in, popup_session, serve_app, wait_in  # noqa: E402


def provider_sign_in(browser, a, app_origin, expect_consent):
    browser.open(f"{app_origin}/")
    signin = f"{a.server}/signin?ckAPIToken={urllib.parse.quote(a.api_token, safe='')}"
    opened = browser.page("Runtime.evaluate", {"expression": f"window.received = []; openSignIn({json.dumps(signin)})",
                                               "returnByValue": True, "userGesture": True})["result"].get("value")
    check(opened, "window.open gave a popup")
    session = popup_session(browser, f"{a.server}/signin")
    text = wait_in(browser, session, "document.getElementById('oidc-0') && document.getElementById('oidc-0').textContent", "the provider button")
    check(text == "Sign in with Mock", "the sign-in page offers the provider", text)
    evaluate_in(browser, session, "document.getElementById('oidc-0').click(); true")
    wait_in(browser, session, "!!document.querySelector('input[name=sub]')", "the provider's authorization page")
    where = evaluate_in(browser, session, "location.href")
    parsed = urllib.parse.parse_qs(urllib.parse.urlparse(where).query)
    check(parsed.get("code_challenge_method") == ["S256"] and len(parsed.get("code_challenge", [""])[0]) == 43
          and parsed.get("nonce") and parsed.get("state"), "the authorization request carries PKCE S256, nonce and state", where)
    evaluate_in(browser, session, f"""(() => {{
        const input = document.querySelector('input[name=sub]');
        input.value = {json.dumps(a.sub)}; input.form.requestSubmit(); return true; }})()""")
    if expect_consent:
        wait_in(browser, session, "!!document.getElementById('allow')", "the consent page")
        consent = evaluate_in(browser, session, "document.getElementById('consent-text').textContent")
        check(a.container in consent, "consent: the page names the app asking", consent)
        evaluate_in(browser, session, "document.getElementById('allow').click(); true")
    received = browser.wait_for("window.received.length > 0 && window.received", what="the opener to receive a message")
    check(len(received) == 1, "the opener received exactly one message", received)
    check(received[0]["origin"] == a.server, "the message came from the server's origin", received[0]["origin"])
    token = (received[0]["data"] or {}).get("ckSession")
    check(isinstance(token, str) and token.startswith("tdu_"), "the message is {ckSession: <web auth token>}", received[0]["data"])
    user = current_user(a, token)
    check(isinstance(user, str) and user.startswith("_"), "the token reads users/current", user)
    check(browser.wait_for("window.popup.closed", what="the popup to close"), "the popup closed itself")
    return user


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True)
    parser.add_argument("--container", required=True)
    parser.add_argument("--sub", required=True, help="the subject to sign in as at the provider")
    parser.add_argument("--tandem", required=True, help="the tandem executable, to make the app's API token")
    add_store_arguments(parser)
    a = parser.parse_args()
    app_server, allowed = serve_app()
    command = [a.tandem, "token", "create", "--api", "--container", a.container, "--origin", allowed, *store_arguments(a)]
    a.api_token = subprocess.run(command, check=True, capture_output=True, text=True).stdout.split()[-1]
    def checks(browser):
        first = provider_sign_in(browser, a, allowed, expect_consent=True)
        again = provider_sign_in(browser, a, allowed, expect_consent=False)
        check(again == first, "again: the same subject signs in to the same account", (first, again))

    def cleanup():
        app_server.shutdown()

    status = run_checks(checks, "all OpenID Connect sign-in checks passed", cleanup)
    return status


if __name__ == "__main__":
    sys.exit(main())
