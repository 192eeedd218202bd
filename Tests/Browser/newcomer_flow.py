#!/usr/bin/env python3
"""Issue 16's "done when" walk-through: two newcomers, a web app, email, a share, a passkey.

Run by Tests/TandemServerTests/Accounts/NewcomerScenarioTests.swift against a real `tandem serve`
whose email goes to a real SMTP server on loopback (aiosmtpd, Tests/Mail/smtp_sink.py, writing
each message to --mail-dir); runnable by hand with the same arguments. The app is a static page
(its script a static file) on its own loopback origin, registered with an API token that allows
that origin. It calls the API as CloudKit JS does (fetch with content-type text/plain,
ckAPIToken and ckWebAuthToken in the query) at http://localhost:PORT, so its sign-in popup is on
`localhost`, an RP ID WebAuthn accepts. Prints one line per check; exits 0 when all pass, 1 on
the first failure, 2 when the browser cannot start.

  owner    (one browser) users/caller answers 421 with a redirectURL; the app opens it as a popup;
           "Create an account" with a password; the page says to check email; the emailed link
           opens a page that creates nothing until its button is pressed; then "Sign in", the
           consent page, and the app receives {ckSession}; it creates a zone, saves a record, and
           saves a cloudkit.share for it inviting invitee@... by email.
  invite   the invitee's email holds the share URL, the title and the owner's name.
  invitee  (a second browser, nothing shared with the first) the app's popup, "Create an
           account", "Sign up with a passkey" (virtual authenticator); the emailed link confirms
           it; a new popup from the app, "Sign in with a passkey", consent, {ckSession};
           shares/invitations lists the share; records/accept (public database) accepts it; the
           shared database lists the owner's zone and returns the record; the invitation is no
           longer pending.
  owner    looking the share up again, the owner's app sees the invitee ACCEPTED.
"""

import argparse
import email
import email.policy
import json
import os
import re
import subprocess
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import Browser, BrowserError, add_store_arguments, store_arguments  # noqa: E402
from signin_flow import CheckFailed, check, evaluate_in, fill_and_submit, popup_session, serve_app, wait_in  # noqa: E402

APP_HTML = b"""<!doctype html><html><head><meta charset="utf-8"><title>Trips</title>
<script src="/app.js"></script></head><body><p>Trips, a static web app.</p></body></html>"""

# The app's requests, as CloudKit JS makes them.
APP_JS = b"""window.received = [];
window.addEventListener("message", function (event) {
  window.received.push({origin: event.origin, data: event.data});
});
window.openSignIn = function (url) {
  window.popup = window.open(url, "");
  return !!window.popup;
};
// api("database", "private/records/modify", body): POST when there is a body, else GET.
window.api = function (service, path, body) {
  var config = window.config;
  var url = config.server + "/" + service + "/1/" + config.container + "/development/" + path +
    "?ckAPIToken=" + encodeURIComponent(config.apiToken) +
    (config.session ? "&ckWebAuthToken=" + encodeURIComponent(config.session) : "");
  var init = {method: body ? "POST" : "GET", headers: {"content-type": "text/plain"}};
  if (body) init.body = JSON.stringify(body);
  return fetch(url, init).then(function (response) {
    return response.json().then(function (json) { return {status: response.status, json: json}; });
  }, function (error) { return {status: 0, error: String(error)}; });
};
"""

VERIFY_SUBJECT = "Confirm your email address"


# Mail, as the SMTP sink keeps it.

def mail_to(a, address, subject=None, timeout=20):
    """The newest message to `address` (with `subject`, when given) as an email.message, waiting for it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for name in sorted(os.listdir(a.mail_dir), reverse=True):
            if not name.endswith(".eml"):
                continue
            with open(os.path.join(a.mail_dir, name), "rb") as f:
                message = email.message_from_bytes(f.read(), policy=email.policy.default)
            if message["X-Envelope-To"] == address and (subject is None or message["Subject"] == subject):
                return message
        time.sleep(0.1)
    raise CheckFailed(f"no email to {address}{' with subject ' + repr(subject) if subject else ''} within {timeout}s")


def links(message):
    return re.findall(r"https?://\S+", message.get_body(("plain",)).get_content())


# The browser.

def app_call(browser, service, path, body=None):
    return browser.evaluate(f"api({json.dumps(service)}, {json.dumps(path)}, {json.dumps(body)})")


def open_app(browser, a):
    browser.open(f"{a.app_origin}/")
    config = {"server": a.server, "container": a.container, "apiToken": a.api_token}
    browser.evaluate(f"window.config = {json.dumps(config)}; true")


def sign_in_popup(browser, a, who):
    """What CloudKit JS's setUpAuth does: users/caller answers 421 with a redirectURL, opened as a popup."""
    first = app_call(browser, "database", "public/users/caller")
    redirect = (first.get("json") or {}).get("redirectURL", "")
    check(first.get("status") == 421 and first["json"].get("serverErrorCode") == "AUTHENTICATION_REQUIRED"
          and redirect.startswith(f"{a.server}/signin?ckAPIToken="), f"{who}: users/caller is 421 with a sign-in redirectURL", first)
    opened = browser.page("Runtime.evaluate", {"expression": f"openSignIn({json.dumps(redirect)})", "returnByValue": True,
                                               "userGesture": True})["result"].get("value")
    check(opened, f"{who}: the app opened the redirectURL in a popup")
    return popup_session(browser, f"{a.server}/signin")


