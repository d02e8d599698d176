"""No input from a client or a bidder can cause a 500 (issue 15, part A).

One table: each row is one exact input that once answered 500 (or a 5xx/4xx of the wrong class),
sent through the real application in-process. Requests go over a raw socket so that header bytes
that are not UTF-8 reach the server as they are. Two mock bidders (``alpha``, ``beta``) bid on
every auction; ``beta`` sends a bid nested deeper than JSON output allows when a row asks.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson
import pytest

from hbserver.auction.common.mergepatch import merge_patch
from hbserver.web.body import MAX_JSON_DEPTH, JsonTooDeep, loads_json
from tests.auction.helpers import bid, bidder_config
from tests.e2e.helpers import free_port

IMP = "slot-1"
LONG_DIGITS = "9" * 5000  # int() refuses more than 4300 digits
BAD_UTF8 = b"Mozilla/5.0 \xff\xfe\xc3(bad)"


def nest(levels: int) -> Any:
    """A JSON value ``levels`` containers deep."""
    value: Any = {}
    for _ in range(levels - 1):
        value = {"d": value}
    return value


def deep(levels: int) -> str:
    """A stand-in for a value ``levels`` containers deep, expanded by :func:`to_json` (the stdlib
    encoder recurses, and stops near 1,000 levels)."""
    return f"@deep:{levels}@"


def to_json(value: Any) -> bytes:
    text = json.dumps(value)
    return re.sub(r'"@deep:(\d+)@"', lambda m: '{"d":' * (int(m[1]) - 1) + "{}" + "}" * (int(m[1]) - 1), text).encode()


def depth(value: Any) -> int:
    best, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            best = max(best, level)
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return best


def auction(*changes: Callable[[dict[str, Any]], Any], test: bool = False, cache: bool = True) -> dict[str, Any]:
    request: dict[str, Any] = {
        "id": "req-1",
        "tmax": 500,
        "imp": [
            {
                "id": IMP,
                "banner": {"format": [{"w": 300, "h": 250}]},
                "ext": {"prebid": {"bidder": {"alpha": {"p": 1}, "beta": {"p": 2}}}},
            }
        ],
        "site": {"page": "https://news.example/a", "publisher": {"id": "1001"}},
        "device": {"ua": "test-agent", "ip": "203.0.113.77"},
        "ext": {"prebid": {"targeting": {"pricegranularity": "medium"}}},
    }
    if cache:
        request["ext"]["prebid"]["cache"] = {"bids": {}}
    if test:
        request["test"] = 1
    for change in changes:
        change(request)
    return request


def amp_stored(**fields: Any) -> dict[str, Any]:
    imp = {
        "id": IMP,
        "banner": {"format": [{"w": 300, "h": 250}]},
        "ext": {"prebid": {"bidder": {"alpha": {"p": 1}, "beta": {"p": 2}}}},
    }
    return {"id": "amp-req", "site": {"page": "https://pub.example/a"}, "imp": [imp], **fields}


# --- what a row expects of a 200 ----------------------------------------------------------------


def alpha_wins(data: dict[str, Any]) -> None:
    """The auction went on: alpha's bid is there and nobody has an error."""
    seats = {seat["seat"]: seat["bid"] for seat in data.get("seatbid", [])}
    assert seats["alpha"][0]["id"] == "a1", data
    assert "errors" not in data["ext"], data["ext"].get("errors")


def deep_bid_dropped(data: dict[str, Any]) -> None:
    """beta's too-deep bid is dropped with a code 3 error for beta; alpha's bid is unaffected."""
    seats = {seat["seat"]: seat["bid"] for seat in data.get("seatbid", [])}
    assert list(seats) == ["alpha"], data
    assert seats["alpha"][0]["id"] == "a1"
    assert data["ext"]["errors"] == {
        "beta": [{"code": 3, "message": f'Bid "deep" is nested more than {MAX_JSON_DEPTH} levels deep'}]
    }


def amp_alpha_wins(data: dict[str, Any]) -> None:
    assert data["targeting"]["hb_bidder"] == "alpha", data
    assert data["targeting"]["hb_cache_id"]
    assert "errors" not in data.get("ext", {}), data["ext"]


