#!/usr/bin/env python3
"""Passkeys on the Tandem sign-in page, in headless Chromium with its virtual authenticator.

Run by Tests/TandemServerTests/Accounts/PasskeyBrowserTests.swift against a real `tandem serve`;
runnable by hand with the same arguments. WebAuthn needs a secure context and an RP ID that is a
domain, so the popup opens the server at http://localhost:PORT (Chromium treats localhost as
potentially trustworthy; the server's RP ID is then `localhost`), while the app page is served
from http://127.0.0.1:APP_PORT, the API token's allowed origin. Each popup is a new page, so it
gets its own virtual authenticator (CTAP2, internal transport, resident keys, user verification);
the credential made at sign-up is carried into the later ones, as one phone would keep it.
Prints one line per check; exits 0 when all pass, 1 on the first failure, 2 when the browser
cannot start.

  signup     the app page opens /signin in a popup, the popup goes to "Create an account", the
             driver fills "Sign up with a passkey" (email and name) and the authenticator makes a
             discoverable credential; the page says to check email and no account exists yet (A28).
  verify     the operator verifies the email (`tandem user verify`): the account now exists.
  signin     a new popup, "Sign in with a passkey": the authenticator signs, the consent page names
             the app, Allow posts exactly one {ckSession} to the app page from the server's origin,
             and users/current with that token names the account.
  again      sign out (the token stops working), then sign in with the passkey again: no consent
             step this time, and the new {ckSession} works.
"""

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import run_checks, add_store_arguments, store_arguments  # noqa: E402
from signin_flow import CheckFailed, check, current_user, evaluate_in, popup_session, serve_app, wait_in  # noqa: E402


def open_popup(browser, a, path):
    url = f"{a.local_server}{path}?ckAPIToken={urllib.parse.quote(a.api_token, safe='')}"
    opened = browser.page("Runtime.evaluate", {"expression": f"openSignIn({json.dumps(url)})", "returnByValue": True,
                                               "userGesture": True})["result"].get("value")
    check(opened, f"window.open gave a popup at {path}")
    session = popup_session(browser, f"{a.local_server}{path}")
    authenticator = browser.add_virtual_authenticator(session)
    return session, authenticator


def signup(browser, a):
    browser.open(f"{a.app_origin}/")
    session, authenticator = open_popup(browser, a, "/signin/signup")
    wait_in(browser, session, "document.getElementById('passkey-signup') && !document.getElementById('passkey-signup').hidden",
            "the 'Sign up with a passkey' form (shown when the browser has WebAuthn)")
    evaluate_in(browser, session, f"""(() => {{
        document.getElementById('passkey-email').value = {json.dumps(a.email)};
        document.getElementById('passkey-name').value = 'Passkey Person';
        document.getElementById('passkey-signup').requestSubmit(); return true; }})()""")
    status = wait_in(browser, session, """(document.getElementById('status') && document.getElementById('status').textContent)
        || (document.getElementById('passkey-error') && document.getElementById('passkey-error').textContent)
        || (document.getElementById('error') && document.getElementById('error').textContent)""", "the sign-up to finish")
    check("check" in status.lower() or "confirm" in status.lower(), "signup: the page says to confirm the email", status)
    credentials = browser.authenticator_credentials(authenticator, session)
    check(len(credentials) == 1 and credentials[0].get("isResidentCredential") and credentials[0].get("rpId") == "localhost",
          "signup: the authenticator holds one discoverable credential for RP ID localhost", credentials)
    users = subprocess.run([a.tandem, "user", "list", *store_arguments(a)], check=True, capture_output=True, text=True).stdout
    check(a.email not in users, "signup: no account exists before the email is confirmed")
    browser.evaluate("window.popup.close(); true")
    return credentials[0]


def verify(a):
    line = subprocess.run([a.tandem, "user", "verify", a.email, *store_arguments(a)], check=True, capture_output=True, text=True).stdout
    user = line.split("\t")[0].strip()
    check(user.startswith("_"), "verify: the operator's verification created the account", line)
    return user


def passkey_signin(browser, a, credential, consent):
    browser.open(f"{a.app_origin}/")
    session, authenticator = open_popup(browser, a, "/signin")
    browser.add_authenticator_credential(authenticator, credential, session)
    wait_in(browser, session, "document.getElementById('passkey-signin') && !document.getElementById('passkey-signin').hidden",
            "the 'Sign in with a passkey' button")
    evaluate_in(browser, session, "document.getElementById('passkey-signin').requestSubmit(); true")
    if consent:
        state = wait_in(browser, session, """document.getElementById('allow') ? 'consent'
            : (document.getElementById('error') || document.getElementById('passkey-error') || {}).textContent""", "the consent page")
        check(state == "consent", "signin: a first passkey sign-in asks for consent", state)
        text = evaluate_in(browser, session, "document.getElementById('consent-text').textContent")
        check(a.container in text and a.email in text, "signin: the consent page names the app and the account", text)
        evaluate_in(browser, session, "document.getElementById('allow').click(); true")
    received = browser.wait_for("window.received.length > 0 && window.received", what="the opener to receive a message")
    check(len(received) == 1, "signin: the app page received exactly one message", received)
    message = received[0]
    check(message["origin"] == a.local_server, "signin: the message came from the server's origin", message["origin"])
    token = (message["data"] or {}).get("ckSession")
    check(isinstance(token, str) and token.startswith("tdu_"), "signin: the message is {ckSession: <web auth token>}", message["data"])
    check(current_user(a, token) == a.user, "signin: users/current with the token names the passkey's account")
    check(browser.wait_for("window.popup.closed", what="the popup to close"), "signin: the popup closed itself")
    return token


def sign_out(a, token):
    request = urllib.request.Request(f"{a.server}/auth/1/{a.container}/signout", data=b"{}", method="POST",
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        check(response.status == 200, "again: signed out")
    check(current_user(a, token) != a.user, "again: the signed-out token no longer works")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True, help="http://127.0.0.1:PORT; the popup uses http://localhost:PORT")
    parser.add_argument("--container", required=True)
    parser.add_argument("--email", required=True)
    parser.add_argument("--tandem", required=True, help="the tandem executable, to make the app's API token and verify the email")
    add_store_arguments(parser)
    a = parser.parse_args()
    parsed = urllib.parse.urlparse(a.server)
    a.local_server = f"{parsed.scheme}://localhost:{parsed.port}"
    app_server, a.app_origin = serve_app()
    command = [a.tandem, "token", "create", "--api", "--container", a.container, "--origin", a.app_origin, *store_arguments(a)]
    a.api_token = subprocess.run(command, check=True, capture_output=True, text=True).stdout.split()[-1]

    def checks(browser):
        credential = signup(browser, a)
        a.user = verify(a)
        token = passkey_signin(browser, a, credential, consent=True)
        sign_out(a, token)
        # The same authenticator, its counter moved on past the first sign-in's.
        credential = dict(credential, signCount=credential.get("signCount", 0) + 10)
        again = passkey_signin(browser, a, credential, consent=False)
        check(again != token, "again: a new web auth token was issued")

    def cleanup():
        app_server.shutdown()

    status = run_checks(checks, "all passkey checks passed", cleanup)
    return status


if __name__ == "__main__":
    sys.exit(main())
