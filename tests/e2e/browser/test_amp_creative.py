"""prebid-universal-creative's AMP renderer draws the winning bid from hbserver's cache, in headless Chromium.

The AMP flow end to end through hbserver's real endpoints (reference real-clients-and-performance.md §2.3, §3):

1. hbserver (pbs.test) runs two bidders, ``alpha`` and ``beta``, as aliases of the generic OpenRTB adapter
   against mock bidders whose ``adm`` carries a marker and the ``${AUCTION_PRICE}`` macro; the AMP tag's
   stored request lives in a filesystem directory; ``cache.public_url`` is ``https://cache.test:<port>/cache``,
   a TLS reverse proxy that forwards ``/cache`` to hbserver unchanged and records every exchange.
2. The publisher page (page.test, standing in for the AMP runtime's RTC callout) fetches
   ``GET /openrtb2/amp?tag_id=...&__amp_source_origin=https://pub.test`` with credentials and reads ``targeting``.
3. Acting as the ad server, the test expands the package's own ``template/amp/dfp-creative.html`` with that
   targeting the way GAM expands its ``%%PATTERN:...%%`` macros (the jsDelivr script URL points at the
   package's dist file instead), serves it on cdn.test and the publisher page embeds it in a cross-site iframe.
4. ``ucTag.renderAd`` fetches ``https://{hb_cache_host}{hb_cache_path}?uuid={hb_cache_id}`` (scheme hard-coded
   to https) and writes the cached ``adm`` into the iframe's document: the winner's marker must appear with
   ``${AUCTION_PRICE}`` replaced by the cached bid's price, and the parent must be asked to resize to hb_size.

Both dist files with the AMP path run: ``amp.js`` (what ``hb_format``-based AMP setups load) and the legacy
``creative.js``, which takes the AMP path only when it finds itself in a cross-domain iframe with a uuid.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import aiohttp
import pytest
from aiohttp import web
from multidict import CIMultiDict

from tests.e2e.browser import harness
from tests.e2e.browser.rig import Rig, start_rig

TAG_ID = "amp-300x250"
WIDTH, HEIGHT = 300, 250
PRICES = {"alpha": 1.5, "beta": 0.9}
SOURCE_ORIGIN = "https://pub.test"
STORED_REQUEST = {
    "id": "amp-req",
    "site": {"page": "https://pub.test/a"},
    "imp": [
        {
            "id": "slot-1",
            "banner": {"format": [{"w": WIDTH, "h": HEIGHT}]},
            "ext": {"prebid": {"bidder": {seat: {} for seat in sorted(PRICES)}}},
        }
    ],
}
TEMPLATE = Path("template") / "amp" / "dfp-creative.html"
# The template loads the universal creative from jsDelivr; the ad server creative here loads the local copy.
JSDELIVR_SCRIPT = "https://cdn.jsdelivr.net/npm/prebid-universal-creative@latest/dist/%%PATTERN::hb_format%%.js"
# The iframe AMP gives a slot before the creative asks for its size (differs from hb_size on purpose).
FRAME_WIDTH, FRAME_HEIGHT = 320, 50
# Request headers the proxy does not pass on (hop-by-hop, or ones it must set itself), and response ones.
PROXY_DROPPED_REQUEST = frozenset({"host", "connection", "keep-alive", "transfer-encoding", "accept-encoding"})
PROXY_DROPPED_RESPONSE = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "content-length", "date", "server"}
)


def creative_markup(seat: str) -> str:
    return f'<div id="creative-{seat}" class="hbs-creative">{seat} wins ${{AUCTION_PRICE}}</div>'


def medium_bucket(price: float) -> str:
    """Prebid's "medium" price granularity (hbserver's default): $0.10 steps up to $20."""
    return f"{math.floor(min(price, 20.0) * 10 + 1e-9) / 10:.2f}"


def js_number(value: float) -> str:
    """How JavaScript prints a number in string concatenation (for prices like these)."""
    return str(int(value)) if value.is_integer() else repr(value)


def js_string_body(value: str) -> str:
    """``value`` fit between the double quotes of a JavaScript string inside a <script>."""
    return json.dumps(value)[1:-1].replace("</", "<\\/")


@dataclass
class Exchange:
    """One request the cache proxy forwarded to hbserver, and hbserver's answer."""

    method: str
    path_qs: str
    headers: dict[str, str]
    status: int
    response_headers: dict[str, str]
    body: bytes