def amp_deep_bid_dropped(data: dict[str, Any]) -> None:
    assert data["targeting"]["hb_bidder"] == "alpha", data
    assert "hb_bidder_beta" not in data["targeting"]
    assert data["ext"]["errors"] == {
        "beta": [{"code": 3, "message": f'Bid "deep" is nested more than {MAX_JSON_DEPTH} levels deep'}]
    }


def amp_warned(code: int, text: str) -> Callable[[dict[str, Any]], None]:
    def check(data: dict[str, Any]) -> None:
        assert data["targeting"]["hb_bidder"] == "alpha", data
        warnings = data["ext"]["warnings"]["general"]
        assert any(w["code"] == code and text in w["message"] for w in warnings), warnings

    return check


def amp_consent_ids(ids: list[int] | None) -> Callable[[dict[str, Any]], None]:
    def check(data: dict[str, Any]) -> None:
        amp_alpha_wins(data)
        user_ext = data["ext"]["debug"]["resolvedrequest"]["user"]["ext"]
        assert user_ext.get("consented_providers_settings", {}).get("consented_providers") == ids

    return check


def amp_sizes(formats: list[dict[str, int]]) -> Callable[[dict[str, Any]], None]:
    def check(data: dict[str, Any]) -> None:
        amp_alpha_wins(data)
        assert data["ext"]["debug"]["resolvedrequest"]["imp"][0]["banner"]["format"] == formats

    return check


def sent_device(field_name: str, expected: Any) -> Callable[[dict[str, Any], Any], None]:
    """alpha got ``device.<field_name>`` == expected (None: absent)."""

    def check(data: dict[str, Any], bidders: Any) -> None:
        alpha_wins(data)
        assert bidders.received["alpha"][0]["device"].get(field_name) == expected

    return check


def sent_site(**expected: Any) -> Callable[[dict[str, Any], Any], None]:
    def check(data: dict[str, Any], bidders: Any) -> None:
        alpha_wins(data)
        site = bidders.received["alpha"][0]["site"]
        for key, value in expected.items():
            assert site.get(key) == value, site

    return check


# --- the table ----------------------------------------------------------------------------------


@dataclass
class Row:
    id: str
    method: str
    target: str
    body: Any = None  # bytes as they are, anything else as JSON (see to_json)
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    status: int = 200
    text: str = ""  # the response body contains it
    check: Callable[..., None] | None = None  # (data) or (data, bidders) for a JSON 200
    beta: str = "normal"  # "deep": beta's bid carries an ext nested 300 deep
    files: dict[str, Any] = field(default_factory=dict)  # data_dir-relative path -> content
    config: Callable[[], dict[str, Any]] | None = None
    not_in_text: tuple[str, ...] = ()


def post(target: str, body: Any, **kw: Any) -> dict[str, Any]:
    return {"method": "POST", "target": target, "body": body, **kw}


def get(target: str, **kw: Any) -> dict[str, Any]:
    return {"method": "GET", "target": target, **kw}


def amp(query: str, **kw: Any) -> dict[str, Any]:
    files = {"stored_requests/amp1.json": amp_stored(), **kw.pop("files", {})}
    return get(f"/openrtb2/amp?tag_id=amp1&{query}", files=files, **kw)


GZIP = [(b"Content-Encoding", b"gzip")]
VTRACK_BODY = {"puts": [{"bidid": "b", "bidder": "x", "type": "xml", "value": "<VAST></VAST>"}]}


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """A request change: ``path`` (dot-separated, ints index lists) set to ``value``."""

    def change(request: dict[str, Any]) -> None:
        keys: list[Any] = [int(k) if k.isdigit() else k for k in path.split(".")]
        target: Any = request
        for key in keys[:-1]:
            target = target[key] if isinstance(target, list) else target.setdefault(key, {})
        target[keys[-1]] = value

    return change


def _pop(path: str) -> Callable[[dict[str, Any]], None]:
    def change(request: dict[str, Any]) -> None:
        keys: list[Any] = [int(k) if k.isdigit() else k for k in path.split(".")]
        target: Any = request
        for key in keys[:-1]:
            target = target[key]
        del target[keys[-1]]

    return change


def stored_ref(stored_id: str) -> Callable[[dict[str, Any]], None]:
    return _set("ext.prebid.storedrequest", {"id": stored_id})


def db_down() -> dict[str, Any]:
    return {"stored_requests": {"database": {"dsn": f"postgresql://hbs@127.0.0.1:{free_port()}/test"}}}


