#!/usr/bin/env python3
"""The share page (issue 18: `/share/{shortGUID}` as UICloudSharingController's page) in headless
Chromium, driven over the DevTools protocol.

Run by Tests/TandemServerTests/Sharing/SharePageBrowserTests.swift against a real `tandem serve`
with two accounts that have passwords and a private share of the owner's; runnable by hand with
the same arguments. Forms are filled and sent with the keyboard only (Tab, typing, arrow keys,
Space, Enter), reusing console_flow.py's helpers. Prints one line per check; exits 0 when all
pass, 1 on the first failure, 2 when the browser cannot start.

  desktop  a public share's page signed out: title, og:title, og:image, the thumbnail loaded, a
           Sign in link. The private share's page signed out names nothing; its Sign in link leads
           to the sign-in page and back, signed in as the owner (the session in an HttpOnly
           cookie: no script sees it, nothing in localStorage, no token in the URL). The owner's
           page lists people; an address the server refuses is shown beside the field and
           nobody is invited; a good one is invited and listed. Copy link says it copied. Sign
           out. The invitee signs in from the page and accepts with the keyboard.
  phone    at 390 px wide (mobile emulation): the invitee's page fits and they sign out; the
           owner signs in again; the management page fits (the people table becomes rows); the
           invitee's permission is changed; Stop sharing without its box ticked is refused
           beside the box, ticked it stops the share.
  console  still at 390 px: a server administrator signs in to the console, opens another share
           of the owner's from the console's share list, reads that they act for the owner, and
           invites someone with the keyboard; the page fits.

No script errors or CSP violations anywhere. Screenshots (PNG) go to --screenshots.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import check, run_checks  # noqa: E402
from console_flow import KEYS, facts, fill, go, press, tab_to, type_text, wait_path  # noqa: E402

KEYS.setdefault("ArrowDown", ("ArrowDown", 40, None))
KEYS.setdefault(" ", ("Space", 32, " "))


# The people table's rows, each as its cells' text.
ROWS = "[...document.querySelectorAll('#participants tbody tr')].map(r => [...r.cells].map(c => c.innerText.trim()))"


def expected_refusal(browser, action):
    """Chromium logs the refused form's answer (status 400) as a failed load: anything else is an error."""
    others = [e for e in browser.exceptions() if not ("status of 400" in e and e.endswith("/" + action))]
    check(not others, f"{action}: the refusal is the only failed load, no script errors", others)
    browser.events.clear()


