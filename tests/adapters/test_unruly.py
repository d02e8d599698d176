"""Unruly adapter: imp ext rewriting, abort-all errors, bid typing and the status/body error texts."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.unruly import build
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "https://targeting.unrulymedia.com/unruly_prebid_server"
INFO = RequestInfo(bidder="unruly")


def imp(imp_id: str, ext: Any = "default", **fields: Any) -> dict:
    out = {"id": imp_id, **(fields or {"banner": {"format": [{"w": 300, "h": 250}]}})}
    if ext != "absent":
        out["ext"] = {"bidder": {"siteId": 1}} if ext == "default" else ext
    return out


def run(request: dict, endpoint: str = ENDPOINT):
    calls, bodies, errors = requests_of(build(AdapterConfig("unruly", endpoint)), request, INFO)
    return calls, bodies, [e.message for e in errors]


@pytest.mark.parametrize(
    ("params", "want"),
    [
        ({"siteId": 5}, {"siteid": 0, "siteId": 5}),
        ({"siteid": 7}, {"siteid": 7, "siteId": 0}),
        ({"siteId": 5, "siteid": 7, "other": "x"}, {"siteid": 7, "siteId": 5}),
        ({"SITEID": 3}, {"siteid": 3, "siteId": 0}),  # any other spelling is the old field
        ({"siteId": 5, "siteid": None}, {"siteid": 0, "siteId": 5}),
        ({}, {"siteid": 0, "siteId": 0}),
    ],
)
def test_ext_is_replaced_by_both_site_ids(params, want):
    _, bodies, errors = run({"id": "r", "imp": [imp("a", {"bidder": params, "gpid": "g", "prebid": {}})]})
    assert errors == []
    assert bodies[0]["imp"][0]["ext"] == {"bidder": want}


@pytest.mark.parametrize(
    ("imps", "want"),
    [
        ([imp("a", "absent")], "ext data not provided in imp id=a. Abort all Request"),
        ([imp("a"), imp("b", "text")], "ext data not provided in imp id=b. Abort all Request"),
        ([imp("a", {"bidder": {"siteId": 1}, "prebid": 5})], "ext data not provided in imp id=a. Abort all Request"),
        ([imp("a", {"other": 1})], "siteid not provided in imp id=a. Abort all Request"),
        ([imp("a", {"bidder": {"siteId": "1"}})], "siteid not provided in imp id=a. Abort all Request"),
        ([imp("a", {"bidder": {"siteid": 1.5}})], "siteid not provided in imp id=a. Abort all Request"),
        ([imp("a"), imp("b", {"bidder": [1]})], "siteid not provided in imp id=b. Abort all Request"),
    ],
)
def test_one_bad_imp_aborts_the_request(imps, want):
    calls, _, errors = run({"id": "r", "imp": imps})
    assert calls == []
    assert errors == [want]


def test_one_call_with_all_imps_and_no_call_without_endpoint():
    request = {"id": "r", "site": {"page": "p"}, "imp": [imp("a"), imp("b", video={"w": 1})]}
    calls, bodies, _ = run(request)
    assert [(call.uri, call.imp_ids) for call in calls] == [(ENDPOINT, ["a", "b"])]
    assert bodies[0]["site"] == {"page": "p"}
    assert calls[0].headers["Accept"] == "application/json"
    assert run(request, endpoint="") == ([], [], [])


REQUEST = {
    "id": "r",
    "imp": [
        {"id": "b", "banner": {}},
        {"id": "v", "video": {}},
        {"id": "bv", "banner": {}, "video": {}},
        {"id": "n", "native": {}},
    ],
}


def bids_of(body: Any, status: int = 200):
    return bids_for(build(AdapterConfig("unruly", ENDPOINT)), REQUEST, body, status)


@pytest.mark.parametrize(
    ("impid", "dur", "want_type", "want_video", "want_error"),
    [
        ("b", 30, "banner", None, None),
        ("v", 30, "video", {"duration": 30, "primary_category": ""}, None),
        ("v", 0, "video", None, None),
        ("bv", None, "banner", None, None),
        ("n", None, None, None, "bid responses mediaType didn't match supported mediaTypes"),
        ("x", None, None, None, "Bid response imp ID x not found in bid request containing imps [b v bv n]\n"),
    ],
)
def test_bid_types(impid, dur, want_type, want_video, want_error):
    bid: dict[str, Any] = {"id": "1", "impid": impid, "price": 1}
    if dur is not None:
        bid["dur"] = dur
    response, errors = bids_of({"cur": "EUR", "seatbid": [{"bid": [bid, {"id": "2", "impid": "b", "price": 2}]}]})
    assert response.currency == "USD"  # the answer's cur is not read
    assert [(b.bid["id"], b.bid_type, b.bid_video) for b in response.bids][:-1] == (
        [("1", want_type, want_video)] if want_type else []
    )
    assert response.bids[-1].bid["id"] == "2"  # one bad bid drops only itself
    assert [e.message for e in errors] == ([want_error] if want_error else [])


@pytest.mark.parametrize(
    ("status", "body", "want_error", "want_code"),
    [
        (204, b"", None, None),
        (400, b"", "unexpected status code: 400. Run with request.debug = 1 for more info", ErrorCode.BAD_INPUT),
        (
            401,
            b"",
            "unexpected status code: 401. Run with request.debug = 1 for more info",
            ErrorCode.BAD_SERVER_RESPONSE,
        ),
        (
            200,
            b'"x"',
            'bad server response: &{%!d(string=expect { or n, but found ")}. ',
            ErrorCode.BAD_SERVER_RESPONSE,
        ),
    ],
)
def test_statuses(status, body, want_error, want_code):
    response, errors = bids_of(body, status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == ([(want_error, want_code)] if want_error else [])