def http_down() -> dict[str, Any]:
    port = free_port()  # bound, then released: nothing listens there
    return {
        "stored_requests": {
            "http": {
                "endpoint": f"http://127.0.0.1:{port}/stored",
                "amp_endpoint": f"http://127.0.0.1:{port}/stored-amp",
            }
        }
    }


LEAKS = ("127.0.0.1", "/stored", "http://", "postgresql://")
TYPED_EXT = "Invalid request: req.ext is invalid: cannot unmarshal openrtb_ext."  # PBS-Go typed unmarshal
INVALID_BODY = "Invalid request: request body is nested more than 64 levels deep"
SITE_DEPTH_64 = auction(_set("site.ext.data", nest(61)))
SITE_DEPTH_65 = auction(_set("site.ext.data", nest(62)))

ROWS = [
    # 1. one bidder's unserialisable bid costs only that bid
    Row(**post("/openrtb2/auction", auction(cache=False)), beta="deep", check=deep_bid_dropped, id="deep-bid"),
    Row(**post("/openrtb2/auction", auction()), beta="deep", check=deep_bid_dropped, id="deep-bid-cached"),
    Row(**post("/openrtb2/auction", auction(test=True)), beta="deep", check=deep_bid_dropped, id="deep-bid-debug"),
    Row(**amp(""), beta="deep", check=amp_deep_bid_dropped, id="deep-bid-amp"),
    Row(**amp("debug=1"), beta="deep", check=amp_deep_bid_dropped, id="deep-bid-amp-debug"),
    Row(
        **post(
            "/openrtb2/auction",
            auction(_set("imp.0.ext.prebid.storedbidresponse", [{"bidder": "beta", "id": "deepbid"}])),
            files={
                "stored_responses/deepbid.json": {
                    "id": "r",
                    "seatbid": [{"bid": [bid(IMP, 1.0, "deep", ext=nest(300))]}],
                }
            },
        ),
        check=deep_bid_dropped,
        id="deep-stored-bid-response",
    ),
    # 2. one depth limit wherever JSON enters
    Row(**post("/openrtb2/auction", SITE_DEPTH_64), check=alpha_wins, id="body-depth-64-ok"),
    Row(**post("/openrtb2/auction", SITE_DEPTH_65), status=400, text=INVALID_BODY, id="body-depth-65"),
    Row(
        **post("/openrtb2/auction", auction(_set("site.ext.data", nest(300)), test=True)),
        status=400,
        text=INVALID_BODY,
        id="body-depth-300-debug",
    ),
    Row(
        **post("/openrtb2/auction", auction(stored_ref("sr1"), _set("site.ext.data", deep(1000)))),
        files={"stored_requests/sr1.json": {"site": {"ext": {"data": {}}}}},
        status=400,
        text=INVALID_BODY,
        id="body-depth-1000-merged",
    ),
    Row(
        **post("/openrtb2/auction", auction(stored_ref("sr2"))),
        files={"stored_requests/sr2.json": {"site": {"ext": {"data": deep(1000)}}}},
        status=400,
        text=f'Invalid request: Stored Request with ID="sr2" is not valid JSON: nested more than {MAX_JSON_DEPTH}',
        id="stored-request-depth-1000",
    ),
    Row(
        **post("/openrtb2/auction", auction(_set("imp.0.ext.prebid.storedrequest", {"id": "si1"}))),
        files={"stored_imps/si1.json": {"ext": {"data": nest(300)}}},
        status=400,
        text=f'Invalid request: Stored Imp with ID="si1" is not valid JSON: nested more than {MAX_JSON_DEPTH}',
        id="stored-imp-depth-300",
    ),
    Row(
        **post(
            "/openrtb2/auction",
            auction(_set("imp.0.ext.prebid.storedauctionresponse", {"id": "deepauction"})),
        ),
        files={"stored_responses/deepauction.json": [{"seat": "alpha", "bid": [bid(IMP, 1.0, ext=nest(300))]}]},
        status=400,
        text='Invalid request: Stored Response with ID="deepauction" is not valid JSON: nested more than',
        id="stored-auction-response-depth-300",
    ),
    Row(
        **amp("debug=1", files={"stored_requests/amp1.json": amp_stored(site={"page": "p", "ext": deep(1000)})}),
        status=400,
        text="Invalid request: the stored request for tag_id amp1 is not valid JSON: nested more than 64",
        id="amp-stored-depth-1000",
    ),
    Row(
        **amp("debug=1&targeting=" + quote(json.dumps(nest(300)))),
        check=amp_warned(2, "nested more than 64 levels deep"),
        id="amp-targeting-depth-300-debug",
    ),
    Row(
        **amp("debug=1&targeting=" + quote(json.dumps({"k": nest(64)}))),
        check=amp_warned(2, "nested more than 64 levels deep"),
        id="amp-targeting-depth-65-debug",
    ),
    Row(
        **post("/cookie_sync", {"bidders": ["alpha"], "x": nest(300)}),
        status=400,
        text="nested more than 64 levels deep",
        id="cookie-sync-depth-300",
    ),
    Row(
        **post("/cache", {"puts": [{"type": "json", "value": nest(300)}]}),
        status=400,
        id="cache-depth-300",
    ),
    # 3. headers alone
    Row(
        **post("/openrtb2/auction", auction(_pop("device.ua"), test=True), headers=[(b"User-Agent", BAD_UTF8)]),
        check=sent_device("ua", "Mozilla/5.0 \ufffd\ufffd\ufffd(bad)"),
        id="user-agent-not-utf8-debug",
    ),
    Row(
        **post("/openrtb2/auction", auction(_pop("device.ua")), headers=[(b"User-Agent", BAD_UTF8)]),
        check=sent_device("ua", "Mozilla/5.0 \ufffd\ufffd\ufffd(bad)"),
        id="user-agent-not-utf8",
    ),
    Row(
        **post(
            "/openrtb2/auction",
            auction(_pop("device.ip"), test=True),
            headers=[(b"X-Forwarded-For", b"\xff\xfe1.2.3.4, 10.0.0.1")],
        ),
        check=sent_device("ip", None),  # nothing public: the peer 127.0.0.1 is private (PBS-Go FindIP)
        id="x-forwarded-for-not-utf8",
    ),
    Row(
        **post(
            "/openrtb2/auction",
            auction(_pop("device.ip"), test=True),
            headers=[(b"X-Real-IP", b"\xc3\x28")],
        ),
        check=sent_device("ip", None),  # nothing public: the peer 127.0.0.1 is private (PBS-Go FindIP)
        id="x-real-ip-not-utf8",
    ),
    Row(
        **post(
            "/openrtb2/auction",
            auction(_pop("device.ip"), test=True),
            headers=[(b"X-Forwarded-For", b"<script>, 10.0.0.1")],
        ),
        check=sent_device("ip", None),  # nothing public: the peer 127.0.0.1 is private (PBS-Go FindIP)
        id="x-forwarded-for-not-an-address",
    ),
    Row(
        **post(
            "/openrtb2/auction",
            auction(_set("site", {"id": "s1", "publisher": {"id": "1001"}}), test=True),
            headers=[(b"Referer", b"http://[::1")],
        ),
        check=sent_site(page="http://[::1", domain=None),
        id="referer-unclosed-ipv6",
    ),
    Row(
        **post(
            "/openrtb2/auction",
            auction(_set("site", {"id": "s1", "publisher": {"id": "1001"}}), test=True),
            headers=[(b"Referer", b"https://pub.example/\xff")],
        ),
        check=sent_site(page="https://pub.example/\ufffd", domain="pub.example"),
        id="referer-not-utf8",
    ),
    Row(
        **post("/openrtb2/auction", auction(_set("site.page", "http://["), test=True)),
        check=sent_site(page="http://[", domain=None),
        id="site-page-unclosed-ipv6",
    ),
    Row(
        **post("/openrtb2/auction", auction(test=True), headers=[(b"Cookie", b"hc=\xff\xfe")]),
        config=lambda: {"host_cookie": {"family": "generic", "cookie_name": "hc"}},
        check=alpha_wins,
        id="host-cookie-not-utf8",
    ),
    Row(**amp("curl=" + quote("http://[")), check=amp_alpha_wins, id="amp-curl-unclosed-ipv6"),
    Row(**amp("debug=1", headers=[(b"User-Agent", BAD_UTF8)]), check=amp_alpha_wins, id="amp-user-agent-not-utf8"),
    # 4. more client-triggered 500s
    Row(**post("/openrtb2/auction", b"not gzip", headers=GZIP), status=400, text="gzip", id="gzip-auction"),
    Row(**post("/cookie_sync", b"not gzip", headers=GZIP), status=400, text="gzip", id="gzip-cookie-sync"),
    Row(**post("/vtrack?a=1", b"not gzip", headers=GZIP), status=400, text="gzip", id="gzip-vtrack"),
    Row(**post("/cache", b"not gzip", headers=GZIP), status=400, text="gzip", id="gzip-cache"),
    Row(
        **post("/openrtb2/auction", gzip.compress(json.dumps(auction()).encode())[:30], headers=GZIP),
        status=400,
        text="Invalid request: request body is",
        id="gzip-auction-truncated",  # aiohttp: partial
    ),
    Row(**amp("timeout=%C2%B2"), status=400, text="Invalid request: timeout must be", id="amp-timeout-superscript"),
    Row(**amp("timeout=" + LONG_DIGITS), check=amp_alpha_wins, id="amp-timeout-5000-digits"),
    Row(**amp("debug=1&w=" + "9" * 4000 + "&h=250"), check=amp_sizes([{"w": 300, "h": 250}]), id="amp-w-4000-digits"),
    Row(
        **amp("debug=1&ms=" + "9" * 4000 + "x250"),
        status=400,
        text="Invalid request: Request imp[0].banner.format[0] must define non-zero",
        id="amp-ms-4000-digits",
    ),
    Row(**amp("debug=1&addtl_consent=1~1.%C2%B2"), check=amp_consent_ids([1]), id="amp-addtl-consent-superscript"),
    Row(
        **amp("debug=1&addtl_consent=1~7." + "9" * 30),
        check=amp_consent_ids([7]),
        id="amp-addtl-consent-huge-id",
    ),
    Row(
        **get(f"/event?t=win&b=bid1&a=1001&ts={LONG_DIGITS}"),
        status=400,
        text="Timestamp 'ts' query parameter is not valid number",
        id="event-ts-5000-digits",
    ),
    Row(  # found in review: the filesystem refused the name, which was a 500
        **get("/event?t=win&b=bid1&a=" + "%C3%A9" * 150),
        status=200,
        id="event-account-too-long-in-utf8",
    ),
    Row(
        **post("/openrtb2/auction", auction(_set("ext.prebid.currency", {"rates": 1}))),
        status=400,
        text=TYPED_EXT + "ExtRequestCurrency.ConversionRates: expect { or n, but found 1",
        id="rates-number",
    ),
    Row(
        **post("/openrtb2/auction", auction(_set("ext.prebid.currency", {"rates": {"EUR": {"USD": ""}}}))),
        status=400,
        text=TYPED_EXT + "ExtRequestCurrency.ConversionRates: invalid number",
        id="rates-empty-string",
    ),
    Row(
        **post("/openrtb2/auction", auction(_set("ext.prebid.currency", {"rates": {"EUR": 5}}))),
        status=400,
        text=TYPED_EXT + "ExtRequestCurrency.ConversionRates: expect { or n, but found 5",
        id="rates-row",
    ),
    Row(
        **post("/openrtb2/auction", auction(_set("ext.prebid.currency", "USD"))),
        status=400,
        text=TYPED_EXT + "ExtRequestPrebid.CurrencyConversions: expect { or n, but found \"",
        id="currency-string",
    ),
    Row(
        **post("/openrtb2/auction", auction(_set("site.publisher.ext", {"prebid": "x"}))),
        check=alpha_wins,
        id="publisher-ext-prebid-string",
    ),
    Row(
        **post("/openrtb2/auction", auction(_set("imp.0.banner", {"ext": "x"}))),
        status=400,
        text="Invalid request: request.imp[0].banner has no sizes",
        id="banner-ext-string",
    ),
    Row(
        **post(
            "/openrtb2/auction",
            auction(_set("ext.prebid.targeting.pricegranularity", {"ranges": [{"max": 20, "increment": 1e-320}]})),
        ),
        status=400,
        text="Invalid request: Price granularity error: increment",
        id="granularity-tiny-increment",
    ),
    Row(
        **post(
            "/openrtb2/auction",
            auction(
                _set(
                    "ext.prebid.targeting.mediatypepricegranularity",
                    {"banner": {"ranges": [{"max": 20, "increment": 1e-320}]}},
                )
            ),
        ),
        status=400,
        text="Invalid request: Price granularity error: increment",
        id="media-granularity-tiny-increment",
    ),
    # 5. status classes: the client's fault is 4xx, the backend's 5xx, and no internal address leaks
    Row(
        **post("/openrtb2/auction", auction(stored_ref("sr-db"))),
        config=db_down,
        status=503,
        text='Stored Request with ID="sr-db" could not be fetched',
        not_in_text=LEAKS,
        id="stored-request-database-down",
    ),
    Row(
        **post("/openrtb2/auction", auction(_set("imp.0.ext.prebid.storedrequest", {"id": "si-db"}))),
        config=db_down,
        status=503,
        text='Stored Imp with ID="si-db" could not be fetched',
        not_in_text=LEAKS,
        id="stored-imp-database-down",
    ),
    Row(
        **post("/openrtb2/auction", auction(stored_ref("sr-http"))),
        config=http_down,
        status=503,
        text='Stored Request with ID="sr-http" could not be fetched',
        not_in_text=LEAKS,
        id="stored-request-http-down",
    ),
    Row(
        **post("/openrtb2/auction", auction(_set("imp.0.ext.prebid.storedauctionresponse", {"id": "sar-db"}))),
        config=db_down,
        status=503,
        text='Stored Response with ID="sar-db" could not be fetched',
        not_in_text=LEAKS,
        id="stored-response-database-down",
    ),
    Row(
        **get("/openrtb2/amp?tag_id=amp-db"),
        config=db_down,
        status=503,
        text='Stored Request with ID="amp-db" could not be fetched',
        not_in_text=LEAKS,
        id="amp-database-down",
    ),
    Row(
        **get("/openrtb2/amp?tag_id=amp-http"),
        config=http_down,
        status=503,
        text='Stored Request with ID="amp-http" could not be fetched',
        not_in_text=LEAKS,
        id="amp-http-down",
    ),
    Row(
        **get("/openrtb2/amp?tag_id=bad%01id"),
        status=400,
        text="Invalid request: tag_id is invalid: contains control characters",
        id="amp-tag-id-control-character",
    ),
    Row(
        **get("/openrtb2/amp?tag_id=" + "t" * 201),
        status=400,
        text="Invalid request: tag_id is invalid: longer than",
        id="amp-tag-id-too-long",
    ),
    Row(
        **get("/openrtb2/amp?tag_id=" + quote("é" * 150)),
        status=400,
        text="Invalid request: tag_id is invalid: longer than",
        id="amp-tag-id-too-long-in-utf8",
    ),
    Row(
        **get("/openrtb2/amp?tag_id=" + quote("é" * 150)),
        config=db_down,
        status=400,
        text="Invalid request: tag_id is invalid: longer than",
        id="amp-tag-id-too-long-in-utf8-database",
    ),
    Row(
        **post("/openrtb2/auction", auction(stored_ref("é" * 150))),
        status=400,
        text="Invalid request: request.ext.prebid.storedrequest.id is invalid: longer than",
        id="stored-request-id-too-long-in-utf8",
    ),
    Row(
        **post("/openrtb2/auction", auction(stored_ref("x\x01"))),
        config=db_down,
        status=400,
        text="Invalid request: request.ext.prebid.storedrequest.id is invalid: contains control characters",
        id="stored-request-id-control-character-database",
    ),
]