class CacheProxy:
    """``cache.test``: a TLS reverse proxy passing any ``/cache`` request to hbserver unchanged (CORS headers
    included) and recording each exchange. ``upstream`` (hbserver's origin) is set once hbserver runs."""

    def __init__(self) -> None:
        self.upstream = ""
        self.exchanges: list[Exchange] = []
        self.app = web.Application()
        self.app.router.add_route("*", "/cache", self.forward)

    async def forward(self, request: web.Request) -> web.Response:
        if not self.upstream:
            raise web.HTTPServiceUnavailable(text="no upstream yet")
        headers = CIMultiDict((k, v) for k, v in request.headers.items() if k.lower() not in PROXY_DROPPED_REQUEST)
        body = await request.read()
        async with (
            aiohttp.ClientSession(auto_decompress=False) as http,
            http.request(
                request.method, self.upstream + request.path_qs, headers=headers, data=body or None, ssl=False
            ) as answer,
        ):
            payload = await answer.read()
            kept = CIMultiDict((k, v) for k, v in answer.headers.items() if k.lower() not in PROXY_DROPPED_RESPONSE)
            status = answer.status
        self.exchanges.append(
            Exchange(request.method, request.path_qs, dict(request.headers), status, dict(kept), payload)
        )
        return web.Response(status=status, body=payload, headers=kept)


