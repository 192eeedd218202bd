#!/usr/bin/env python3
"""End-to-end check of the share landing page (`GET /share/{shortGUID}`) in headless Chromium.

Run by Tests/TandemServerTests/LandingPageBrowserTests.swift against a real `tandem serve`, with
shares and users it created; runnable by hand with the same arguments. Prints one line per
check and exits 0 when all pass, 1 on the first failure, 2 when the browser cannot start.

  public page   title, "Shared by", og:title, og:image, the thumbnail loaded (naturalWidth > 0),
                no script errors; a screenshot; a session cookie the server refuses reads as
                signed out (a Sign in link, no Accept); with a second user's session (the page's
                `tandem_share` cookie, as the sign-in page sets it; share_page.py signs in for
                real) Accept says accepted, nothing is kept in localStorage, and records/resolve
                as that user says participantStatus ACCEPTED as PUBLIC_USER.
  private page  anonymous: no title, owner, image or Accept button, and the same text as a
                share that does not exist.
  requestable   a private share allowing access requests, as a signed-in stranger: Request
                access, the page says sent, and the owner's records/lookup of the share lists the
                requester in `requesters`.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import run_checks, CheckFailed, check  # noqa: E402

ACCEPTED_TEXT = "Accepted. Open the app to see it."
REQUESTED_TEXT = "Request sent. The owner will decide."


def session(browser, server, guid, token):
    """The page's session cookie, as the sign-in page sets it (HttpOnly, for that page only)."""
    browser.page("Network.setCookie", {"name": "tandem_share", "value": token, "url": f"{server}/share/{guid}",
                                       "path": f"/share/{guid}", "httpOnly": True, "sameSite": "Lax"})



