"""Every numeric field of every endpoint given numbers no parser should take: Unicode digits ("²",
"٣", fullwidth "1"), thousands of digits, values past int32/int64/uint64, in query parameters, JSON bodies,
the uids cookie and bidder params. Whatever comes in, the answer is below 500, no traceback is
logged, and no adapter fails (each field is either left valid or made hostile, independently).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import AUCTION, Harness, below_500, encode
from tests.fuzz.strategies import NUMERIC, NUMERIC_TEXT

VAST = '<VAST version="3.0"><Ad id="1"><InLine><Impression>https://x.example/i</Impression></InLine></Ad></VAST>'
# (method, path, query, body, headers)
Call = tuple[str, str, dict[str, str], bytes | None, dict[str, str]]


def _leaves(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The paths of ``node``'s numbers."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _leaves(value, (*prefix, index))
    elif isinstance(node, int | float) and not isinstance(node, bool):
        yield prefix


def _put(node: Any, path: tuple[Any, ...], value: Any) -> Any:
    """``node`` with ``value`` at ``path`` (objects made where missing)."""
    if not path:
        return value
    key, rest = path[0], path[1:]
    if isinstance(node, list) and isinstance(key, int) and key < len(node):
        return [_put(item, rest, value) if i == key else item for i, item in enumerate(node)]
    base = dict(node) if isinstance(node, dict) else {}
    base[key] = _put(base.get(key), rest, value)
    return base


_TARGETING = [{"key": "hb_x", "source": "bidrequest", "value": "imp.banner.format.[0].w"}]
_AUCTION_BASE = _put(AUCTION, ("ext", "prebid", "adservertargeting"), _TARGETING)
AUCTION_FIELDS: dict[str, tuple[Any, ...]] = {".".join(map(str, p)): p for p in _leaves(_AUCTION_BASE)} | {
    name: tuple(name.split(".")) for name in (
        "regs.gdpr", "regs.coppa", "regs.gpp_sid", "device.geo.lat", "device.lmt", "imp.0.bidfloor", "imp.0.instl",
        "imp.0.banner.w", "imp.0.exp", "user.yob", "ext.prebid.debug", "ext.prebid.targeting.pricegranularity",
        "ext.prebid.cache.bids.ttlseconds", "ext.prebid.cache.vastxml.ttlseconds", "source.ext.schain.complete",
    )
}
ADAPTER_PARAMS = {
    "appnexus.placementId": ("appnexus", "placementId"), "appnexus.placement_id": ("appnexus", "placement_id"),
    "appnexus.member": ("appnexus", "member"), "connectad.networkId": ("connectad", "networkId"),
    "connectad.siteId": ("connectad", "siteId"),
}


def _path(name: str) -> tuple[Any, ...]:
    return tuple(int(part) if isinstance(part, str) and part in "0123" else part for part in AUCTION_FIELDS[name])


def _auction(values: dict[str, Any]) -> Call:
    body = _AUCTION_BASE
    for name, value in values.items():
        if name in ADAPTER_PARAMS:
            bidder, field = ADAPTER_PARAMS[name]
            params = {"appnexus": {"placementId": 1}, "connectad": {"networkId": 1, "siteId": 1}}[bidder]
            for index in range(len(body["imp"])):
                path = ("imp", index, "ext", "prebid", "bidder", bidder)
                body = _put(body, path, {**params, field: value})
        elif name == "adservertargeting.index":
            body = _put(body, ("ext", "prebid", "adservertargeting", 0, "value"), f"imp.banner.format.[{value}].w")
        else:
            body = _put(body, _path(name), value)
    return "POST", "/openrtb2/auction", {}, encode(body), {}


def _topics(values: dict[str, Any]) -> Call:
    """Sec-Browsing-Topics (PBS-Go's Atoi on each topic id and on the taxonomy version)."""
    field = f"({values.get('id', 1)} 2);v=chrome.1:{values.get('taxonomy', 1)}:2"
    return "POST", "/openrtb2/auction", {}, encode(_AUCTION_BASE), {"Sec-Browsing-Topics": field}


def _vtrack(values: dict[str, Any]) -> Call:
    put = {"bidid": "b1", "bidder": "alpha", "type": "xml", "value": VAST, "ttlseconds": 60, **values}
    return "POST", "/vtrack", {"a": "acct-1"}, encode({"puts": [put]}), {}


def _cache(values: dict[str, Any]) -> Call:
    return "POST", "/cache", {}, encode({"puts": [{"type": "json", "value": {"a": 1}, **values}]}), {}


def _cookie_sync(values: dict[str, Any]) -> Call:
    body = {"bidders": ["alpha", "appnexus"], "gdpr": 0, "limit": 2, **values}
    return "POST", "/cookie_sync", {}, encode(body), {}


def _query(method: str, path: str, base: dict[str, str]) -> Callable[[dict[str, Any]], Call]:
    def build(values: dict[str, Any]) -> Call:
        query = {**base, **values}
        if "ms" in values:
            query["ms"] = f"{values['ms']}x250"
        if "addtl_consent" in values:
            query["addtl_consent"] = f"1~{values['addtl_consent']}.2"
        return method, path, query, None, {}

    return build


def _uids(values: dict[str, Any]) -> Call:
    expires = values.get("expires", "2030-01-01T00:00:00Z")
    if "year" in values:
        expires = f"{values['year']}-01-01T00:00:00Z"
    document = {"tempUIDs": {"adnxs": {"uid": "u1", "expires": expires}}}
    cookie = base64.urlsafe_b64encode(json.dumps(document).encode()).decode()
    return "GET", "/getuids", {}, None, {"Cookie": f"uids={cookie}"}


# endpoint -> (its numeric fields, whether values go into JSON (any type) or a query (text), builder)
ENDPOINTS: dict[str, tuple[tuple[str, ...], bool, Callable[[dict[str, Any]], Call]]] = {
    "/openrtb2/auction": ((*AUCTION_FIELDS, "adservertargeting.index"), True, _auction),
    "/openrtb2/auction bidder params": (tuple(ADAPTER_PARAMS), True, _auction),
    "/openrtb2/auction Sec-Browsing-Topics": (("id", "taxonomy"), False, _topics),
    "/openrtb2/amp": (("w", "h", "ow", "oh", "ms", "timeout", "consent_type", "gpp_sid", "addtl_consent", "debug",
                       "gdpr_applies"), False, _query("GET", "/openrtb2/amp", {"tag_id": "amp-1"})),
    "/vtrack": (("ttlseconds", "timestamp", "aid"), True, _vtrack),
    "/cache": (("ttlseconds",), True, _cache),
    "/event": (("ts", "x"), False, _query("GET", "/event", {"t": "win", "b": "bid-1", "a": "acct-1"})),
    "/setuid": (("gdpr", "gpp_sid"), False, _query("GET", "/setuid", {"bidder": "appnexus", "uid": "u1"})),
    "/cookie_sync": (("gdpr", "limit", "gpp_sid", "account"), True, _cookie_sync),
    "/getuids": (("expires", "year"), False, _uids),
    "/logging/httpinteraction": (("limit", "statusCode"), False,
                                 _query("GET", "/logging/httpinteraction", {"endpoint": "auction"})),
}


_MAX_QUERY_TEXT = 6000  # past 4,300 digits, within aiohttp's 8 KB request line


def _values(endpoint: str) -> st.SearchStrategy[dict[str, Any]]:
    """Some of the endpoint's fields (at least one), each given a hostile value."""
    fields, json_typed, _ = ENDPOINTS[endpoint]
    if json_typed:
        return st.fixed_dictionaries({}, optional=dict.fromkeys(fields, NUMERIC)).filter(bool)
    text = NUMERIC_TEXT.map(_latin1) if "Topics" in endpoint else NUMERIC_TEXT  # a header value's characters
    return st.fixed_dictionaries({}, optional=dict.fromkeys(fields, text)).filter(bool).map(_within_line)


def _latin1(text: str) -> str:
    """``text`` with what an HTTP header cannot carry replaced ("²" stays, "٣" does not)."""
    return text.encode("latin-1", "replace").decode("latin-1")


def _within_line(values: dict[str, str]) -> dict[str, str]:
    """Query values cut to fit aiohttp's 8 KB request line together (the first may keep 6,000 characters)."""
    budget, out = _MAX_QUERY_TEXT, {}
    for name, text in values.items():
        out[name] = text[:budget]
        budget = max(budget - len(out[name]), 200)
    return out


def _check(harness: Harness, call: Call) -> None:
    method, path, query, body, headers = call
    harness.tracebacks()  # forget what an earlier example logged
    status, text = harness.request(method, path, params=query, body=body, headers=headers)
    below_500(status, text)
    assert "adapter failed" not in text, text[:500]
    assert not harness.tracebacks()


@pytest.mark.parametrize("endpoint", sorted(ENDPOINTS))
@given(data=st.data())
def test_numeric_fields(harness, endpoint, data):
    values = data.draw(_values(endpoint), label="hostile fields")
    _check(harness, ENDPOINTS[endpoint][2](values))
