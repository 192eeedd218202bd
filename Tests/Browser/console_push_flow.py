#!/usr/bin/env python3
"""The console's push and Shared with You pages (issue 18 items 6, 7) in headless Chromium.

Run by Tests/TandemServerTests/Console/ConsolePushBrowserTests.swift against a server holding an
administrator, a subscription with a webhook that was delivered, and an app with an uploaded
association file; runnable by hand with the same arguments. Keyboard only (Tab, typing, Enter),
with the helpers of console_flow.py. Prints one line per check; exits 0 when all pass, 1 on the
first failure, 2 when the browser cannot start.

  desktop  sign in; from the container page to its subscriptions; a filter naming no account is
           refused beside its field; the subscription is listed with its webhook and links to its
           deliveries (HTTP 204); the link tester answers "open" with the deciding rule, and a
           URL that is not http(s) is refused beside its field; no script errors or CSP violations.
  phone    at 390 px wide the subscriptions, webhook deliveries, open connections and Shared
           with You pages fit the width (tables scroll inside their box); the subscription is
           deleted with its button.

Screenshots (PNG) go to --screenshots.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import check, run_checks  # noqa: E402
from console_flow import facts, fill, go, press, tab_to, type_text, wait_path  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True, help="http://127.0.0.1:PORT")
    parser.add_argument("--email", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--container", required=True)
    parser.add_argument("--subscription", required=True, help="a subscription with a delivered webhook")
    parser.add_argument("--app", required=True, help="a registered app whose file opens /buy/*")
    parser.add_argument("--domain", required=True)
    parser.add_argument("--screenshots", required=True)
    a = parser.parse_args()
    os.makedirs(a.screenshots, exist_ok=True)
    container = "/console/containers/" + a.container
    subscriptions = container + "/subscriptions/development"
    swy = container + "/sharedwithyou/development"

    def shot(browser, name):
        browser.screenshot(os.path.join(a.screenshots, name + ".png"))

    def desktop(browser):
        browser.page("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False})
        go(browser, a.server + "/console/signin")
        wait_path(browser, "/console/signin", "the sign-in page")
        fill(browser, [("field-email", a.email), ("field-password", a.password)], "signin-submit")
        wait_path(browser, "/console/", "the console after signing in")
        go(browser, a.server + container)
        wait_path(browser, container, "the container page")
        tab_to(browser, "subscriptions-development")
        press(browser, "Enter")
        wait_path(browser, subscriptions, "the subscriptions page")
        page = facts(browser)
        check(page["labelled"], "subscriptions: every field has a label")
        row = browser.evaluate(f"[...document.querySelectorAll('#subscriptions tbody tr')].map(r => r.innerText).find(t => t.includes({a.subscription!r}))")
        check(row and "webhook to 127.0.0.1" in row, "the subscription is listed with its webhook's host", row)

        fill(browser, [("field-user", "nobody@example.com")], "subscription-filter-submit")
        browser.wait_for("!!document.getElementById('field-user-error')", what="the unknown account's message")
        check("no account" in browser.evaluate("document.getElementById('field-user-error').textContent"),
              "a filter naming no account is refused beside its field")
        shot(browser, "subscriptions-error-desktop")
        go(browser, a.server + subscriptions)
        wait_path(browser, subscriptions, "the subscriptions page again")
        link = browser.evaluate(f"[...document.querySelectorAll('#subscriptions a')].find(l => l.href.includes('subscription={a.subscription}&')).id")
        tab_to(browser, link)
        press(browser, "Enter")
        wait_path(browser, container + "/webhooks/development", "the subscription's deliveries")
        rows = browser.evaluate("[...document.querySelectorAll('#webhook-attempts tbody tr')].map(r => r.innerText)")
        check(len(rows) >= 1 and all(a.subscription in r for r in rows) and "HTTP 204" in rows[0], "its deliveries are listed, newest first", rows)
        shot(browser, "webhooks-desktop")

        go(browser, a.server + swy)
        wait_path(browser, swy, "the Shared with You page")
        check(a.app in facts(browser)["text"], "the app is listed with its file's rules")
        fill(browser, [("field-url", f"https://{a.domain}/buy/shoes")], "link-test-submit")
        browser.wait_for("!!document.getElementById('test-decision')", what="the link tester's answer")
        check(browser.evaluate("document.getElementById('test-decision').dataset.decision") == "open", "the link tester answers open")
        check("components[0]" in browser.evaluate("document.getElementById('test-rule').textContent"), "and names the rule that decided")
        shot(browser, "link-test-desktop")
        browser.evaluate("document.getElementById('field-url').value = ''")
        fill(browser, [("field-url", f"ftp://{a.domain}/buy/shoes")], "link-test-submit")
        browser.wait_for("!!document.getElementById('field-url-error')", what="the bad URL's message")
        check("http(s)" in browser.evaluate("document.getElementById('field-url-error').textContent"), "a URL that is not http(s) is refused beside its field")
        browser.events.clear()  # the refusal's 400, logged by the browser as a failed load, was the point

        check(not browser.exceptions(), "no script errors or CSP violations", browser.exceptions())

    def phone(browser):
        browser.page("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True})
        for path, name in [(subscriptions, "subscriptions"), (container + "/webhooks/development", "webhooks"),
                           (container + "/connections/development", "connections"), (swy, "sharedwithyou")]:
            browser.open(a.server + path)
            page = facts(browser)
            check(page["overflow"] <= 0, f"phone: {path} fits 390 px without sideways scrolling", page["overflow"])
            shot(browser, name + "-phone")
        check(not browser.exceptions(), "phone: no script errors or CSP violations", browser.exceptions())
        go(browser, a.server + subscriptions)
        wait_path(browser, subscriptions, "the subscriptions page before deleting")
        button = browser.evaluate(f"[...document.querySelectorAll('#subscriptions tbody tr')].find(r => r.innerText.includes({a.subscription!r})).querySelector('button').id")
        tab_to(browser, button)
        press(browser, "Enter")
        browser.wait_for("!!document.getElementById('notice')", what="the deletion's notice")
        check(a.subscription not in browser.evaluate("document.body.innerText").split("The subscription was deleted.")[1],
              "the subscription is deleted with its button")

    def checks(browser):
        desktop(browser)
        phone(browser)

    return run_checks(checks, "all console push checks passed")


if __name__ == "__main__":
    sys.exit(main())