async def raw_request(
    client: Any, method: str, target: str, headers: list[tuple[bytes, bytes]], body: bytes
) -> tuple[int, bytes]:
    """One HTTP/1.1 exchange over a plain socket: header bytes are sent exactly as given."""
    reader, writer = await asyncio.open_connection(client.host, client.port)
    lines = [f"{method} {target} HTTP/1.1".encode("ascii"), b"Host: 127.0.0.1", b"Connection: close"]
    lines += [name + b": " + value for name, value in headers]
    if method == "POST":
        lines.append(b"Content-Length: %d" % len(body))
    writer.write(b"\r\n".join(lines) + b"\r\n\r\n" + body)
    data = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    head, _, payload = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    if b"transfer-encoding: chunked" in head.lower():
        payload = _unchunk(payload)
    return status, payload


def _unchunk(data: bytes) -> bytes:
    out = b""
    while data:
        size_line, _, rest = data.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            break
        out += rest[:size]
        data = rest[size + 2 :]
    return out


def _write(data_dir: Path, files: dict[str, Any]) -> None:
    for name, content in files.items():
        path = data_dir / name
        path.write_bytes(content.encode() if isinstance(content, str) else to_json(content))


@pytest.mark.parametrize("row", [pytest.param(r, id=r.id) for r in ROWS])
async def test_input_never_causes_a_500(row: Row, make_client, bidders, data_dir: Path) -> None:
    bidders.bids["alpha"] = [bid(IMP, 1.87, "a1")]
    beta_bid = bid(IMP, 0.5, "b1") if row.beta == "normal" else bid(IMP, 9.0, "deep", ext=nest(300))
    bidders.bids["beta"] = [beta_bid]
    _write(data_dir, row.files)
    config = bidder_config(bidders, "alpha", "beta")
    if row.config is not None:
        config.update(row.config())
    client = await make_client(config)
    body = row.body if isinstance(row.body, bytes) else (to_json(row.body) if row.body else b"")
    status, payload = await raw_request(client, row.method, row.target, row.headers, body)
    text = payload.decode("utf-8", "replace")
    assert status == row.status, text[:2000]
    assert row.text in text, text[:2000]
    for leak in row.not_in_text:
        assert leak not in text, text
    if row.check is not None:
        data = orjson.loads(payload)
        if row.check.__code__.co_argcount == 2:
            row.check(data, bidders)
        else:
            row.check(data)