def api(server, path, body, token):
    request = urllib.request.Request(server + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def http_status(url):
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


PAGE_FACTS = """(() => {
  const meta = p => (document.querySelector(`meta[property="${p}"]`) || {}).content || null;
  const img = document.querySelector("img");
  return {title: document.title, h1: (document.querySelector("h1") || {}).textContent || null,
          text: document.body.innerText, ogTitle: meta("og:title"), ogImage: meta("og:image"),
          ogDescription: meta("og:description"), ogURL: meta("og:url"),
          image: img ? {src: img.src, complete: img.complete, naturalWidth: img.naturalWidth} : null,
          accept: !!document.getElementById("accept"), request: !!document.getElementById("request"),
          signin: !!document.getElementById("signin"),
          status: document.getElementById("notice") ? document.getElementById("notice").textContent : null};
})()"""


def public_page(browser, a, screenshots):
    url = f"{a.server}/share/{a.public}"
    browser.open(url)
    browser.wait_for("(() => { const i = document.querySelector('img'); return !i || i.complete; })()", what="the thumbnail to load")
    page = browser.evaluate(PAGE_FACTS)
    check(page["title"] == a.title, "public: <title> is the share's cloudkit.title", page["title"])
    check(page["h1"] == a.title, "public: <h1> is the share's cloudkit.title", page["h1"])
    check(f"Shared by {a.owner_name}" in page["text"], "public: the page says who shared it", page["text"])
    check(page["ogTitle"] == a.title, "public: og:title is the title", page["ogTitle"])
    check(page["ogDescription"] == f"Shared by {a.owner_name}", "public: og:description names the owner", page["ogDescription"])
    check(page["ogURL"] == url, "public: og:url is the page", page["ogURL"])
    thumbnail = f"{url}/thumbnail"
    check(page["ogImage"] == thumbnail, "public: og:image is the thumbnail URL", page["ogImage"])
    check(page["image"] is not None and page["image"]["src"] == thumbnail, "public: the page shows the thumbnail", page["image"])
    check(page["image"]["complete"] and page["image"]["naturalWidth"] > 0, "public: the thumbnail loaded (naturalWidth > 0)", page["image"])
    check(not page["request"], "public: no Request access button")
    check(not browser.exceptions(), "public: no script errors or failed loads", browser.exceptions())
    shot = os.path.join(screenshots, "public-share.png")
    browser.screenshot(shot)
    check(os.path.getsize(shot) > 1000, "public: screenshot taken", shot)
    print(f"screenshot: {shot}", flush=True)

    check(page["signin"] and not page["accept"], "public, signed out: a Sign in link and no Accept button")

    # A session the server refuses (unknown token) reads as signed out.
    session(browser, a.server, a.public, "tdu_not-a-token")
    browser.open(url)
    page = browser.evaluate(PAGE_FACTS)
    check(page["signin"] and not page["accept"], "public: a refused session reads as signed out", page)

    session(browser, a.server, a.public, a.accepter_token)
    browser.open(url)
    check(browser.evaluate(PAGE_FACTS)["accept"], "public, signed in: an Accept button")
    browser.click("#accept-submit")
    status = browser.wait_for("(document.getElementById('notice') || {}).textContent", what="the notice after Accept")
    check(status == ACCEPTED_TEXT, "accept: the page says accepted", status)
    check(browser.evaluate("localStorage.length") == 0 and browser.evaluate("document.cookie") == "",
          "accept: no token in localStorage or in a script-readable cookie")
    check(not browser.exceptions(), "accept: no script errors", browser.exceptions())
    code, body = api(a.server, f"/database/1/{a.container}/{a.environment}/public/records/resolve",
                     {"shortGUIDs": [{"value": a.public}]}, a.accepter_token)
    result = (body.get("results") or [{}])[0]
    check(code == 200 and result.get("participantStatus") == "ACCEPTED",
          "accept: records/resolve as the accepter says participantStatus ACCEPTED", body)
    check(result.get("participantType") == "PUBLIC_USER", "accept: the accepter joined as PUBLIC_USER", result.get("participantType"))


def private_page(browser, a):
    browser.open(f"{a.server}/share/{a.private}")
    page = browser.evaluate(PAGE_FACTS)
    leaks = [s for s in (a.private_title, a.owner_name, a.owner_name.split()[0]) if s in page["text"] or s in page["title"]]
    check(not leaks, "private: neither the title nor the owner appears to an anonymous viewer", leaks)
    check(page["ogTitle"] == "Shared item" and page["h1"] == "Shared item", "private: generic title", (page["ogTitle"], page["h1"]))
    check(page["ogImage"] is None and page["image"] is None, "private: no image or og:image", (page["ogImage"], page["image"]))
    check(not page["accept"] and not page["request"], "private: no Accept or Request access button")
    html = browser.evaluate("document.documentElement.outerHTML")
    check(a.private_title not in html and a.owner_name not in html, "private: nothing leaks in the HTML either")
    check(http_status(f"{a.server}/share/{a.private}/thumbnail") == 404, "private: its thumbnail is 404")
    check(not browser.exceptions(), "private: no script errors or failed loads", browser.exceptions())

    # A share that does not exist reads the same, so a URL says nothing about whether it names a share.
    unknown = "0" * 26
    browser.open(f"{a.server}/share/{unknown}")
    other = browser.evaluate(PAGE_FACTS)
    same = {k: v for k, v in page.items() if k != "ogURL"} == {k: v for k, v in other.items() if k != "ogURL"}
    check(same, "private: the page is the same as for an unknown share", (page, other))


def requestable_page(browser, a):
    browser.open(f"{a.server}/share/{a.requestable}")
    page = browser.evaluate(PAGE_FACTS)
    check(a.requestable_title not in page["text"] and a.owner_name not in page["text"],
          "requestable: no title or owner for an anonymous viewer", page["text"])
    check(not page["request"] and not page["accept"] and page["signin"], "requestable, signed out: only a Sign in link")
    session(browser, a.server, a.requestable, a.requester_token)
    browser.open(f"{a.server}/share/{a.requestable}")
    page = browser.evaluate(PAGE_FACTS)
    check(page["request"] and not page["accept"], "requestable, signed in: a Request access button and no Accept button")
    check(a.requestable_title not in page["text"], "requestable: still no title for a stranger", page["text"])
    browser.click("#request-submit")
    status = browser.wait_for("(document.getElementById('notice') || {}).textContent", what="the notice after Request access")
    check(status == REQUESTED_TEXT, "requestable: the page says the request was sent", status)
    check(browser.evaluate("!!document.getElementById('requested')"), "requestable: the page says the request waits for the owner")
    check(not browser.exceptions(), "requestable: no script errors", browser.exceptions())
    code, body = api(a.server, f"/database/1/{a.container}/{a.environment}/private/records/lookup",
                     {"zoneID": {"zoneName": a.owner_zone}, "records": [{"recordName": a.requestable_share}]}, a.owner_token)
    record = (body.get("records") or [{}])[0]
    requesters = [r.get("userRecordName") for r in record.get("requesters", [])]
    check(code == 200 and a.requester in requesters, "requestable: the owner's lookup lists the requester in requesters", body)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True, help="http://127.0.0.1:PORT")
    parser.add_argument("--container", required=True)
    parser.add_argument("--environment", default="development")
    parser.add_argument("--owner-name", required=True, help="the owner's name as the page shows it")
    parser.add_argument("--owner-token", required=True)
    parser.add_argument("--owner-zone", required=True, help="the zone of the requestable share in the owner's private database")
    parser.add_argument("--public", required=True, help="shortGUID of a READ_ONLY share with a PNG thumbnail")
    parser.add_argument("--title", required=True, help="the public share's cloudkit.title")
    parser.add_argument("--accepter-token", required=True, help="a second user, who accepts the public share")
    parser.add_argument("--private", required=True, help="shortGUID of a share with publicPermission NONE")
    parser.add_argument("--private-title", required=True)
    parser.add_argument("--requestable", required=True, help="shortGUID of a private share with allowsAccessRequests")
    parser.add_argument("--requestable-title", required=True)
    parser.add_argument("--requestable-share", required=True, help="the requestable share's recordName")
    parser.add_argument("--requester", required=True, help="the requester's userRecordName")
    parser.add_argument("--requester-token", required=True)
    parser.add_argument("--screenshots", help="directory for screenshots (default: a new temporary directory)")
    a = parser.parse_args()
    screenshots = a.screenshots or tempfile.mkdtemp(prefix="tandem-landing-")
    os.makedirs(screenshots, exist_ok=True)

    def checks(browser):
        public_page(browser, a, screenshots)
        private_page(browser, a)
        requestable_page(browser, a)

    status = run_checks(checks, "all landing page checks passed")
    if status == 0 and not a.screenshots:  # a failed run keeps its screenshot for a look
        shutil.rmtree(screenshots, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
