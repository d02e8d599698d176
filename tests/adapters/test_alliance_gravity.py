"""Alliance Gravity adapter: the imp ext rewritten to a stored request, the request headers, bids
typed by ext.prebid.type and an answer without typed bids read as no answer."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.alliance_gravity import build
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "http://endpoint"
ADAPTER = build(AdapterConfig("alliance_gravity", ENDPOINT))
INFO = RequestInfo(bidder="alliance_gravity")


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"bidder": {"srid": "s1"}}, {"bidder": {}, "prebid": {"storedrequest": {"id": "s1"}}}),
        ({"bidder": {}, "gpid": "g", "prebid": {"x": 1}}, {"bidder": {}, "prebid": {"storedrequest": {"id": ""}}}),
        ({"bidder": {"SRID": "s2"}, "ae": 1}, {"bidder": {}, "prebid": {"storedrequest": {"id": "s2"}}, "ae": 1}),
    ],
)
def test_imp_ext(ext, want):
    calls, bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": [{"id": "i", "banner": {}, "ext": ext}]}, INFO)
    assert errors == []
    assert calls[0].imp_ids == ["i"]
    assert bodies[0]["imp"][0]["ext"] == want


@pytest.mark.parametrize(
    ("ext", "error"),
    [
        ("x", 'expect { or n, but found "'),
        (
            {"bidder": {"srid": 1}},
            'cannot unmarshal openrtb_ext.ExtImpAllianceGravity.SrId: expects " or n, but found 1',
        ),
    ],
)
def test_bad_imp_fails_the_request(ext, error):
    imps = [{"id": "a", "banner": {}, "ext": {"bidder": {}}}, {"id": "b", "banner": {}, "ext": ext}]
    calls, _, errors = requests_of(ADAPTER, {"id": "r", "imp": imps}, INFO)
    assert calls == []
    assert [(e.message, e.code) for e in errors] == [(error, ErrorCode.BAD_INPUT)]


@pytest.mark.parametrize(
    ("top", "want"),
    [
        (
            {"device": {"ua": "u", "ip": "1.1.1.1", "ipv6": "::1"}, "site": {"page": "p"}, "user": {"buyeruid": "b"}},
            {"User-Agent": "u", "X-Forwarded-For": "1.1.1.1", "Referer": "p", "Cookie": "uids=b"},
        ),
        ({"device": {"ipv6": "::1"}, "app": {}}, {"X-Forwarded-For": "::1"}),
        ({}, {}),
    ],
)
def test_headers(top, want):
    calls, _, _ = requests_of(ADAPTER, {"id": "r", "imp": [], **top}, INFO)
    assert dict(calls[0].headers) == {
        "Content-Type": "application/json;charset=utf-8", "Accept": "application/json", **want
    }


@pytest.mark.parametrize(
    ("exts", "types", "errors"),
    [
        ([{"prebid": {"type": "video"}}], ["video"], []),
        ([{"prebid": {"type": "native"}}, {}], ["native"], ['Failed to parse impression "i" mediatype']),
        ([{"prebid": {"type": "banner"}}, {"prebid": {"type": "x"}}], ["banner"], ["invalid BidType: x"]),
        ([{}], None, []),  # no typed bid: no answer and no error
    ],
)
def test_bid_types(exts: list[Any], types, errors):
    bids = [{"id": f"b{n}", "impid": "i", "price": 1, "ext": ext} for n, ext in enumerate(exts)]
    response, got = bids_for(ADAPTER, {}, {"id": "r", "seatbid": [{"bid": bids}]})
    assert (None if response is None else [t.bid_type for t in response.bids]) == types
    assert [e.message for e in got] == errors


@pytest.mark.parametrize(
    ("status", "text", "code"),
    [
        (400, "Unexpected status code: 400. Bad request from publisher. Run with request.debug = 1 for more info.",
         ErrorCode.BAD_INPUT),
        (503, "Unexpected status code: 503. Run with request.debug = 1 for more info.", ErrorCode.BAD_SERVER_RESPONSE),
    ],
)
def test_status(status, text, code):
    response, errors = bids_for(ADAPTER, {}, b"", status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == [(text, code)]
