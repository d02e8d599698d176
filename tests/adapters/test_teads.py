"""Teads adapter: imp rewriting, errors that stop the request or the answer, renderer meta."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.teads import build
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "https://psrv.teads.tv/prebid-server/bid-request"
INFO = RequestInfo(bidder="teads")


def imp(imp_id: str, ext: Any = "default", **fields: Any) -> dict:
    out = {"id": imp_id, **(fields or {"video": {"w": 640}})}
    if ext != "absent":
        out["ext"] = {"bidder": {"placementId": 125}} if ext == "default" else ext
    return out


def run(request: dict):
    calls, bodies, errors = requests_of(build(AdapterConfig("teads", ENDPOINT)), request, INFO)
    return calls, bodies, [(e.message, e.code) for e in errors]


@pytest.mark.parametrize(
    ("fields", "ext", "want"),
    [
        (
            {"banner": {"format": [{"w": 300, "h": 250}, {"w": 728, "h": 90}]}},
            "default",
            {"banner": {"w": 300, "h": 250, "format": [{"w": 300, "h": 250}, {"w": 728, "h": 90}]}, "tagid": "125"},
        ),
        (
            {"banner": {"format": [{"h": 250}], "w": 1}},
            "default",
            {"banner": {"w": 0, "h": 250, "format": [{"h": 250}]}},
        ),
        ({"banner": {"w": 1, "h": 2}}, "default", {"banner": {"w": 1, "h": 2}}),
        (
            {"video": {"w": 1}},
            {"bidder": {"placementId": -3}, "gpid": "g"},
            {"tagid": "-3", "ext": {"kv": {"placementId": -3}}},
        ),
        ({"video": {"w": 1}}, {"Bidder": {"PLACEMENTID": 9}}, {"tagid": "9", "ext": {"kv": {"placementId": 9}}}),
    ],
)
def test_imp_changes(fields, ext, want):
    calls, bodies, errors = run({"id": "r", "imp": [imp("a", ext, **fields)]})
    assert errors == []
    assert [(call.uri, call.imp_ids) for call in calls] == [(ENDPOINT, ["a"])]
    assert dict(calls[0].headers) == {"Content-Type": "application/json;charset=utf-8"}
    sent = bodies[0]["imp"][0]
    for key, value in want.items():
        assert sent[key] == value, key


@pytest.mark.parametrize(
    ("imps", "want"),
    [
        ([], "No impression in the bid request"),
        ([imp("a", "absent")], "Error parsing Imp.Ext object"),
        ([imp("a", "text")], "Error parsing Imp.Ext object"),
        ([imp("a", {"bidder": {"placementId": "125"}})], "Error parsing Imp.Ext object"),
        ([imp("a", {"bidder": {"placementId": 1.5}})], "Error parsing Imp.Ext object"),
        ([imp("a"), imp("b", {"bidder": {}})], "placementId should not be 0."),
        ([imp("a", {"bidder": None})], "placementId should not be 0."),
        ([imp("a", {"bidder": {"placementId": 0}}), imp("b", "text")], "placementId should not be 0."),
    ],
)
def test_first_bad_imp_stops_the_request(imps, want):
    calls, _, errors = run({"id": "r", "imp": imps})
    assert calls == []
    assert errors == [(want, ErrorCode.BAD_INPUT)]


REQUEST = {
    "id": "r",
    "imp": [{"id": "b", "banner": {}}, {"id": "v", "video": {}}, {"id": "bv", "banner": {}, "video": {}}],
}
META = {"prebid": {"meta": {"rendererName": "teads", "rendererVersion": "5.0", "rendererData": {"x": 1}}}}


def bids_of(body: Any, status: int = 200):
    return bids_for(build(AdapterConfig("teads", ENDPOINT)), REQUEST, body, status)


def bid(impid: str = "b", ext: Any = META) -> dict:
    out: dict[str, Any] = {"id": "1", "impid": impid, "price": 1}
    if ext != "absent":
        out["ext"] = ext
    return out


@pytest.mark.parametrize(("impid", "want"), [("b", "banner"), ("v", "video"), ("bv", "video")])
def test_bid_type_and_meta(impid, want):
    response, errors = bids_of({"cur": "EUR", "seatbid": [{"bid": [bid(impid)]}]})
    assert errors == []
    assert response.currency == "EUR"
    assert [(b.bid_type, b.bid_meta) for b in response.bids] == [
        (want, {"rendererName": "teads", "rendererVersion": "5.0"})
    ]


@pytest.mark.parametrize(
    ("bids", "want", "want_code"),
    [
        ([bid(), bid("x")], "Imp ids were not equals", ErrorCode.BAD_INPUT),
        (
            [bid(), bid(ext={"prebid": {"meta": {"rendererVersion": "1"}}})],
            "RendererName should not be empty if present",
            ErrorCode.BAD_INPUT,
        ),
        (
            [bid(ext={"prebid": {"meta": {"rendererName": "t"}}})],
            "RendererVersion should not be empty if present",
            ErrorCode.BAD_INPUT,
        ),
        ([bid(ext="absent")], "expect { or n, but found \x00", ErrorCode.UNKNOWN),
        ([bid(ext="x")], 'expect { or n, but found "', ErrorCode.UNKNOWN),
        (
            [bid(ext={"prebid": 1})],
            "cannot unmarshal teads.teadsBidExt.Prebid: expect { or n, but found 1",
            ErrorCode.UNKNOWN,
        ),
        (
            [bid(ext={"prebid": {"meta": {"rendererName": 5}}})],
            'cannot unmarshal teads.teadsPrebidMeta.RendererName: expects " or n, but found 5',
            ErrorCode.UNKNOWN,
        ),
    ],
)
def test_one_bad_bid_drops_the_answer(bids, want, want_code):
    response, errors = bids_of({"seatbid": [{"bid": bids}]})
    assert response is None
    assert [(e.message, e.code) for e in errors] == [(want, want_code)]


@pytest.mark.parametrize(
    ("status", "body", "want_error", "want_currency"),
    [
        (204, b"", None, None),
        (400, b"{}", "Unexpected status code: 400. Run with request.debug = 1 for more info", None),
        (500, b"{}", "Unexpected status code: 500. Run with request.debug = 1 for more info", None),
        (200, b"[]", "expect { or n, but found [", None),
        (200, b'{"cur": ""}', None, "USD"),
    ],
)
def test_statuses(status, body, want_error, want_currency):
    response, errors = bids_of(body, status)
    assert [e.message for e in errors] == ([want_error] if want_error else [])
    assert (response.currency if response else None) == want_currency
