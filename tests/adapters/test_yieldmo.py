"""Yieldmo adapter: imp.ext replaced by placement id and gpid, floors converted to USD, unreadable
params reported while the imp is still sent, bid typing by ``ext.mediatype``."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from hbserver.adapters.base import (
    AdapterConfig,
    ErrorCode,
    RequestData,
    RequestInfo,
    ResponseData,
)
from hbserver.adapters.yieldmo import build
from tests.adapters.helpers import converter, requests_of

ENDPOINT = "https://ads.yieldmo.com/exchange/prebid-server"
ADAPTER = build(AdapterConfig("yieldmo", ENDPOINT))
INFO = RequestInfo(bidder="yieldmo", convert_currency=converter("GBP"))


def imp(imp_id: str = "i", ext: Any = None, **fields: Any) -> dict:
    return {
        "id": imp_id,
        "banner": {"w": 300, "h": 250},
        **fields,
        "ext": {"bidder": {"placementId": "p1"}} if ext is None else ext,
    }


def run(request: dict):
    calls, bodies, errors = requests_of(ADAPTER, request, INFO)
    assert len(calls) == 1 and calls[0].uri == ENDPOINT
    assert calls[0].headers == {"Content-Type": "application/json;charset=utf-8"}
    assert all(error.code == ErrorCode.BAD_INPUT for error in errors)
    return calls[0], bodies[0], [e.message for e in errors]


@pytest.mark.parametrize(
    ("ext", "want_ext", "want_errors"),
    [
        ({"bidder": {"placementId": "p1"}, "gpid": "g"}, {"placement_id": "p1"}, []),
        ({"bidder": {"PLACEMENTID": "p1"}, "data": {"pbadslot": "slot"}}, {"placement_id": "p1", "gpid": "slot"}, []),
        ({"bidder": {"placementId": "p1"}, "data": {"pbadslot": ""}}, {"placement_id": "p1"}, []),
        ({"bidder": {}}, {"placement_id": ""}, []),
        ({}, {"placement_id": ""}, ["expect { or n, but found \x00"]),
        ("x", {"placement_id": ""}, ['expect { or n, but found "', "expect { or n, but found \x00"]),
        (
            {"bidder": {"placementId": 7}},
            {"placement_id": ""},
            ['cannot unmarshal openrtb_ext.ExtImpYieldmo.PlacementId: expects " or n, but found 7'],
        ),
        (
            {"bidder": {"placementId": "p1"}, "data": {"pbadslot": 1}},
            {"placement_id": "p1"},
            ['cannot unmarshal yieldmo.ExtData.PbAdslot: expects " or n, but found 1'],
        ),
        (
            {"data": 1, "bidder": {"placementId": "p1"}},
            {"placement_id": ""},
            [
                "cannot unmarshal yieldmo.ExtImpBidderYieldmo.Data: expect { or n, but found 1",
                "expect { or n, but found \x00",
            ],
        ),
    ],
)
def test_imp_ext(ext, want_ext, want_errors):
    call, body, errors = run({"id": "r", "imp": [imp(ext=ext), imp("j")]})
    assert errors == want_errors
    assert call.imp_ids == ["i", "j"]
    assert [sent["ext"] for sent in body["imp"]] == [want_ext, {"placement_id": "p1"}]


@pytest.mark.parametrize(
    ("fields", "want", "want_errors"),
    [
        ({"bidfloor": 1.5, "bidfloorcur": "GBP"}, {"bidfloor": 3.0, "bidfloorcur": "USD"}, []),
        ({"bidfloor": 1.5, "bidfloorcur": "usd"}, {"bidfloor": 1.5, "bidfloorcur": "usd"}, []),
        (
            {"bidfloor": 1.5, "bidfloorcur": "EUR"},
            {"bidfloor": 1.5, "bidfloorcur": "EUR"},
            ["Unable to convert provided bid floor currency from EUR to USD"],
        ),
    ],
)
def test_floor(fields, want, want_errors):
    _, body, errors = run({"id": "r", "imp": [imp(**fields)]})
    assert errors == want_errors
    for key, value in want.items():
        assert body["imp"][0][key] == value, key


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"mediatype": "banner"}, "banner"),
        ({"mediatype": "video"}, "video"),
        ({"MediaType": "native"}, "native"),
        ({"mediatype": "audio"}, None),
        ({"mediatype": 1}, None),
        ({}, None),
        (None, None),
    ],
)
def test_bid_type(ext, want):
    bid = {"id": "b", "impid": "i", "price": 1, **({"ext": ext} if ext is not None else {})}
    answer = {"id": "r", "cur": "EUR", "seatbid": [{"bid": [bid]}]}
    response, errors = ADAPTER.make_bids({}, RequestData("POST", ENDPOINT), ResponseData(200, orjson.dumps(answer)))
    assert errors == []
    assert response is not None and response.currency == "USD"
    assert [(typed.bid, typed.bid_type) for typed in response.bids] == ([(bid, want)] if want else [])


@pytest.mark.parametrize(
    ("status", "want"),
    [
        (204, None),
        (400, (ErrorCode.BAD_INPUT, "Unexpected status code: 400. Run with request.debug = 1 for more info")),
        (302, (ErrorCode.BAD_SERVER_RESPONSE, "Unexpected status code: 302. Run with request.debug = 1 for more info")),
    ],
)
def test_status(status, want):
    response, errors = ADAPTER.make_bids({}, RequestData("POST", ENDPOINT), ResponseData(status, b""))
    assert response is None
    assert [(e.code, e.message) for e in errors] == ([want] if want else [])
