"""Adform (adf) adapter: tag ids, the price type in request.ext, imp errors and bid typing."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.adf import build
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "https://adx.adform.net/adx/openrtb"
INFO = RequestInfo(bidder="adf")
ABSENT = "expect { or n, but found \x00"


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    out = {"id": imp_id, "banner": {"format": [{"w": 300, "h": 250}]}, **fields}
    out.setdefault("ext", {"bidder": {"mid": "1"} if params is None else params})
    return out


def run(request: dict, bidder: str = "adf"):
    calls, bodies, errors = requests_of(build(AdapterConfig(bidder, ENDPOINT)), request, INFO)
    assert [call.uri for call in calls] == [ENDPOINT]
    return calls[0], bodies[0], [(e.message, e.code) for e in errors]


@pytest.mark.parametrize(
    ("params", "fields", "want"),
    [
        ({"mid": 828782}, {}, "828782"),
        ({"mid": "828782"}, {}, "828782"),
        ({"mid": "12", "inv": 1, "mname": "m"}, {"tagid": "old"}, "12"),
        ({"inv": 1, "mname": "m"}, {"tagid": "old"}, None),
        ({"mid": None, "inv": 1, "mname": "m"}, {}, None),
        ({"mid": ""}, {"tagid": "old"}, None),
    ],
)
def test_master_tag_id_becomes_tagid(params, fields, want):
    _, body, errors = run({"id": "r", "imp": [imp("i", params, **fields)]})
    assert errors == []
    assert body["imp"][0].get("tagid") == want
    assert body["imp"][0]["ext"] == {"bidder": params}


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        (None, {"prebid": {}, "pt": "gross"}),
        (
            {"prebid": {"aliases": {"adform": "adf"}}, "data": {"x": 1}, "pt": "net"},
            {"prebid": {"aliases": {"adform": "adf"}}, "pt": "gross"},
        ),
        (
            {"prebid": {"debug": False, "unknown": 1, "cache": {}, "integration": "", "targeting": None}},
            {"prebid": {"cache": {}}, "pt": "gross"},
        ),
        ({"schain": {"ver": "1.0"}}, {"prebid": {}, "schain": {"ver": "1.0"}, "pt": "gross"}),
    ],
)
def test_price_type_rewrites_request_ext(ext, want):
    request: dict[str, Any] = {"id": "r", "imp": [imp("i", {"mid": 1, "priceType": "gross"})]}
    if ext is not None:
        request["ext"] = ext
    _, body, errors = run(request)
    assert errors == []
    assert body["ext"] == want


def test_first_price_type_of_a_valid_imp_wins_and_none_keeps_ext():
    request = {
        "id": "r",
        "ext": {"other": 1},
        "imp": [
            imp("bad", {"mid": True, "priceType": "net"}),
            imp("a", {"mid": 1}),
            imp("b", {"mid": 2, "priceType": "gross"}),
            imp("c", {"mid": 3, "priceType": "net"}),
        ],
    }
    call, body, _ = run(request)
    assert body["ext"] == {"prebid": {}, "pt": "gross"}
    assert call.imp_ids == ["a", "b", "c"]
    _, body, _ = run({"id": "r", "ext": {"other": 1}, "imp": [imp("a", {"mid": 1})]})
    assert body["ext"] == {"other": 1}


def test_unreadable_request_ext_is_kept_with_an_error():
    _, body, errors = run({"id": "r", "ext": [1], "imp": [imp("a", {"mid": 1, "priceType": "net"})]})
    assert body["ext"] == [1]
    assert errors == [("expect { or n, but found [", ErrorCode.UNKNOWN)]


@pytest.mark.parametrize(
    ("bad_imp", "want"),
    [
        ({"id": "x", "banner": {}}, ABSENT),
        ({"id": "x", "banner": {}, "ext": None}, ABSENT),
        ({"id": "x", "banner": {}, "ext": {"prebid": {}}}, ABSENT),
        ({"id": "x", "banner": {}, "ext": "aaa"}, 'expect { or n, but found "'),
        (
            {"id": "x", "banner": {}, "ext": {"prebid": 1, "bidder": {}}},
            "cannot unmarshal adapters.ExtImpBidder.Prebid: expect { or n, but found 1",
        ),
        (imp("x", "mid"), 'expect { or n, but found "'),
        (imp("x", {"mid": True}), "cannot unmarshal openrtb_ext.ExtImpAdf.MasterTagID: invalid number"),
        (
            imp("x", {"inv": "1", "mname": "m"}),
            "cannot unmarshal openrtb_ext.ExtImpAdf.InventorySourceID: unexpected character",
        ),
        (
            imp("x", {"mid": 1, "priceType": 1}),
            'cannot unmarshal openrtb_ext.ExtImpAdf.PriceType: expects " or n, but found 1',
        ),
    ],
)
def test_bad_imps_are_dropped_but_the_call_is_made(bad_imp, want):
    call, body, errors = run({"id": "r", "imp": [bad_imp]})
    assert errors == [(want, ErrorCode.BAD_INPUT)]
    assert body["imp"] == []
    assert call.imp_ids == []


def test_media_objects_as_go_writes_them_and_alias_code():
    adapter = build_adapter("adf", AdapterConfig("adform", ENDPOINT))
    request = {"id": "r", "imp": [imp("a", audio={}), imp("n", native={"ver": "1.2"})]}
    _, bodies, _ = requests_of(adapter, request, RequestInfo(bidder="adform", adapter_code="adf"))
    sent = bodies[0]["imp"]
    assert sent[0]["audio"] == {"mimes": None}
    assert sent[1]["native"] == {"ver": "1.2", "request": ""}


def bids_of(body: Any, status: int = 200):
    return bids_for(build(AdapterConfig("adf", ENDPOINT)), {"id": "r", "imp": []}, body, status)


@pytest.mark.parametrize(
    ("status", "want"),
    [
        (400, ("Unexpected status code: 400. Bad request from publisher.", ErrorCode.BAD_INPUT)),
        (500, ("Unexpected status code: 500.", ErrorCode.BAD_SERVER_RESPONSE)),
        (302, ("Unexpected status code: 302.", ErrorCode.BAD_SERVER_RESPONSE)),
    ],
)
def test_status_errors(status, want):
    response, errors = bids_of(b"", status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == [want]


def test_no_content_and_not_an_object():
    assert bids_of(b"", 204) == (None, [])
    response, errors = bids_of([1])
    assert response is None
    assert [e.message for e in errors] == ["expect { or n, but found ["]


@pytest.mark.parametrize(
    ("ext", "want_type", "want_error"),
    [
        ({"prebid": {"type": "audio"}}, "audio", None),
        ({"prebid": {"type": "native"}}, "native", None),
        (None, None, ('Failed to parse impression "i" mediatype', ErrorCode.BAD_SERVER_RESPONSE)),
        ({"prebid": None}, None, ('Failed to parse impression "i" mediatype', ErrorCode.BAD_SERVER_RESPONSE)),
        ({"prebid": {"type": 1}}, None, ('Failed to parse impression "i" mediatype', ErrorCode.BAD_SERVER_RESPONSE)),
        ({"prebid": {}}, None, ("invalid BidType: ", ErrorCode.UNKNOWN)),
        ({"prebid": {"type": "Banner"}}, None, ("invalid BidType: Banner", ErrorCode.UNKNOWN)),
    ],
)
def test_bid_type_from_ext_prebid(ext, want_type, want_error):
    bid: dict[str, Any] = {"id": "b", "impid": "i", "price": 1}
    if ext is not None:
        bid["ext"] = ext
    response, errors = bids_of({"seatbid": [{"bid": [bid]}], "cur": "EUR"})
    assert response.currency == "EUR"
    assert [b.bid_type for b in response.bids] == ([want_type] if want_type else [])
    assert [(e.message, e.code) for e in errors] == ([want_error] if want_error else [])


def test_currency_defaults_to_usd_and_bids_are_written_as_go_does():
    bid = {
        "id": "b",
        "impid": "i",
        "price": 0,
        "adomain": [],
        "w": 0,
        "crid": "",
        "nope": 1,
        "h": 250,
        "ext": {"prebid": {"type": "banner"}},
    }
    response, errors = bids_of({"seatbid": [{"bid": [bid]}]})
    assert errors == []
    assert response.currency == "USD"
    assert response.bids[0].bid == {
        "id": "b",
        "impid": "i",
        "price": 0,
        "h": 250,
        "ext": {"prebid": {"type": "banner"}},
    }