def ad_server_creative(template: str, script_url: str, targeting: dict[str, str], page_url: str) -> str:
    """The package's GAM creative template with its macros expanded as GAM does for this impression:
    ``%%PATTERN:TARGETINGMAP%%`` becomes ``{"key": ["value"], ...}``, ``%%PATTERN:key%%`` the key's value
    (empty when not targeted), ``%%PATTERN:url%%`` the page URL; the script is loaded from ``script_url``."""
    assert JSDELIVR_SCRIPT in template, f"the template no longer loads {JSDELIVR_SCRIPT}:\n{template}"
    html = template.replace(JSDELIVR_SCRIPT, script_url)
    targeting_map = json.dumps({key: [value] for key, value in sorted(targeting.items())}).replace("</", "<\\/")

    def expand(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "TARGETINGMAP":
            return targeting_map
        if name == "url":
            return js_string_body(page_url)
        return js_string_body(targeting.get(name, ""))

    html = re.sub(r"%%PATTERN:(\w+)%%", expand, html)
    assert "%%" not in html, html
    return f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>ad</title></head><body>{html}</body></html>"


def amp_page() -> str:
    """The publisher page: an ad slot, and a listener recording AMP messages from creatives."""
    return """<!DOCTYPE html><html><head><meta charset="utf-8"><title>amp page</title>
<script>
window.ampMessages = [];
window.addEventListener('message', function (e) {
  if (e.data && e.data.sentinel === 'amp') { window.ampMessages.push(e.data); }
});
</script></head><body><div id="slot"></div></body></html>"""


# The AMP runtime's RTC callout: GET with credentials and Accept: application/json (reference §3.3).
RTC_FETCH_JS = """async (url) => {
  const response = await fetch(url, {credentials: 'include', headers: {Accept: 'application/json'}});
  return {
    status: response.status,
    sourceOrigin: response.headers.get('AMP-Access-Control-Allow-Source-Origin'),
    text: await response.text(),
  };
}"""

EMBED_JS = """([src, width, height]) => {
  const frame = document.createElement('iframe');
  frame.id = 'ad-frame'; frame.src = src; frame.width = String(width); frame.height = String(height);
  document.getElementById('slot').appendChild(frame);
}"""

RENDERED_JS = """() => [...document.querySelectorAll('.hbs-creative')].map(e => ({id: e.id, text: e.textContent}))"""

COMMENTS_JS = """() => {
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_COMMENT);
  const found = [];
  while (walker.nextNode()) { found.push(walker.currentNode.nodeValue); }
  return found;
}"""


@dataclass
class Seen:
    method: str
    url: str
    headers: dict[str, str]
    status: int | None = None


@dataclass
class AmpSession:
    rig: Rig
    page: Any
    bidders: harness.OrtbBidders
    proxy: CacheProxy
    cache_origin: str
    browser_requests: list[Seen] = field(default_factory=list)

    def detail(self) -> str:
        exchanges = [(e.method, e.path_qs, e.status, e.response_headers, e.body[:300]) for e in self.proxy.exchanges]
        return self.rig.detail() + f"\ncache proxy exchanges: {exchanges}"

    def to_cache_host(self) -> list[Seen]:
        return [seen for seen in self.browser_requests if seen.url.startswith(self.cache_origin + "/")]


@contextlib.asynccontextmanager
async def amp_session(tmp_path: Path, tls: ssl.SSLContext) -> AsyncIterator[AmpSession]:
    """Mock bidders, the cache proxy, hbserver (stored request, cache.public_url on cache.test) and the
    browser showing the publisher page."""
    dist = harness.require_puc()
    stored_dir = tmp_path / "amp_stored"
    (stored_dir / "stored_requests").mkdir(parents=True)
    (stored_dir / "stored_requests" / f"{TAG_ID}.json").write_text(json.dumps(STORED_REQUEST))
    bidders = harness.OrtbBidders(PRICES, creative_markup, WIDTH, HEIGHT)
    proxy = CacheProxy()
    async with contextlib.AsyncExitStack() as stack:
        bidder_port = await stack.enter_async_context(harness.serve(bidders.app, None))
        proxy_port = await stack.enter_async_context(harness.serve(proxy.app, tls))
        cache_origin = f"https://cache.test:{proxy_port}"
        config = {
            "adapters": {
                seat: {"alias_of": "generic", "endpoint": f"http://127.0.0.1:{bidder_port}/{seat}"} for seat in PRICES
            },
            "stored_requests": {"filesystem": {"directorypath": str(stored_dir)}},
            "cache": {"public_url": f"{cache_origin}/cache"},
        }
        rig = await stack.enter_async_context(start_rig(tmp_path, tls, config=config, files_dir=dist))
        proxy.upstream = f"https://127.0.0.1:{rig.pbs_port}"
        session = AmpSession(rig, None, bidders, proxy, cache_origin)
        by_request: dict[int, Seen] = {}

        def on_request(request: Any) -> None:
            seen = Seen(request.method, request.url, dict(request.headers))
            session.browser_requests.append(seen)
            by_request[id(request)] = seen

        def on_response(response: Any) -> None:
            seen = by_request.get(id(response.request))
            if seen is not None:
                seen.status = response.status

        rig.context.on("request", on_request)
        rig.context.on("response", on_response)
        session.page = await rig.open_page(amp_page(), "amp")
        yield session


async def rtc_targeting(session: AmpSession) -> dict[str, str]:
    """Step 2: the RTC callout to /openrtb2/amp from the publisher page; its ``targeting``."""
    rig = session.rig
    query = {"tag_id": TAG_ID, "w": WIDTH, "h": HEIGHT, "timeout": 800, "__amp_source_origin": SOURCE_ORIGIN}
    url = f"{rig.pbs}/openrtb2/amp?{urlencode(query)}"
    answer = await session.page.evaluate(RTC_FETCH_JS, url)
    assert answer["status"] == 200, f"{answer}\n{session.detail()}"
    assert answer["sourceOrigin"] == SOURCE_ORIGIN, answer
    body = json.loads(answer["text"])
    assert set(body) <= {"targeting", "ext"}, body
    assert not body.get("ext", {}).get("errors"), body
    targeting = body["targeting"]
    assert isinstance(targeting, dict) and all(isinstance(v, str) for v in targeting.values()), body
    return targeting


async def rendered_creative(session: AmpSession, creative_url: str) -> tuple[Any, list[dict[str, str]]]:
    """The creative iframe once something has been written into it: (frame, [{id, text}] of creatives)."""

    async def probe() -> tuple[Any, list[dict[str, str]]] | None:
        for frame in session.page.frames:
            if frame.url == creative_url:
                with contextlib.suppress(Exception):
                    shown = await frame.evaluate(RENDERED_JS)
                    if shown:
                        return frame, shown
        return None

    return await harness.wait_for(probe, "the universal creative to write the cached adm", detail=session.detail)


@pytest.mark.parametrize("script", ["amp.js", "creative.js"])
async def test_universal_creative_renders_the_winning_bid_from_hbservers_cache(tmp_path, tls, script):
    dist = harness.require_puc()
    harness.require((dist / script).is_file(), f"prebid-universal-creative has no dist/{script}")
    harness.require((dist.parent / TEMPLATE).is_file(), f"prebid-universal-creative has no {TEMPLATE}")
    async with amp_session(tmp_path, tls) as session:
        rig = session.rig
        winner = max(PRICES, key=PRICES.__getitem__)
        [loser] = set(PRICES) - {winner}

        # Step 2: the AMP auction. hbserver called both bidders with the stored imp, sized by w/h.
        targeting = await rtc_targeting(session)
        for seat, received in session.bidders.requests.items():
            assert len(received) == 1, f"{seat}: {received}\n{session.detail()}"
            [imp] = received[0]["imp"]
            assert imp["id"] == "slot-1" and imp["banner"]["format"] == [{"w": WIDTH, "h": HEIGHT}], imp
            assert received[0]["site"]["page"] == STORED_REQUEST["site"]["page"], received[0]["site"]
        cache_host = urlsplit(session.cache_origin).netloc
        expected = {
            "hb_pb": medium_bucket(PRICES[winner]),
            "hb_bidder": winner,
            "hb_size": f"{WIDTH}x{HEIGHT}",
            "hb_cache_host": cache_host,
            "hb_cache_path": "/cache",
            "hb_env": "amp",
        }
        assert {key: targeting.get(key) for key in expected} == expected, targeting
        cache_id = targeting.get("hb_cache_id", "")
        assert cache_id and cache_id == targeting.get(f"hb_cache_id_{winner}"), targeting
        loser_cache_id = targeting.get(f"hb_cache_id_{loser}", "")
        assert loser_cache_id and loser_cache_id != cache_id, targeting
        assert session.proxy.exchanges == [], "the cache was read before the creative ran"

        # Step 3: the ad server serves the universal creative with the targeting; AMP puts it in an iframe.
        template = (dist.parent / TEMPLATE).read_text()
        script_url = rig.page_url(f"/files/{script}", host="cdn.test")
        creative_path = f"/ad-{script.removesuffix('.js')}.html"
        rig.pages.pages[creative_path] = ad_server_creative(template, script_url, targeting, session.page.url)
        creative_url = rig.page_url(creative_path, host="cdn.test")
        await session.page.evaluate(EMBED_JS, [creative_url, FRAME_WIDTH, FRAME_HEIGHT])

        # Step 4: the winner's adm, from hbserver's cache, with ${AUCTION_PRICE} = the cached bid's price.
        frame, shown = await rendered_creative(session, creative_url)
        assert shown == [{"id": f"creative-{winner}", "text": f"{winner} wins {js_number(PRICES[winner])}"}], shown
        comments = await frame.evaluate(COMMENTS_JS)
        assert f"Creative cr-{winner} served by Prebid.js Header Bidding" in comments, comments

        # What the creative fetched: one CORS GET of https://{hb_cache_host}{hb_cache_path}?uuid={hb_cache_id}.
        cache_url = f"https://{targeting['hb_cache_host']}{targeting['hb_cache_path']}?uuid={cache_id}"
        fetched = session.to_cache_host()
        assert [(seen.method, seen.url, seen.status) for seen in fetched] == [("GET", cache_url, 200)], session.detail()
        creative_origin = rig.page_url("", host="cdn.test")
        assert fetched[0].headers.get("origin") == creative_origin, fetched[0].headers
        [exchange] = session.proxy.exchanges
        assert (exchange.method, exchange.path_qs, exchange.status) == ("GET", f"/cache?uuid={cache_id}", 200)
        assert exchange.headers.get("Origin") == creative_origin, exchange.headers
        assert exchange.response_headers.get("Access-Control-Allow-Origin") == creative_origin, exchange
        cached_bid = json.loads(exchange.body)
        assert cached_bid["adm"] == creative_markup(winner), cached_bid
        assert (cached_bid["price"], cached_bid["crid"]) == (PRICES[winner], f"cr-{winner}"), cached_bid

        # The cached bid carries the win URL (wurl), and the creative called it: hbserver's /event.
        win_prefix = f"{rig.pbs}/event?t=win&b="
        assert cached_bid.get("wurl", "").startswith(win_prefix) and f"&bidder={winner}&" in cached_bid["wurl"]

        async def win_called() -> list[Seen]:
            return [seen for seen in session.browser_requests if seen.url == cached_bid["wurl"]]

        [win] = await harness.wait_for(win_called, "the creative to call the win URL", detail=session.detail)
        assert win.method == "GET"

        # The creative asked its AMP parent to resize the slot to hb_size.
        messages = await session.page.evaluate("() => window.ampMessages")
        assert {"sentinel": "amp", "type": "embed-size", "width": WIDTH, "height": HEIGHT} in messages, messages
