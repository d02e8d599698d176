"""Issue 15 part B in headless Chromium: stored content never runs script on hbserver's own domain, the
opt-out page cannot be framed, and its form works for a click but not for a script on hbserver's origin.

A stored document's script would set ``document.title`` and navigate to the mock bidder (bidder.test),
which records every request: the tests assert neither happened.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from hbserver.web.endpoint import Routes
from tests.e2e.browser import harness
from tests.e2e.browser.rig import Rig, start_rig

PWNED = "pwned"
SETTLE_SECONDS = 1.5  # how long a script that did run would have had to act
# Removed when a test stands in for a browser that ignores Content-Disposition (and hop-by-hop ones).
DROPPED_HEADERS = frozenset({"content-disposition", "content-length", "transfer-encoding", "connection"})


def evil_script(rig: Rig, mark: str) -> str:
    beacon = rig.bidder_url(f"/xss-{mark}")
    return f"document.title = '{PWNED}'; new Image().src = '{beacon}-img'; window.location = '{beacon}-nav';"


def xhtml_document(rig: Rig) -> str:
    return (
        '<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>stored</title></head>'
        f"<body><p>stored</p><script>{evil_script(rig, 'cache')}</script></body></html>"
    )


def vast_with_xhtml_script(rig: Rig) -> str:
    """Root element VAST, so /vtrack accepts it; an XHTML-namespaced script still runs in an XML document."""
    return (
        '<VAST version="4.0"><Ad><InLine><AdSystem>x</AdSystem><Impression>x</Impression>'
        f'<script xmlns="http://www.w3.org/1999/xhtml">{evil_script(rig, "vtrack")}</script></InLine></Ad></VAST>'
    )


async def post_json(rig: Rig, path: str, body: dict[str, Any]) -> dict[str, Any]:
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"https://127.0.0.1:{rig.pbs_port}{path}", data=json.dumps(body), ssl=False) as response,
    ):
        assert response.status == 200, await response.text()
        return await response.json()


async def open_top_level(rig: Rig, url: str, strip_disposition: bool = False) -> Any:
    """Open ``url`` in a new tab as a top-level document. With ``strip_disposition`` the response's
    Content-Disposition is removed on the way (a browser or proxy that ignores it): then only the other
    headers stand between the document and its script."""
    page = await rig.context.new_page()
    page.on("console", lambda msg: rig.console.append(f"{msg.type}: {msg.text}"))
    if strip_disposition:

        async def without_disposition(route: Any) -> None:
            # Fetched here rather than with route.fetch(): Playwright's driver does not resolve *.test names.
            local = route.request.url.replace(rig.pbs, f"https://127.0.0.1:{rig.pbs_port}", 1)
            async with aiohttp.ClientSession() as http, http.get(local, ssl=False) as response:
                body = await response.read()
                headers = {k: v for k, v in response.headers.items() if k.lower() not in DROPPED_HEADERS}
                await route.fulfill(status=response.status, headers=headers, body=body)

        await page.route(url, without_disposition)
    from playwright.async_api import Error as PlaywrightError

    with contextlib.suppress(PlaywrightError):  # "Download is starting" when the browser saves it instead
        await page.goto(url, wait_until="load")
    await asyncio.sleep(SETTLE_SECONDS)
    return page


def assert_no_script_ran(rig: Rig, titles: list[str]) -> None:
    assert not [hit for hit in rig.bidder.hits if hit.startswith("/xss-")], rig.detail()
    assert PWNED not in titles, rig.detail()


async def page_titles(rig: Rig) -> list[str]:
    titles = []
    for page in rig.context.pages:
        with contextlib.suppress(Exception):
            titles.append(await page.title())
    return titles


async def wait_for_url(rig: Rig, page: Any, url: str) -> None:
    async def probe() -> bool:
        return page.url == url and await page.evaluate("() => document.readyState") == "complete"

    await harness.wait_for(probe, f"the page to show {url}", detail=lambda: f"at {page.url}\n{rig.detail()}")


# Stand-ins for a script stored on hbserver's origin, running as its page loads (no user gesture).
STEAL_TOKEN_JS = """
const html = await (await fetch('/static/optout.html')).text();
const token = html.match(/name="token" value="([^"]+)"/)[1];
"""
FETCH_ATTACK = f"""<!DOCTYPE html><title>stored</title><script>(async () => {{
{STEAL_TOKEN_JS}
const body = new URLSearchParams({{optout: '', token}});
const response = await fetch('/optout', {{method: 'POST', body, redirect: 'manual'}});
window.result = {{cookies: document.cookie, status: response.status}};
}})();</script>"""
FORM_ATTACK = f"""<!DOCTYPE html><title>stored</title><body><script>(async () => {{
{STEAL_TOKEN_JS}
const form = document.createElement('form');
form.method = 'post'; form.action = '/optout';
for (const [name, value] of [['optout', ''], ['token', token]]) {{
  const input = document.createElement('input');
  input.type = 'hidden'; input.name = name; input.value = value; form.appendChild(input);
}}
document.body.appendChild(form);
form.submit();
}})();</script></body>"""


def add_attack_pages(routes: Routes) -> None:
    for path, html in (("/test/fetch-attack.html", FETCH_ATTACK), ("/test/form-attack.html", FORM_ATTACK)):

        async def handle(request: web.Request, html: str = html) -> web.Response:
            return web.Response(text=html, content_type="text/html")

        routes.add("GET", path, handle)


@pytest.fixture
async def rig(tmp_path, tls):
    async with start_rig(tmp_path, tls, extra_routes=add_attack_pages) as rig:
        yield rig


@pytest.mark.parametrize("strip_disposition", [False, True], ids=["as-served", "without-content-disposition"])
async def test_xhtml_put_through_cache_does_not_run(rig, strip_disposition):
    [entry] = (await post_json(rig, "/cache", {"puts": [{"type": "xml", "value": xhtml_document(rig)}]}))["responses"]
    url = f"{rig.pbs}/cache?uuid={entry['uuid']}"
    await open_top_level(rig, url, strip_disposition)
    assert any(line.startswith("200 GET " + url) for line in rig.network), rig.detail()  # it was served
    assert_no_script_ran(rig, await page_titles(rig))


@pytest.mark.parametrize("strip_disposition", [False, True], ids=["as-served", "without-content-disposition"])
async def test_vast_put_through_vtrack_does_not_run(rig, strip_disposition):
    put = {"type": "xml", "value": vast_with_xhtml_script(rig), "bidid": "b1", "bidder": "x"}
    [entry] = (await post_json(rig, "/vtrack?a=acc", {"puts": [put]}))["responses"]
    url = f"{rig.pbs}/cache?uuid={entry['uuid']}"
    await open_top_level(rig, url, strip_disposition)
    assert any(line.startswith("200 GET " + url) for line in rig.network), rig.detail()
    assert_no_script_ran(rig, await page_titles(rig))


async def test_cached_value_is_still_readable_by_fetch_from_another_site(rig):
    """What prebid-universal-creative and video players do: a credentialed cross-origin XHR/fetch."""
    [entry] = (await post_json(rig, "/cache", {"puts": [{"type": "xml", "value": xhtml_document(rig)}]}))["responses"]
    page = await rig.open_page("<!DOCTYPE html><title>publisher</title>")
    url = f"{rig.pbs}/cache?uuid={entry['uuid']}"
    text = await page.evaluate(
        "async (url) => (await fetch(url, {credentials: 'include'})).text()", url
    )
    assert text == xhtml_document(rig)
    xhr = await page.evaluate(
        """(url) => new Promise((resolve) => { const x = new XMLHttpRequest(); x.open('GET', url);
        x.withCredentials = true; x.onload = () => resolve(x.responseText); x.send(); })""",
        url,
    )
    assert xhr == xhtml_document(rig)


async def test_optout_page_cannot_be_framed(rig):
    for path in ("/optout", "/static/optout.html"):
        page = await rig.open_publisher(rig.pbs + path)
        await asyncio.sleep(0.5)
        frame = page.frames[1]
        buttons = []
        with contextlib.suppress(Exception):
            buttons = await frame.evaluate("() => [...document.querySelectorAll('button')].map(b => b.textContent)")
        assert buttons == [], (path, frame.url, rig.detail())


async def test_optout_by_click_works_and_a_same_origin_script_cannot(rig):
    page = await rig.context.new_page()
    page.on("console", lambda msg: rig.console.append(f"{msg.type}: {msg.text}"))
    await page.goto(rig.pbs + "/optout", wait_until="load")

    await page.get_by_role("button", name="Opt out", exact=True).click()
    await wait_for_url(rig, page, rig.pbs + "/static/optout.html?status=out")
    assert await page.text_content("#status") == "You are opted out.", rig.detail()  # the inline script ran
    [uids] = [c for c in await rig.context.cookies(rig.pbs) if c["name"] == "uids"]
    assert harness.decode_uids(uids["value"]) == {"optout": True}
    assert uids["httpOnly"] is True and uids["secure"] is True and uids["sameSite"] == "None"
    [token] = [c for c in await rig.context.cookies(rig.pbs + "/optout") if c["name"] == "hbs_optout_token"]
    assert token["httpOnly"] is True and token["sameSite"] == "Strict" and token["path"] == "/optout"

    # A script on hbserver's origin, run as a page loads (as stored content would run), sees neither
    # cookie and cannot opt the visitor back in, even with a fresh token it fetched itself.
    other = await rig.context.new_page()
    await other.goto(rig.pbs + "/test/fetch-attack.html", wait_until="load")
    result = await harness.wait_for(lambda: other.evaluate("() => window.result"), "the fetch attack")
    assert result == {"cookies": "", "status": 403}, rig.detail()
    await other.goto(rig.pbs + "/test/form-attack.html", wait_until="load")

    async def form_posted() -> bool:
        return sum(line.startswith(f"403 POST {rig.pbs}/optout") for line in rig.network) == 2

    await harness.wait_for(form_posted, "the form attack's POST to be refused", detail=rig.detail)
    [uids] = [c for c in await rig.context.cookies(rig.pbs) if c["name"] == "uids"]
    assert harness.decode_uids(uids["value"]) == {"optout": True}, rig.detail()

    # The visitor's own click opts back in.
    await page.goto(rig.pbs + "/static/optout.html", wait_until="load")
    await page.get_by_role("button", name="Opt back in", exact=True).click()
    await wait_for_url(rig, page, rig.pbs + "/static/optout.html?status=in")
    assert await page.text_content("#status") == "You are opted in."
    [uids] = [c for c in await rig.context.cookies(rig.pbs) if c["name"] == "uids"]
    assert harness.decode_uids(uids["value"]) == {}