def go_to_signup(browser, session, who):
    wait_in(browser, session, "!!document.getElementById('signup-link')", "the 'Create an account' link")
    evaluate_in(browser, session, "document.getElementById('signup-link').click(); true")
    title = wait_in(browser, session, "!!document.getElementById('signup') && document.querySelector('h1').textContent", "the sign-up page")
    check(title.startswith("Create an account"), f"{who}: 'Create an account' opens the sign-up page", title)


def status_text(browser, session, what):
    return wait_in(browser, session, """(document.getElementById('status') || document.getElementById('error')
        || document.getElementById('passkey-error') || {}).textContent""", what)


def confirm_email(browser, a, address, who):
    """Follows the emailed link in a new tab: its page changes nothing until the button is pressed."""
    message = mail_to(a, address, VERIFY_SUBJECT)
    link = next((url for url in links(message) if url.startswith(f"{a.server}/signin/verify?")), None)
    check(link, f"{who}: the confirmation email holds a link to {a.server}/signin/verify", links(message))
    target = browser.call("Target.createTarget", {"url": link})["targetId"]
    tab = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    browser.call("Runtime.enable", session=tab)
    title = wait_in(browser, tab, "document.readyState === 'complete' && !!document.getElementById('link-form') && document.title",
                    "the confirmation page")
    check(title == "Confirm your email", f"{who}: the link opens 'Confirm your email'", title)
    check(address not in accounts(a), f"{who}: opening the link created no account yet")
    evaluate_in(browser, tab, "document.getElementById('submit').click(); true")
    text = status_text(browser, tab, "the confirmation to finish")
    check("confirmed" in text.lower(), f"{who}: pressing the button confirms the email", text)
    check(address in accounts(a), f"{who}: now the account exists")
    browser.call("Target.closeTarget", {"targetId": target})


def accounts(a):
    return subprocess.run([a.tandem, "user", "list", *store_arguments(a)], check=True, capture_output=True, text=True).stdout


def consent_and_session(browser, session, a, address, who):
    """Allows the app on the consent page; the app receives {ckSession} and the popup closes."""
    state = wait_in(browser, session, """document.getElementById('allow') ? 'consent'
        : (document.getElementById('error') || document.getElementById('passkey-error') || {}).textContent""", "the consent page")
    check(state == "consent", f"{who}: the first sign-in to the app asks for consent", state)
    text = evaluate_in(browser, session, "document.getElementById('consent-text').textContent")
    check(a.container in text and address in text, f"{who}: the consent page names the app and the account", text)
    evaluate_in(browser, session, "document.getElementById('allow').click(); true")
    received = browser.wait_for("window.received.length > 0 && window.received", what="the app to receive a message")
    message = received[0]
    token = (message.get("data") or {}).get("ckSession")
    check(len(received) == 1 and message["origin"] == a.server and isinstance(token, str) and token.startswith("tdu_"),
          f"{who}: the app received one {{ckSession}} message from the server's origin", received)
    check(browser.wait_for("window.popup.closed", what="the popup to close"), f"{who}: the popup closed itself")
    browser.evaluate(f"window.config.session = {json.dumps(token)}; window.received = []; true")
    caller = app_call(browser, "database", "public/users/caller")
    user = (caller.get("json") or {}).get("userRecordName", "")
    check(caller.get("status") == 200 and user.startswith("_"), f"{who}: users/caller with the session names the user", caller)
    return user


def only_record(answer, what):
    records = (answer.get("json") or {}).get("records") or []
    check(answer.get("status") == 200 and len(records) == 1 and "serverErrorCode" not in records[0], what, answer)
    return records[0]


# The walk-through.