def page_facts(browser):
    return browser.evaluate("""(() => {
      const meta = p => (document.querySelector(`meta[property="${p}"]`) || {}).content || null;
      const img = document.querySelector("img.thumb");
      const text = id => (document.getElementById(id) || {}).textContent || null;
      return {h1: (document.querySelector('h1') || {}).textContent, text: document.body.innerText,
              ogTitle: meta("og:title"), ogImage: meta("og:image"),
              image: img ? {complete: img.complete, naturalWidth: img.naturalWidth} : null,
              signin: !!document.getElementById("signin"), notice: text("notice"), cookie: document.cookie,
              storage: localStorage.length, query: location.search,
              overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth};
    })()""")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True, help="http://127.0.0.1:PORT")
    parser.add_argument("--public", required=True, help="shortGUID of a READ_ONLY share with a thumbnail")
    parser.add_argument("--public-title", required=True)
    parser.add_argument("--share", required=True, help="shortGUID of the owner's private share")
    parser.add_argument("--title", required=True, help="the private share's cloudkit.title")
    parser.add_argument("--owner-email", required=True)
    parser.add_argument("--owner-password", required=True)
    parser.add_argument("--invitee-email", required=True)
    parser.add_argument("--invitee-password", required=True)
    parser.add_argument("--admin-email", required=True, help="a server administrator (tandem admin add)")
    parser.add_argument("--admin-password", required=True)
    parser.add_argument("--container", required=True)
    parser.add_argument("--console-share", required=True, help="shortGUID of another private share of the owner's")
    parser.add_argument("--screenshots", required=True, help="directory for the screenshots")
    a = parser.parse_args()
    os.makedirs(a.screenshots, exist_ok=True)
    page_path = "/share/" + a.share

    def shot(browser, name):
        browser.screenshot(os.path.join(a.screenshots, name + ".png"))

    def sign_in(browser, email, password, who):
        """From the signed-out share page: Sign in (keyboard), the sign-in form, and back."""
        tab_to(browser, "signin")
        press(browser, "Enter")
        wait_path(browser, "/signin", f"{who}: the sign-in page")
        fill(browser, [("email", email), ("password", password)], "submit")
        wait_path(browser, page_path, f"{who}: back on the share page")
        page = page_facts(browser)
        check(page["h1"] == a.title and not page["signin"], f"{who}: signed in, the page shows the share", page["h1"])
        check(page["query"] == "" and page["cookie"] == "" and page["storage"] == 0,
              f"{who}: no token in the URL, in a script-readable cookie or in localStorage", page)
        return page

    def sign_out(browser, who):
        tab_to(browser, "signout-submit")
        press(browser, "Enter")
        browser.wait_for("!!document.getElementById('signin')", what=f"{who}: the signed-out page")
        check(page_facts(browser)["notice"] == "You signed out.", f"{who}: signed out")

    def desktop(browser):
        browser.page("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False})
        browser.call("Browser.grantPermissions", {"origin": a.server, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]})
        public_url = f"{a.server}/share/{a.public}"
        browser.open(public_url)
        page = page_facts(browser)
        check(page["h1"] == a.public_title and page["ogTitle"] == a.public_title, "public, signed out: title and og:title", page)
        check(page["ogImage"] == public_url + "/thumbnail", "public: og:image is the thumbnail", page["ogImage"])
        check(page["image"] and page["image"]["complete"] and page["image"]["naturalWidth"] > 0, "public: the thumbnail loaded", page["image"])
        check(page["signin"], "public, signed out: a Sign in link")
        shot(browser, "public-signed-out-desktop")

        browser.open(a.server + page_path)
        page = page_facts(browser)
        check(a.title not in page["text"] and page["h1"] == "Shared item", "private, signed out: the page names nothing", page["text"])
        sign_in(browser, a.owner_email, a.owner_password, "owner")
        check(browser.evaluate("!!document.getElementById('participants') && !!document.getElementById('public-link')"),
              "owner: the management page (people, public link)")

        fill(browser, [("field-email", "someone@localhost")], "invite-submit")
        browser.wait_for("!!document.getElementById('field-email-error')", what="the refused address's message")
        error = browser.evaluate("""(() => { const f = document.getElementById('field-email');
            return {message: document.getElementById('field-email-error').textContent, invalid: f.getAttribute('aria-invalid'),
                    described: f.getAttribute('aria-describedby'), value: f.value}; })()""")
        check("email address" in error["message"] and error["invalid"] == "true" and "field-email-error" in error["described"],
              "invite: a refused address is explained beside its field", error)
        check(error["value"] == "someone@localhost", "invite: the typed address is kept", error["value"])
        rows = browser.evaluate(ROWS)
        check(len(rows) == 1 and "Nobody yet" in rows[0][0], "invite: nobody was invited", rows)
        shot(browser, "invite-error-desktop")
        expected_refusal(browser, "invite")
        browser.evaluate("document.getElementById('field-email').value = ''")
        fill(browser, [("field-email", a.invitee_email)], "invite-submit")
        browser.wait_for("(document.getElementById('notice') || {}).textContent === 'Invitation sent.'", what="the invitation")
        rows = browser.evaluate(ROWS)
        check(len(rows) == 1 and a.invitee_email in rows[0][0].lower() and rows[0][3] == "Invited", "invite: the invitee is listed as invited", rows)

        tab_to(browser, "copy-link")
        press(browser, "Enter")
        status = browser.wait_for("document.getElementById('copy-status').textContent", what="the copy status")
        check(status == "Link copied.", "copy link: the page says it copied", status)
        copied = browser.evaluate("navigator.clipboard.readText().catch(e => 'could not read: ' + e.message)")
        check(copied == a.server + page_path, "copy link: the clipboard holds the share URL", copied)
        shot(browser, "owner-desktop")
        check(not browser.exceptions(), "owner: no script errors or CSP violations", browser.exceptions())
        sign_out(browser, "owner")

        sign_in(browser, a.invitee_email, a.invitee_password, "invitee")
        check(browser.evaluate("!!document.getElementById('accept') && !!document.getElementById('decline')"), "invitee: Accept and Decline")
        shot(browser, "invitee-desktop")
        tab_to(browser, "accept-submit")
        press(browser, "Enter")
        browser.wait_for("(document.getElementById('notice') || {}).textContent === 'Accepted. Open the app to see it.'", what="acceptance")
        check(browser.evaluate("!!document.getElementById('leave')"), "invitee: accepted, the page offers Leave")
        check(not browser.exceptions(), "invitee: no script errors or CSP violations", browser.exceptions())

    def phone(browser):
        browser.page("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True})
        browser.open(a.server + page_path)
        check(page_facts(browser)["overflow"] <= 0, "phone: the participant's page fits 390 px", page_facts(browser)["overflow"])
        shot(browser, "participant-phone")
        sign_out(browser, "invitee")
        sign_in(browser, a.owner_email, a.owner_password, "owner (phone)")
        page = page_facts(browser)
        check(page["overflow"] <= 0, "phone: the management page fits 390 px without sideways scrolling", page["overflow"])
        check(facts(browser)["labelled"], "phone: every field has a label")
        shot(browser, "owner-phone")

        tab_to(browser, "field-p-0-permission")
        press(browser, "ArrowDown")
        tab_to(browser, "p-0-submit")
        press(browser, "Enter")
        browser.wait_for("(document.getElementById('notice') || {}).textContent === 'Changed.'", what="the permission change")
        rows = browser.evaluate(ROWS)
        check(len(rows) == 1 and rows[0][2] == "Can make changes" and rows[0][3] == "Accepted", "phone: the invitee can now make changes", rows)

        tab_to(browser, "stop-submit")
        press(browser, "Enter")
        browser.wait_for("!!document.getElementById('field-confirm-error')", what="the unconfirmed stop's message")
        check(browser.evaluate("document.activeElement !== null") and page_facts(browser)["h1"] == a.title,
              "phone: Stop sharing without the box is refused beside it, the share stays")
        shot(browser, "stop-refused-phone")
        expected_refusal(browser, "stop")
        tab_to(browser, "field-confirm")
        press(browser, " ")
        check(browser.evaluate("document.getElementById('field-confirm').checked"), "phone: Space ticks the box")
        tab_to(browser, "stop-submit")
        press(browser, "Enter")
        browser.wait_for("(document.getElementById('notice') || {}).textContent === 'Sharing stopped.'", what="the stop")
        page = page_facts(browser)
        check(page["h1"] == "Shared item" and a.title not in page["text"], "phone: the share is gone; its page names nothing", page["text"])
        shot(browser, "stopped-phone")
        check(not browser.exceptions(), "phone: no script errors or CSP violations", browser.exceptions())

    def console(browser):
        go(browser, a.server + "/console/")
        wait_path(browser, "/console/signin", "the console's sign-in page")
        fill(browser, [("field-email", a.admin_email), ("field-password", a.admin_password)], "signin-submit")
        wait_path(browser, "/console/", "the console")
        browser.open(f"{a.server}/console/containers/{a.container}/shares/development")
        link = f"/console/shares/{a.console_share}"
        check(browser.evaluate(f"!!document.querySelector('a[href=\"{link}\"]')"), "console: the share list links to the share's console page")
        browser.open(a.server + link)
        acting = browser.evaluate("(document.getElementById('acting') || {}).textContent || ''")
        check(a.owner_email in acting and a.admin_email in acting, "console: the page says whom the administrator acts for, as whom", acting)
        fill(browser, [("field-email", "friend@example.com")], "invite-submit")
        browser.wait_for("(document.getElementById('notice') || {}).textContent === 'Invitation sent.'", what="the console's invitation")
        check(browser.evaluate("location.pathname") == link, "console: back on the console's page of the share")
        rows = browser.evaluate(ROWS)
        check(len(rows) == 1 and "friend@example.com" in rows[0][0] and rows[0][3] == "Invited", "console: the invitee is listed", rows)
        check(page_facts(browser)["overflow"] <= 0, "console: the page fits 390 px", page_facts(browser)["overflow"])
        shot(browser, "console-share-phone")
        check(not browser.exceptions(), "console: no script errors or CSP violations", browser.exceptions())

    def checks(browser):
        desktop(browser)
        phone(browser)
        console(browser)

    return run_checks(checks, "all share page checks passed")


if __name__ == "__main__":
    sys.exit(main())
