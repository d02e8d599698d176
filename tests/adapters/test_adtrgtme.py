"""Adtrgtme adapter: one call per imp with the site id in the URL and no imp ext, headers, status
texts, and banner-only typing that fails the whole answer."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.adtrgtme import build
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "http://localhost/ssp"
ADAPTER = build(AdapterConfig("adtrgtme", ENDPOINT))
INFO = RequestInfo(bidder="adtrgtme")


def imp(imp_id: str, params: Any) -> dict[str, Any]:
    return {"id": imp_id, "banner": {"w": 1}, "ext": {"bidder": params, "gpid": "g"}}


def test_one_call_per_imp():
    request = {
        "id": "r",
        "device": {"ua": "u", "ip": "1.1.1.1", "ipv6": "::1"},
        "imp": [imp("a", {"site_id": 1}), imp("b", {"site_id": 2})],
    }
    calls, bodies, errors = requests_of(ADAPTER, request, INFO)
    assert errors == []
    assert [(c.uri, c.imp_ids) for c in calls] == [
        ("http://localhost/ssp?s=1&prebid", ["a"]),
        ("http://localhost/ssp?s=2&prebid", ["b"]),
    ]
    assert bodies[0]["imp"] == [{"id": "a", "banner": {"w": 1}}]
    assert dict(calls[0].headers) == {
        "Content-Type": "application/json;charset=utf-8",
        "Accept": "application/json",
        "X-Openrtb-Version": "2.5",
        "User-Agent": "u",
        "X-Forwarded-For": "::1, 1.1.1.1",
    }


@pytest.mark.parametrize(
    ("params", "uri"),
    [
        ({}, "http://localhost/ssp?s=0&prebid"),
        ({"site_id": None}, "http://localhost/ssp?s=0&prebid"),
        ({"site_id": 2**64 - 1}, f"http://localhost/ssp?s={2**64 - 1}&prebid"),
    ],
)
def test_site_id(params, uri):
    calls, _, errors = requests_of(ADAPTER, {"id": "r", "imp": [imp("a", params)]}, INFO)
    assert errors == [] and [c.uri for c in calls] == [uri]


@pytest.mark.parametrize("params", ["x", {"site_id": -1}, {"site_id": 1.5}, {"site_id": "1"}, {"site_id": 2**64}])
def test_bad_params(params):
    calls, _, errors = requests_of(ADAPTER, {"id": "r", "imp": [imp("a", params), imp("b", {"site_id": 3})]}, INFO)
    assert [c.imp_ids for c in calls] == [["b"]]
    assert [(e.message, e.code) for e in errors] == [("ext.bidder not provided", ErrorCode.BAD_INPUT)]


@pytest.mark.parametrize(
    ("status", "text"),
    [
        (400, "Unexpected status code: [ 400 ]"),
        (503, "Something went wrong, please contact your Account Manager. Status Code: [ 503 ] "),
        (500, "Unexpected status code: [ 500 ]. Run with request.debug = 1 for more info"),
    ],
)
def test_status(status, text):
    response, errors = bids_for(ADAPTER, {}, b"", status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == [(text, ErrorCode.BAD_INPUT)]


@pytest.mark.parametrize(
    ("body", "text"),
    [
        (b"[]", "Bad Server Response"),
        ({"id": "r"}, "Empty SeatBid array"),
        ({"id": "r", "seatbid": []}, "Empty SeatBid array"),
    ],
)
def test_bad_answers(body, text):
    response, errors = bids_for(ADAPTER, {}, body)
    assert response is None
    assert [(e.message, e.code) for e in errors] == [(text, ErrorCode.BAD_SERVER_RESPONSE)]


@pytest.mark.parametrize(
    ("impids", "error"),
    [
        (["b"], None),
        (["b", "v"], 'Unsupported bidtype for bid: "v"'),
        (["x", "b"], 'Failed to find impression: "x"'),
    ],
)
def test_bid_types(impids, error):
    request = {"imp": [{"id": "b", "banner": {}}, {"id": "v", "video": {}}]}
    bids = [{"id": str(n), "impid": impid, "price": 1} for n, impid in enumerate(impids)]
    response, errors = bids_for(ADAPTER, request, {"id": "r", "cur": "EUR", "seatbid": [{"bid": bids}]})
    if error is None:
        assert errors == [] and response is not None
        assert (response.currency, [t.bid_type for t in response.bids]) == ("EUR", ["banner"])
    else:
        assert response is None
        assert [e.message for e in errors] == [error]