def owner(browser, a):
    who = "owner"
    open_app(browser, a)
    session = sign_in_popup(browser, a, who)
    go_to_signup(browser, session, who)
    evaluate_in(browser, session, f"""(() => {{
        document.getElementById('name').value = 'Olive Owner';
        document.getElementById('email').value = {json.dumps(a.owner)};
        document.getElementById('password').value = {json.dumps(a.password)};
        document.getElementById('signup').requestSubmit(); return true; }})()""")
    text = status_text(browser, session, "the sign-up to finish")
    check("confirm" in text.lower(), "owner: after 'Create account' the page says to confirm the email", text)
    confirm_email(browser, a, a.owner, who)

    # Back in the popup, "Sign in" on the same page.
    evaluate_in(browser, session, "document.querySelector('a[href^=\"/signin?\"]').click(); true")
    fill_and_submit(browser, session, a.owner, a.password)
    a.owner_user = consent_and_session(browser, session, a, a.owner, who)

    zone = app_call(browser, "database", "private/zones/modify",
                    {"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "Trips"}}}]})
    zones = (zone.get("json") or {}).get("zones") or [{}]
    check(zone.get("status") == 200 and zones[0].get("zoneID", {}).get("zoneName") == "Trips", "owner: the app created the zone Trips", zone)
    record = only_record(app_call(browser, "database", "private/records/modify", {"zoneID": {"zoneName": "Trips"}, "operations": [
        {"operationType": "create", "record": {"recordType": "Trip", "recordName": "lisbon",
                                               "fields": {"title": {"value": "Lisbon in May"}}}}]}),
        "owner: the app saved the record lisbon in Trips")
    check(record.get("created", {}).get("userRecordName") == a.owner_user, "owner: the record is the owner's", record)
    # As in CloudKit, a new share is saved together with its root record (here, unchanged).
    answer = app_call(browser, "database", "private/records/modify", {"zoneID": {"zoneName": "Trips"}, "operations": [
        {"operationType": "update", "record": {"recordType": "Trip", "recordName": "lisbon", "recordChangeTag": record["recordChangeTag"],
                                               "fields": {"title": {"value": "Lisbon in May"}}}},
        {"operationType": "create", "record": {
            "recordType": "cloudkit.share", "recordName": "lisbon-share", "forRecord": {"recordName": "lisbon"},
            "fields": {"cloudkit.title": {"value": "Lisbon in May"}},
            "participants": [{"userIdentity": {"lookupInfo": {"emailAddress": a.invitee}}, "permission": "READ_WRITE"}]}}]})
    saved = (answer.get("json") or {}).get("records") or []
    check(answer.get("status") == 200 and len(saved) == 2 and not any("serverErrorCode" in r for r in saved)
          and saved[1].get("recordType") == "cloudkit.share", "owner: the app saved a cloudkit.share for it inviting the invitee by email", answer)
    share = saved[1]
    a.guid = share.get("shortGUID", "")
    check(a.guid and share.get("url") == f"{a.server}/share/{a.guid}", "owner: the share has a short GUID and its URL", share)


def invitation_email(a):
    message = mail_to(a, a.invitee)
    body = message.get_body(("plain",)).get_content()
    url = f"{a.server}/share/{a.guid}"
    check(url in links(message), "invite: the invitee's email holds the share URL", body)
    check("Lisbon in May" in body + message["Subject"] and "Olive Owner" in body + message["Subject"],
          "invite: it names the title and the owner", f"{message['Subject']}\n{body}")


def invitee(browser, a):
    who = "invitee"
    open_app(browser, a)
    session = sign_in_popup(browser, a, who)
    authenticator = browser.add_virtual_authenticator(session)
    go_to_signup(browser, session, who)
    wait_in(browser, session, "document.getElementById('passkey-signup') && !document.getElementById('passkey-signup').hidden",
            "the 'Sign up with a passkey' form")
    evaluate_in(browser, session, f"""(() => {{
        document.getElementById('passkey-email').value = {json.dumps(a.invitee)};
        document.getElementById('passkey-name').value = 'Ivy Invitee';
        document.getElementById('passkey-signup').requestSubmit(); return true; }})()""")
    text = status_text(browser, session, "the passkey sign-up to finish")
    check("confirm" in text.lower(), "invitee: after 'Sign up with a passkey' the page says to confirm the email", text)
    credentials = browser.authenticator_credentials(authenticator, session)
    check(len(credentials) == 1 and credentials[0].get("rpId") == "localhost" and credentials[0].get("isResidentCredential"),
          "invitee: the authenticator made one discoverable passkey for localhost", credentials)
    browser.evaluate("window.popup.close(); true")
    confirm_email(browser, a, a.invitee, who)

    # Signing in: the app's popup again; the same phone (its passkey) signs.
    session = sign_in_popup(browser, a, who)
    authenticator = browser.add_virtual_authenticator(session)
    browser.add_authenticator_credential(authenticator, credentials[0], session)
    wait_in(browser, session, "document.getElementById('passkey-signin') && !document.getElementById('passkey-signin').hidden",
            "the 'Sign in with a passkey' button")
    evaluate_in(browser, session, "document.getElementById('passkey-signin').requestSubmit(); true")
    a.invitee_user = consent_and_session(browser, session, a, a.invitee, who)
    check(a.invitee_user != a.owner_user, "invitee: a different account from the owner's")

    def pending():
        answer = app_call(browser, "tandem", "shares/invitations", {})
        check(answer.get("status") == 200, "invitee: shares/invitations answers", answer)
        return [item for item in answer["json"].get("invitations", []) if item.get("shortGUID") == a.guid]
    listed = pending()
    check(len(listed) == 1, "invitee: shares/invitations lists the share", listed)
    item = listed[0]
    check(item.get("title") == "Lisbon in May" and item.get("shareURL") == f"{a.server}/share/{a.guid}"
          and item.get("participantStatus") == "INVITED" and item.get("participantPermission") == "READ_WRITE"
          and item.get("ownerIdentity", {}).get("userRecordName") == a.owner_user
          and "Olive Owner" in json.dumps(item["ownerIdentity"].get("nameComponents")),
          "invitee: the invitation names the title, URL, owner (by name) and permission", item)

    accepted = app_call(browser, "database", "public/records/accept", {"shortGUIDs": [{"value": a.guid}]})
    result = ((accepted.get("json") or {}).get("results") or [{}])[0]
    check(accepted.get("status") == 200 and "serverErrorCode" not in result, "invitee: records/accept accepted the share", accepted)
    zones = app_call(browser, "database", "shared/zones/list")
    ids = [z.get("zoneID", {}) for z in (zones.get("json") or {}).get("zones", [])]
    check({"zoneName": "Trips", "ownerRecordName": a.owner_user} in [{k: i.get(k) for k in ("zoneName", "ownerRecordName")} for i in ids],
          "invitee: the shared database lists the owner's zone Trips", zones)
    record = only_record(app_call(browser, "database", "shared/records/lookup", {
        "zoneID": {"zoneName": "Trips", "ownerRecordName": a.owner_user}, "records": [{"recordName": "lisbon"}]}),
        "invitee: shared/records/lookup returns the record")
    check(record.get("fields", {}).get("title", {}).get("value") == "Lisbon in May", "invitee: the record reads 'Lisbon in May'", record)
    check(pending() == [], "invitee: once accepted, the invitation is no longer pending")


def owner_sees_acceptance(browser, a):
    share = only_record(app_call(browser, "database", "private/records/lookup", {
        "zoneID": {"zoneName": "Trips"}, "records": [{"recordName": "lisbon-share"}]}), "owner: the app looks the share up again")
    people = [p for p in share.get("participants", []) if p.get("userIdentity", {}).get("lookupInfo", {}).get("emailAddress") == a.invitee]
    check(len(people) == 1 and people[0].get("acceptanceStatus") == "ACCEPTED"
          and people[0].get("userIdentity", {}).get("userRecordName") == a.invitee_user
          and "Ivy Invitee" in json.dumps(people[0]["userIdentity"].get("nameComponents")),
          "owner: the share lists the invitee by name as ACCEPTED, with their account", share.get("participants"))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True, help="http://127.0.0.1:PORT; the app uses http://localhost:PORT")
    parser.add_argument("--container", required=True)
    parser.add_argument("--tandem", required=True, help="the tandem executable, to register the app and list accounts")
    add_store_arguments(parser)
    parser.add_argument("--mail-dir", required=True, help="where the SMTP sink writes the messages it receives")
    parser.add_argument("--owner", required=True, help="the owner's email")
    parser.add_argument("--invitee", required=True, help="the invitee's email")
    a = parser.parse_args()
    a.password = "a long enough password"
    a.server = f"http://localhost:{urllib.parse.urlparse(a.server).port}"
    app_server, a.app_origin = serve_app(APP_HTML, APP_JS)
    command = [a.tandem, "token", "create", "--api", "--container", a.container, "--origin", a.app_origin, *store_arguments(a)]
    a.api_token = subprocess.run(command, check=True, capture_output=True, text=True).stdout.split()[-1]

    started = time.monotonic()
    browsers = []
    try:
        for _ in range(2):  # the owner's, and the invitee's: separate profiles, nothing shared
            browsers.append(Browser())
    except BrowserError as error:
        print(f"FAIL - chromium did not start: {error}", flush=True)
        for browser in browsers:
            browser.close()
        return 2
    print(f"ok - two chromiums started in {time.monotonic() - started:.1f}s", flush=True)
    try:
        owner(browsers[0], a)
        invitation_email(a)
        invitee(browsers[1], a)
        owner_sees_acceptance(browsers[0], a)
    except (CheckFailed, BrowserError) as error:
        print(f"FAIL - {error}", flush=True)
        return 1
    finally:
        for browser in browsers:
            browser.close()
        app_server.shutdown()
    print(f"all newcomer checks passed in {time.monotonic() - started:.1f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
