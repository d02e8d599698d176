"""The whole user-sync flow in headless Chromium, against the real /cookie_sync and /setuid.

A publisher page on page.test embeds a sync helper page in an iframe; the helper POSTs to
hbserver's /cookie_sync (pbs.test, https), loads the returned sync URL of the mock bidder
(bidder.test), which 302-redirects to hbserver's /setuid with its id; the browser must end up
holding hbserver's ``uids`` cookie with that id, set in a third-party context.

(a) hbserver's own /static/load-cookie.html (and the consent variant, answered by the publisher page);
(b) prebid-universal-creative 1.17.2's dist/load-cookie.html from npm, served from cdn.test.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from tests.e2e.browser import harness
from tests.e2e.browser.rig import Rig, add_echo_cookies, start_rig

MOCK_BIDDER = {
    "adapters": {
        "mockbidder": {
            "alias_of": "generic",
            "usersync": {"redirect": {"url": "{bidder}/sync?redir={{.RedirectURL}}", "user_macro": "$UID"}},
        }
    }
}


async def synced_uids(rig: Rig) -> str:
    """Wait for hbserver's ``uids`` cookie and check it holds the mock bidder's id; returns its value."""
    value = await harness.wait_for_cookie(rig.context, rig.pbs, "uids", detail=rig.detail)
    [cookie] = [c for c in await rig.context.cookies(rig.pbs) if c["name"] == "uids"]
    assert cookie["secure"] is True and cookie["sameSite"] == "None", cookie
    assert cookie["expires"] > time.time() + 86400, cookie

    uids = harness.decode_uids(value)
    entry = uids.get("tempUIDs", {}).get("mockbidder")
    assert entry is not None, f"no mockbidder entry in {uids}"
    assert entry["uid"] == rig.bidder.uid
    assert entry["expires"]

    # The mock bidder was called once and sent the browser to /setuid with its id.
    assert [urlsplit(hit).path for hit in rig.bidder.hits] == ["/sync"], rig.detail()
    [location] = rig.bidder.redirects
    assert location.startswith(f"{rig.pbs}/setuid?"), location
    query = parse_qs(urlsplit(location).query)
    assert query["bidder"] == ["mockbidder"] and query["uid"] == [rig.bidder.uid], location
    return value


async def cookies_seen_by_hbserver(frame: Any) -> dict[str, str]:
    """What hbserver receives from a credentialed fetch made inside the (cross-site) helper iframe."""
    return await frame.evaluate("() => fetch('/test/cookies', {credentials: 'include'}).then(r => r.json())")


async def test_our_load_cookie_page_sets_uids_through_the_mock_bidder(tmp_path, tls):
    async with start_rig(tmp_path, tls, config=MOCK_BIDDER, extra_routes=add_echo_cookies) as rig:
        params = {"bidders": "mockbidder", "max_sync_count": "5", "gdpr": "0"}  # default endpoint: same origin
        _, frame, result = await rig.run_helper("load-cookie.html", params)
        assert result == {"state": "done", "syncs": 1}, rig.detail()
        value = await synced_uids(rig)

        # The cookie goes back to hbserver from inside the publisher's page ...
        assert (await cookies_seen_by_hbserver(frame)).get("uids") == value
        # ... so on the next page view /cookie_sync has nothing left to sync for the bidder.
        _, _, again = await rig.run_helper("load-cookie.html", params)
        assert again == {"state": "done", "syncs": 0}, rig.detail()
        assert len(rig.bidder.hits) == 1


async def test_our_consent_page_sets_uids_when_gdpr_does_not_apply(tmp_path, tls):
    answer = {"type": "consent-data", "consentString": "", "consentMetadata": {"gdprApplies": False}}
    async with start_rig(tmp_path, tls, config=MOCK_BIDDER) as rig:
        params = {
            "endpoint": f"{rig.pbs}/cookie_sync",
            "bidders": "mockbidder",
            "source": "amp",
            "max_sync_count": "2",
            "timeout": "5000",
        }
        page, _, result = await rig.run_helper("load-cookie-with-consent.html", params, consent_answer=answer)
        assert await page.evaluate("() => window.consentAsked") is True
        assert result == {"state": "done", "syncs": 1}, rig.detail()
        await synced_uids(rig)


async def test_prebid_universal_creative_load_cookie_sets_uids(tmp_path, tls):
    dist: Path = harness.require_puc()
    async with start_rig(tmp_path, tls, config=MOCK_BIDDER, files_dir=dist) as rig:
        # Its URL validator rejects localhost and 127.x: every host here is a dotted *.test name.
        params = {
            "endpoint": f"{rig.pbs}/cookie_sync",
            "bidders": "mockbidder",
            "max_sync_count": "5",
            "coop_sync": "false",
        }
        helper = rig.page_url("/files/load-cookie.html", host="cdn.test") + "?" + urlencode(params)
        await rig.open_publisher(helper)
        await synced_uids(rig)