# --- the shared reader: the cheap bound and the exact check agree --------------------------------


@pytest.mark.parametrize(
    "text",
    [
        b"[]",
        b'{"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}',  # brackets in strings
        b"[" * 64 + b"]" * 64,
        json.dumps([{"k": [1, {"x": []}]} for _ in range(200)]).encode(),  # many brackets, shallow
    ],
)
def test_loads_json_accepts_up_to_the_limit(text: bytes) -> None:
    assert loads_json(text) == json.loads(text)


@pytest.mark.parametrize(
    "text",
    [b"[" * 65 + b"]" * 65, json.dumps([1, {"a": nest(64)}]).encode(), to_json(deep(1024))],
)
def test_loads_json_refuses_deeper(text: bytes) -> None:
    with pytest.raises(JsonTooDeep, match="nested more than 64 levels deep"):
        loads_json(text)
    assert issubclass(JsonTooDeep, orjson.JSONDecodeError)  # callers' existing except clauses catch it


def test_depth_helper_and_boundary_rows() -> None:
    assert depth(SITE_DEPTH_64) == MAX_JSON_DEPTH and depth(SITE_DEPTH_65) == MAX_JSON_DEPTH + 1


# --- merge patch: iterative, so no depth reaches the recursion limit -----------------------------


@pytest.mark.parametrize(
    ("target", "patch", "merged"),
    [  # RFC 7386, appendix A (a selection), and key order kept as the recursive version kept it
        ({"a": "b"}, {"a": "c"}, {"a": "c"}),
        ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
        ({"a": "b"}, {"a": None}, {}),
        ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
        ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
        ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
        ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
        ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
        ({"x": 1, "a": {"p": 1, "q": 2}}, {"a": {"r": 3, "p": None}, "b": 2}, {"x": 1, "a": {"q": 2, "r": 3}, "b": 2}),
    ],
)
def test_merge_patch(target: Any, patch: Any, merged: Any) -> None:
    result = merge_patch(target, patch)
    assert result == merged and list(result) == list(merged)


def test_merge_patch_of_any_depth() -> None:
    patch = orjson.loads(to_json(deep(1000)))  # a recursive merge stops near 1,000 (orjson reads 1,024)
    assert depth(merge_patch({"d": {"x": 1}}, patch)) == 1000


def test_python_walk_agrees_with_the_orjson_check() -> None:
    """The fallback for an orjson without a known depth limit gives the same answers."""
    from hbserver.web.body import _deeper_than_limit, _walk_deeper

    for levels in (1, 2, 63, 64, 65, 300):
        for value in (nest(levels), orjson.loads(b"[" * levels + b"]" * levels), [1, {"a": nest(levels)}]):
            assert _walk_deeper(value) == _deeper_than_limit(value) == (depth(value) > MAX_JSON_DEPTH)
