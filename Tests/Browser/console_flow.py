#!/usr/bin/env python3
"""The web console (issue 18) in headless Chromium, driven over the DevTools protocol.

Run by Tests/TandemServerTests/Console/ConsoleBrowserTests.swift against a fresh `tandem serve`
(no administrator yet) with the setup URL it printed; runnable by hand with the same arguments.
Forms are filled and sent with the keyboard only (Tab, typing, Enter). Prints one line per
check; exits 0 when all pass, 1 on the first failure, 2 when the browser cannot start.

  desktop  `/` leads to the setup page; the first administrator is created with the code;
           the console lists containers; a container is created; an API token with an allowed
           origin is created and shown once; a .ckdb text with a typo is refused at its line and
           column, then saved; a field is added to a record type (a bad index refused beside the
           form first); the diff lists the change and deploys it; in the
           data browser a record is created, edited, refused with a bad value (the reason beside the
           field, nothing saved), found by a query and opened; the request log lists requests and adds new ones
           as they come; the charts are drawn and redrawn by the page's script; no script
           errors or CSP violations.
  phone    at 390 px wide (mobile emulation) the same pages fit the width (tables scroll inside
           their box); signing out leads to the sign-in page, which refuses a wrong password and
           signs the administrator in again; Back after signing out shows the sign-in page, not
           a console page the browser kept in its back/forward cache.
  member   (with --member-email) an account that is not an administrator signs in and sees
           container names, its own data (no "act as" field), a record it creates, its share, its
           account page; a form over the page's limit shows the 413 page, whose back link leads to
           the form; an administrators' page is refused with a Sign out that works; at desktop
           width and at 390 px, keyboard only.

Reloading the page that shows a new API token shows it no more and makes no second token.

Screenshots (PNG) of each page at both widths go to --screenshots.
"""

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import BrowserError, check, run_checks  # noqa: E402

KEYS = {"Tab": ("Tab", 9, None), "Enter": ("Enter", 13, "\r"), "ArrowDown": ("ArrowDown", 40, None), "Space": ("Space", 32, " ")}


def press(browser, name, shift=False):
    code, virtual, text = KEYS[name]
    for kind in ("keyDown", "keyUp"):
        params = {"type": kind, "key": text if name == "Space" else name, "code": code, "windowsVirtualKeyCode": virtual, "modifiers": 8 if shift else 0}
        if text and kind == "keyDown":
            params["text"] = text
        browser.page("Input.dispatchKeyEvent", params)


def tab_to(browser, element_id, limit=60):
    """Presses Tab until the element with `element_id` has focus (as a keyboard user would)."""
    for _ in range(limit):
        if browser.evaluate("document.activeElement && document.activeElement.id") == element_id:
            return
        press(browser, "Tab")
    raise BrowserError(f"Tab never reached #{element_id}")


def type_text(browser, text):
    browser.page("Input.insertText", {"text": text})


def fill(browser, values, submit):
    """Tabs to each field in turn, types its value, then presses Enter on `submit`."""
    for element_id, value in values:
        tab_to(browser, element_id)
        type_text(browser, value)
    tab_to(browser, submit)
    press(browser, "Enter")


def go(browser, url):
    """Navigates without waiting for `url` itself: the console answers some URLs with a redirect."""
    browser.events.clear()
    result = browser.page("Page.navigate", {"url": url})
    if result.get("errorText"):
        raise BrowserError(f"navigating to {url}: {result['errorText']}")


def wait_path(browser, path, what):
    return browser.wait_for(f"location.pathname === {json.dumps(path)} && document.readyState === 'complete'", what=what)


