"""Our sync helper pages in headless Chromium against a recording /cookie_sync stand-in.

hbserver (with the static routes) serves the pages on pbs.test; ``POST /test/cookie_sync`` records
what the page sends and answers a fixed sync response; the publisher page on page.test embeds the
helper in an iframe (and, for the consent page, answers the consent request).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.browser import harness
from tests.e2e.browser.rig import FakeCookieSync, Rig, start_rig

ELEMENTS_JS = "() => [...document.querySelectorAll('img, iframe')].map(e => [e.tagName, e.src])"


@pytest.fixture
def fake() -> FakeCookieSync:
    return FakeCookieSync()


@pytest.fixture
async def rig(tmp_path, tls, fake):
    async with start_rig(tmp_path, tls, extra_routes=fake.add_routes) as rig:
        yield rig


def sync_answer(rig: Rig) -> dict[str, Any]:
    def entry(bidder: str, url: str, kind: str, no_cookie: bool = True) -> dict[str, Any]:
        return {"bidder": bidder, "no_cookie": no_cookie, "usersync": {"url": url, "type": kind, "supportCORS": False}}

    return {
        "status": "ok",
        "bidder_status": [
            entry("a", rig.bidder_url("/iframe-a"), "iframe"),
            entry("b", "javascript:alert(1)", "redirect"),
            entry("c", rig.bidder_url("/has-cookie"), "redirect", no_cookie=False),
            entry("d", f"//bidder.test:{rig.bidder_port}/pixel-d", "redirect"),
            entry("e", rig.bidder_url("/pixel-e"), "image"),
            entry("g", rig.bidder_url("/unknown-type"), "script"),
            entry("f", rig.bidder_url("/pixel-f"), "redirect"),
        ],
    }


async def wait_for_hits(rig: Rig, paths: list[str]) -> None:
    async def probe() -> bool:
        return all(path in rig.bidder.hits for path in paths)

    await harness.wait_for(probe, f"the bidder to see {paths}", detail=rig.detail)


async def test_amp_request_body_and_pixel_only_syncs_capped_at_limit(rig, fake):
    fake.answer = sync_answer(rig)
    params = {
        "endpoint": f"{rig.pbs}/test/cookie_sync",
        "max_sync_count": "2",
        "bidders": "a, b,,c",
        "source": "amp",
        "gdpr": "1",
        "gdpr_consent": "CONSENT_ABC",
        "args": "account:1001,foo:bar,big:12345678901234567890,bad,:x,__proto__:1,url:https://x.test/",
    }
    _, frame, result = await rig.run_helper("load-cookie.html", params)

    assert result == {"state": "done", "syncs": 2}, rig.detail()
    [request] = fake.requests
    assert request["content_type"].startswith("text/plain")
    assert request["body"] == {
        "account": 1001,
        "foo": "bar",
        "big": "12345678901234567890",
        "url": "https://x.test/",
        "limit": 2,
        "bidders": ["a", "b", "c"],
        "gdpr": 1,
        "gdpr_consent": "CONSENT_ABC",
        "filterSettings": {"iframe": {"bidders": "*", "filter": "exclude"}},
    }
    # No iframe under source=amp, nothing but http(s), only no_cookie entries, at most `limit`.
    assert await frame.evaluate(ELEMENTS_JS) == [
        ["IMG", rig.bidder_url("/pixel-d")],
        ["IMG", rig.bidder_url("/pixel-e")],
    ]
    await wait_for_hits(rig, ["/pixel-d", "/pixel-e"])


async def test_iframe_and_pixel_syncs_without_limit(rig, fake):
    fake.answer = sync_answer(rig)
    params = {"endpoint": f"{rig.pbs}/test/cookie_sync", "gdpr": "0"}
    _, frame, result = await rig.run_helper("load-cookie.html", params)

    assert result == {"state": "done", "syncs": 4}, rig.detail()
    assert [r["body"] for r in fake.requests] == [{"gdpr": 0}]
    assert await frame.evaluate(ELEMENTS_JS) == [
        ["IFRAME", rig.bidder_url("/iframe-a")],
        ["IMG", rig.bidder_url("/pixel-d")],
        ["IMG", rig.bidder_url("/pixel-e")],
        ["IMG", rig.bidder_url("/pixel-f")],
    ]
    await wait_for_hits(rig, ["/iframe-a", "/pixel-d", "/pixel-e", "/pixel-f"])
    assert "/has-cookie" not in rig.bidder.hits and "/unknown-type" not in rig.bidder.hits


async def test_default_endpoint_is_cookie_sync_on_the_same_origin(rig, fake):
    posts: list[str] = []
    rig.context.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    _, _, result = await rig.run_helper("load-cookie.html", {"bidders": "x"})
    assert result["state"] in ("done", "error")
    assert posts == [f"{rig.pbs}/cookie_sync"], rig.detail()
    assert fake.requests == []


async def test_double_encoded_endpoint_is_accepted(rig, fake):
    params = {"endpoint": f"{rig.pbs}/test/cookie_sync".replace(":", "%3A").replace("/", "%2F")}
    _, _, result = await rig.run_helper("load-cookie.html", params)
    assert result["state"] == "done", rig.detail()
    assert len(fake.requests) == 1


async def test_endpoint_must_be_an_http_url(rig, fake):
    posts: list[str] = []
    rig.context.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    for endpoint in ("javascript:alert(1)", "data:text/plain,{}", "ftp://pbs.test/x", "/cookie_sync", "x", " "):
        page, frame, result = await rig.run_helper("load-cookie.html", {"endpoint": endpoint})
        assert result == {"state": "bad-endpoint", "syncs": 0}, endpoint
        assert await frame.evaluate(ELEMENTS_JS) == [], endpoint
        await page.close()
    assert posts == [] and fake.requests == []


async def test_error_answer_loads_nothing(rig, fake):
    fake.answer = {"status": "ok", "bidder_status": "not a list"}
    _, frame, result = await rig.run_helper("load-cookie.html", {"endpoint": f"{rig.pbs}/test/cookie_sync"})
    assert result == {"state": "done", "syncs": 0}
    _, frame, result = await rig.run_helper("load-cookie.html", {"endpoint": f"{rig.pbs}/no/such/endpoint"})
    assert result == {"state": "error", "syncs": 0}
    assert await frame.evaluate(ELEMENTS_JS) == []


CONSENT_CASES = [
    (
        {"type": "consent-data", "consentString": "CONSENT_XYZ", "consentMetadata": {"gdprApplies": True}},
        {"gdpr": 1, "gdpr_consent": "CONSENT_XYZ"},
    ),
    ({"type": "consent-data", "consentString": "C", "consentMetadata": {"gdprApplies": False}}, {"gdpr": 0}),
    ({"type": "consent-data", "consentString": "C", "gdprApplies": False}, {"gdpr": 0}),
    ({"type": "consent-data", "consentString": "CONSENT_1"}, {"gdpr": 1, "gdpr_consent": "CONSENT_1"}),
]


async def test_consent_page_uses_the_parents_answer(rig, fake):
    fake.answer = sync_answer(rig)
    params = {
        "endpoint": f"{rig.pbs}/test/cookie_sync",
        "source": "amp",
        "max_sync_count": "1",
        "gdpr": "0",  # the parent's answer wins over the query string
        "gdpr_consent": "FROM_QUERY",
    }
    for answer, expected in CONSENT_CASES:
        fake.requests.clear()
        page, frame, result = await rig.run_helper("load-cookie-with-consent.html", params, consent_answer=answer)
        assert await page.evaluate("() => window.consentAsked") is True
        assert result == {"state": "done", "syncs": 1}, rig.detail()
        [request] = fake.requests
        assert request["body"] == {
            "limit": 1,
            "filterSettings": {"iframe": {"bidders": "*", "filter": "exclude"}},
            **expected,
        }, answer
        assert await frame.evaluate(ELEMENTS_JS) == [["IMG", rig.bidder_url("/pixel-d")]]
        await page.close()


async def test_consent_page_without_answer_syncs_only_when_default_scope_is_0(rig, fake):
    params = {"endpoint": f"{rig.pbs}/test/cookie_sync", "timeout": "300"}
    _, _, result = await rig.run_helper("load-cookie-with-consent.html", params)
    assert result["state"] == "no-consent"
    assert fake.requests == []

    _, _, result = await rig.run_helper("load-cookie-with-consent.html", {**params, "defaultGdprScope": "0"})
    assert result["state"] == "done"
    assert [r["body"] for r in fake.requests] == [{"gdpr": 0}]


async def test_consent_page_ignores_messages_from_other_windows(rig, fake):
    params = {"endpoint": f"{rig.pbs}/test/cookie_sync", "timeout": "500"}
    page = await rig.open_publisher(rig.helper_url("load-cookie-with-consent.html", params))
    frame = await harness.helper_frame(page)
    # A message the frame posts to itself is not from its parent.
    await frame.evaluate(
        "() => window.postMessage({type: 'consent-data', consentString: 'X', gdprApplies: false}, '*')"
    )

    async def finished() -> Any:
        result = await frame.evaluate("() => window.hbsUserSyncResult")
        return result if result["state"] != "waiting-for-consent" else None

    result = await harness.wait_for(finished, "the consent page to give up", detail=rig.detail)
    assert result["state"] == "no-consent"
    assert fake.requests == []