def facts(browser):
    return browser.evaluate("""(() => ({
        h1: (document.querySelector('h1') || {}).textContent,
        text: document.body.innerText,
        overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
        labelled: [...document.querySelectorAll('input:not([type=hidden])')].every(i => i.labels && i.labels.length > 0),
    }))()""")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True, help="http://127.0.0.1:PORT")
    parser.add_argument("--setup-url", required=True, help="the URL `tandem serve` printed")
    parser.add_argument("--container", default="iCloud.com.example.browser")
    parser.add_argument("--screenshots", required=True, help="directory for the screenshots")
    parser.add_argument("--member-email", help="an account that is not an administrator, with a password")
    parser.add_argument("--member-password")
    parser.add_argument("--member-container", help="a container where the member owns --member-share")
    parser.add_argument("--member-share", help="the shortGUID of a share the member owns")
    a = parser.parse_args()
    os.makedirs(a.screenshots, exist_ok=True)
    code = a.setup_url.split("code=", 1)[1]

    def shot(browser, name):
        browser.screenshot(os.path.join(a.screenshots, name + ".png"))

    def desktop(browser):
        browser.page("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False})
        go(browser, a.server + "/")
        wait_path(browser, "/console/setup", "/ to lead to the setup page")
        page = facts(browser)
        check(page["h1"] == "Create the first admin", "a newcomer at / is led to create the first admin", page["h1"])
        check(page["labelled"], "setup: every field has a label")
        shot(browser, "setup-desktop")
        fill(browser, [("field-code", code), ("field-email", "admin@example.com"), ("field-password", "a long password")], "setup-submit")
        wait_path(browser, "/console/", "the console after setup")
        check(facts(browser)["h1"] == "Containers", "setup signs the administrator in and shows the containers")

        fill(browser, [("field-id", a.container)], "create-container-submit")
        wait_path(browser, "/console/containers/" + a.container, "the new container's page")
        page = facts(browser)
        check(page["h1"] == a.container and "development: 0 zones" in page["text"], "the container was created with its environments", page["text"][:300])

        fill(browser, [("field-origins", "https://app.example")], "create-token-submit")
        token = browser.wait_for("(document.getElementById('new-token') || {}).textContent", what="the new API token")
        check(token.startswith("tdk_"), "the new API token is shown once", token)
        rows = browser.evaluate("[...document.querySelectorAll('#api-tokens tbody tr')].map(r => r.innerText)")
        check(len(rows) == 1 and "https://app.example" in rows[0] and "message" in rows[0], "the token is listed with its origin and callback mode", rows)
        check("tdk_" not in browser.evaluate("location.href"), "the new token is not in the page's URL")
        shot(browser, "container-desktop")
        # The POST was redirected (C52): reloading shows the secret no more and makes no second token.
        browser.evaluate("window.beforeReload = true")
        browser.page("Page.reload", {})
        browser.wait_for("!window.beforeReload && document.readyState === 'complete' && !!document.getElementById('created-gone')",
                         what="the reloaded container page")
        rows = browser.evaluate("[...document.querySelectorAll('#api-tokens tbody tr')].map(r => r.innerText)")
        check(len(rows) == 1 and not browser.evaluate("!!document.getElementById('new-token')"),
              "reloading shows the token no more and makes no second one", rows)

        tab_to(browser, "schema-development")
        press(browser, "Enter")
        wait_path(browser, "/console/containers/" + a.container + "/schema/development", "the development schema page")
        schema = "/console/containers/" + a.container + "/schema"
        tab_to(browser, "edit-ckdb")
        press(browser, "Enter")
        wait_path(browser, schema + "/development/ckdb", "the .ckdb page")
        tab_to(browser, "field-ckdb")
        browser.evaluate("document.getElementById('field-ckdb').select()")
        type_text(browser, "DEFINE SCHEMA\n  RECORD TYPE Trip (\n    title STRNG QUERYABLE SORTABLE,\n    GRANT READ TO \"_world\"\n  );\n")
        tab_to(browser, "import-submit")
        press(browser, "Enter")
        browser.wait_for("!!document.getElementById('field-ckdb-error')", what="the .ckdb error")
        error = browser.evaluate("document.getElementById('field-ckdb-error').textContent")
        check(error.startswith("Line 3, column 11:") and "STRNG" in browser.evaluate("document.getElementById('field-ckdb').value"),
              ".ckdb: a typo is refused at its line and column and the text stays in the box", error)
        shot(browser, "schema-ckdb-error-desktop")
        browser.evaluate("document.getElementById('field-ckdb').focus(); document.getElementById('field-ckdb').select()")
        type_text(browser, "DEFINE SCHEMA\n  RECORD TYPE Trip (\n    title STRING QUERYABLE SORTABLE,\n    GRANT READ TO \"_world\"\n  );\n")
        tab_to(browser, "import-submit")
        press(browser, "Enter")
        browser.wait_for("document.getElementById('notice') && document.getElementById('notice').textContent.startsWith('Saved')",
                         what="the .ckdb text to be saved")
        tab_to(browser, "schema-development")
        press(browser, "Enter")
        wait_path(browser, schema + "/development", "the development schema page")
        page = facts(browser)
        check("Trip" in page["text"] and browser.evaluate("document.getElementById('type0-field0-indexes-sortable').checked"),
              "the saved record type is shown with its indexes", page["text"][:400])
        check(page["labelled"], "schema: every field has a label")
        # A new field with the keyboard: SEARCHABLE on an INT64 is refused beside the form, then fixed.
        tab_to(browser, "type0-field-add-field")
        type_text(browser, "nights")
        tab_to(browser, "type0-field-add-fieldType")
        press(browser, "ArrowDown")
        check(browser.evaluate("document.getElementById('type0-field-add-fieldType').value") == "INT64", "schema: the type is chosen with the arrow keys")
        tab_to(browser, "type0-field-add-searchable")
        press(browser, "Space")
        tab_to(browser, "type0-field-add-submit")
        press(browser, "Enter")
        browser.wait_for("!!document.getElementById('type0-field-add-error')", what="the new field's refusal")
        check("SEARCHABLE" in browser.evaluate("document.getElementById('type0-field-add-error').textContent")
              and browser.evaluate("document.getElementById('type0-field-add-field').value") == "nights",
              "schema: a bad field is refused beside its form, what was typed kept")
        shot(browser, "schema-error-desktop")
        tab_to(browser, "type0-field-add-searchable")
        press(browser, "Space")
        tab_to(browser, "type0-field-add-sortable")
        press(browser, "Space")
        tab_to(browser, "type0-field-add-submit")
        press(browser, "Enter")
        browser.wait_for("document.getElementById('notice') && document.getElementById('notice').textContent.includes('nights')", what="the new field")
        check("added field Trip.nights INT64 SORTABLE" in browser.evaluate("document.getElementById('notice').textContent"),
              "schema: a field is added with the keyboard")
        shot(browser, "schema-desktop")
        tab_to(browser, "schema-diff")
        press(browser, "Enter")
        wait_path(browser, schema + "/diff", "the diff page")
        rows = browser.evaluate("[...document.querySelectorAll('#diff tbody tr')].map(r => r.innerText)")
        check(len(rows) == 1 and "Trip" in rows[0] and "added" in rows[0], "diff: production lacks the new record type", rows)
        shot(browser, "schema-diff-desktop")
        tab_to(browser, "deploy-submit")
        press(browser, "Enter")
        browser.wait_for("document.getElementById('notice') && document.getElementById('notice').textContent.startsWith('Deployed')", what="the deployment")
        check(browser.evaluate("!!document.getElementById('deploy-none')"), "diff: after deploying, production has the schema")

        data = "/console/containers/" + a.container + "/data/development"
        go(browser, a.server + data + "?database=private&type=Trip")
        wait_path(browser, data, "the data browser")
        check(browser.evaluate("!!document.getElementById('records-empty')"), "data: an empty private zone shows no records")
        tab_to(browser, "new-record")
        press(browser, "Enter")
        wait_path(browser, data + "/record", "the new record form")
        check(facts(browser)["labelled"], "record form: every field has a label")
        fill(browser, [("field-name", "lisbon"), ("field-name0", "title"), ("field-value0", "Lisbon")], "edit-record-submit")
        browser.wait_for("!!(document.getElementById('notice') && document.getElementById('fields'))", what="the saved record")
        check("Lisbon" in browser.evaluate("document.getElementById('fields').innerText"), "data: a record is created with the keyboard")
        tab_to(browser, "field-value0")
        browser.evaluate("document.getElementById('field-value0').select()")
        type_text(browser, "Porto")
        tab_to(browser, "edit-record-submit")
        press(browser, "Enter")
        browser.wait_for("document.getElementById('fields') && document.getElementById('fields').innerText.includes('Porto')", what="the edited record")
        tag = browser.evaluate("document.getElementById('change-tag').textContent")
        # A new INT64 field with a value that is not a number: refused beside the field, nothing saved.
        tab_to(browser, "field-name1")
        type_text(browser, "nights")
        tab_to(browser, "field-type1")
        press(browser, "ArrowDown")
        press(browser, "ArrowDown")
        check(browser.evaluate("document.getElementById('field-type1').value") == "INT64", "the type is chosen with the arrow keys")
        tab_to(browser, "field-value1")
        type_text(browser, "three")
        tab_to(browser, "edit-record-submit")
        press(browser, "Enter")
        browser.wait_for("!!document.getElementById('field-value1-error')", what="the bad value's message")
        check("INT64" in browser.evaluate("document.getElementById('field-value1-error').textContent"), "data: a bad value is refused beside its field")
        shot(browser, "record-error-desktop")
        go(browser, a.server + data + "/record?database=private&type=Trip&name=lisbon")
        wait_path(browser, data + "/record", "the record again")
        check(browser.evaluate("document.getElementById('change-tag').textContent") == tag, "nothing was half-saved: the change tag is as it was")
        shot(browser, "record-desktop")
        tab_to(browser, "back")
        press(browser, "Enter")
        wait_path(browser, data, "the query page")
        fill(browser, [("field-field1", "title"), ("field-value1", "Porto")], "query-submit")
        browser.wait_for("location.search.includes('field1=title') && document.readyState === 'complete'", what="the query's results")
        rows = browser.evaluate("[...document.querySelectorAll('#records tbody tr')].map(r => r.innerText)")
        check(len(rows) == 1 and "lisbon" in rows[0] and "Porto" in rows[0], "data: a query with a filter finds the record", rows)
        shot(browser, "data-desktop")

        tab_to(browser, "nav-logs")
        press(browser, "Enter")
        wait_path(browser, "/console/logs", "the request log")
        paths = browser.evaluate("[...document.querySelectorAll('#log-rows tr td:nth-child(3)')].map(c => c.textContent)")
        check("/console/containers/" + a.container + "/tokens" in paths, "the log lists the token request", paths[:10])
        before = browser.evaluate("document.querySelectorAll('#log-rows tr').length")
        missing = "/database/1/iCloud.nowhere/development/private/records/query"
        uuid = None
        try:
            urllib.request.urlopen(urllib.request.Request(a.server + missing, data=b"{}", method="POST"), timeout=30)
        except urllib.error.HTTPError as error:
            uuid = json.loads(error.read()).get("uuid")
        check(uuid, "a failing request answers with a uuid")
        found = browser.wait_for(f"[...document.querySelectorAll('#log-rows tr')].some(r => r.innerText.includes({json.dumps(uuid)}))",
                                 timeout=20, what="the new request to appear in the log")
        check(found and browser.evaluate("document.querySelectorAll('#log-rows tr').length") > before,
              "the log adds the new request with the error body's uuid, without a reload")
        shot(browser, "logs-desktop")

        tab_to(browser, "nav-metrics")
        press(browser, "Enter")
        wait_path(browser, "/console/metrics", "the metrics page")
        charts = browser.evaluate("[...document.querySelectorAll('figure.chart svg')].length")
        check(charts == 4, "four charts: requests, latency, errors, open connections", charts)
        browser.wait_for("document.getElementById('charts').dataset.updated", timeout=20, what="the script to redraw the charts")
        browser.wait_for("document.getElementById('chart-requests-rate').getAttribute('points').split(' ').length >= 2",
                         timeout=20, what="the requests chart to have a line")
        shot(browser, "metrics-desktop")
        check(not browser.exceptions(), "no script errors or CSP violations", browser.exceptions())

    def phone(browser):
        browser.page("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True})
        for path, name in [("/console/", "containers"), ("/console/containers/" + a.container, "container"),
                           ("/console/containers/" + a.container + "/schema/development", "schema"),
                           ("/console/containers/" + a.container + "/schema/development/ckdb", "schema-ckdb"),
                           ("/console/containers/" + a.container + "/schema/diff", "schema-diff"),
                           ("/console/containers/" + a.container + "/schema/production", "schema-production"),
                           ("/console/containers/" + a.container + "/shares/development", "shares"),
                           ("/console/containers/" + a.container + "/data/development?database=private&type=Trip&field1=title&value1=Porto", "data"),
                           ("/console/containers/" + a.container + "/data/development/record?database=private&type=Trip&name=lisbon", "record"),
                           ("/console/users", "users"), ("/console/logs", "logs"), ("/console/metrics", "metrics")]:
            browser.open(a.server + path)
            page = facts(browser)
            check(page["overflow"] <= 0, f"phone: {path} fits 390 px without sideways scrolling", page["overflow"])
            shot(browser, name + "-phone")
        check(not browser.exceptions(), "phone: no script errors or CSP violations", browser.exceptions())
        tab_to(browser, "signout-submit")
        press(browser, "Enter")
        wait_path(browser, "/console/signin", "the sign-in page after signing out")
        check("You signed out." in facts(browser)["text"], "signing out leads to the sign-in page")
        shot(browser, "signin-phone")
        go(browser, a.server + "/console/")
        wait_path(browser, "/console/signin", "a signed-out visit to lead to sign-in")
        fill(browser, [("field-email", "admin@example.com"), ("field-password", "a wrong password")], "signin-submit")
        browser.wait_for("!!document.getElementById('error')", what="the wrong-password message")
        check("wrong" in browser.evaluate("document.getElementById('error').textContent"), "phone: a wrong password is refused with a message")
        browser.evaluate("document.getElementById('field-password').value = ''")
        fill(browser, [("field-password", "a long password")], "signin-submit")
        wait_path(browser, "/console/", "the console after signing in")
        check(facts(browser)["h1"] == "Containers", "phone: the administrator signs in again with the keyboard")
        # Back after signing out: no console page comes back from the browser's back/forward
        # cache (C30). The page the sign-in's redirect showed is the one Chromium keeps.
        go(browser, a.server + "/console/users")
        wait_path(browser, "/console/users", "the users page")
        tab_to(browser, "signout-submit")
        press(browser, "Enter")
        wait_path(browser, "/console/signin", "the sign-in page after signing out again")
        for step in ("once", "twice"):
            browser.evaluate("window.beforeBack = true")
            browser.evaluate("history.back()")
            browser.wait_for("!window.beforeBack && location.pathname === '/console/signin' && document.readyState === 'complete'",
                             what=f"Back ({step}) after signing out to lead to the sign-in page, not a console page the browser kept")
        check(facts(browser)["h1"] == "Sign in to the console", "phone: Back after signing out shows the sign-in page")

    def member_sign_in(browser):
        go(browser, a.server + "/console/signin")
        wait_path(browser, "/console/signin", "the sign-in page")
        fill(browser, [("field-email", a.member_email), ("field-password", a.member_password)], "signin-submit")
        wait_path(browser, "/console/", "the member's console")

    def member(browser, width):
        name = "desktop" if width > 400 else "phone"
        if width > 400:
            browser.page("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False})
        member_sign_in(browser)
        page = facts(browser)
        check("not a server administrator" in page["text"] and a.member_container in page["text"], f"member ({name}): the containers, no administrators' pages",
              page["text"][:300])
        check(not browser.evaluate("!!document.getElementById('nav-users') || !!document.getElementById('create-container')"),
              f"member ({name}): no users link and no container creation")
        shot(browser, "member-containers-" + name)
        container = "/console/containers/" + a.member_container
        go(browser, a.server + container)
        wait_path(browser, container, "the member's container page")
        tab_to(browser, "data-development")
        press(browser, "Enter")
        data = container + "/data/development"
        wait_path(browser, data, "the member's data page")
        check(browser.evaluate("!!document.getElementById('acting-as') && !document.getElementById('field-user')"),
              f"member ({name}): the data browser acts as the member, with no field to change that")
        go(browser, a.server + data + "/record?database=private&type=Note")
        wait_path(browser, data + "/record", "the member's new record form")
        record = "visit-" + name
        fill(browser, [("field-name", record), ("field-name0", "title"), ("field-value0", "Mine")], "edit-record-submit")
        browser.wait_for("!!(document.getElementById('notice') && document.getElementById('fields'))", what="the member's saved record")
        check("Mine" in browser.evaluate("document.getElementById('fields').innerText"), f"member ({name}): a record is created in its own private database")
        shot(browser, "member-record-" + name)
        # A form over the console's 64 KiB: the 413 page, and its link back to the form.
        form = browser.evaluate("location.pathname + location.search")
        browser.evaluate("document.getElementById('field-value0').value = 'x'.repeat(70 * 1024)")
        tab_to(browser, "edit-record-submit")
        press(browser, "Enter")
        browser.wait_for("document.querySelector('h1') && document.querySelector('h1').textContent === 'Form too large'", what="the 413 page")
        page = facts(browser)
        check("Nothing was saved" in page["text"] and page["overflow"] <= 0, f"member ({name}): a form over the limit shows the 413 page", page["text"][:300])
        check(browser.evaluate("document.getElementById('back').getAttribute('href')") == form, "the 413 page links back to the form",
              browser.evaluate("document.getElementById('back').getAttribute('href')"))
        shot(browser, "form-too-large-" + name)
        tab_to(browser, "back")
        press(browser, "Enter")
        browser.wait_for(f"location.pathname + location.search === {json.dumps(form)} && document.readyState === 'complete'", what="the form again")
        check("Mine" in browser.evaluate("document.getElementById('fields').innerText"), f"member ({name}): the record is as saved before")
        for path, label in [(container + "/shares/development", "shares"), ("/console/shares/" + a.member_share, "share"), ("/console/account", "account")]:
            browser.open(a.server + path)
            page = facts(browser)
            check(page["overflow"] <= 0, f"member ({name}): {path} fits without sideways scrolling", page["overflow"])
            shot(browser, f"member-{label}-{name}")
        browser.open(a.server + container + "/shares/development")
        check(a.member_share in facts(browser)["text"], f"member ({name}): its share is listed")
        browser.open(a.server + "/console/account")
        check(browser.evaluate("document.querySelectorAll('#sessions tbody tr').length") >= 1, f"member ({name}): its sessions are listed")
        go(browser, a.server + "/console/users")
        wait_path(browser, "/console/users", "the users page")
        page = facts(browser)
        check(page["h1"] == "Not allowed" and page["overflow"] <= 0, f"member ({name}): the users page is refused", page["text"][:300])
        shot(browser, "member-refused-" + name)
        # The browser logs the page's own 403 as a failed load; nothing else may be there.
        problems = [e for e in browser.exceptions() if "status of 403" not in str(e)]
        check(not problems, f"member ({name}): no script errors or CSP violations", problems)
        tab_to(browser, "signout-submit")
        press(browser, "Enter")
        wait_path(browser, "/console/signin", "the sign-in page after the member signs out")
        check("You signed out." in facts(browser)["text"], f"member ({name}): Sign out on the refusal page works")

    def checks(browser):
        desktop(browser)
        phone(browser)
        if a.member_email:
            # The phone flow ends signed out.
            member(browser, 1280)
            browser.page("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True})
            member(browser, 390)

    return run_checks(checks, "all console checks passed")


if __name__ == "__main__":
    sys.exit(main())
