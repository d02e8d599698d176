"""Seedtag adapter: floors converted to USD (an imp without a rate is left out), ``cur: ["USD"]``,
headers, bid typing by ``mtype`` and status texts."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from tests.adapters.helpers import bids_for, converter, imp_with, requests_of

ENDPOINT = "https://s.seedtag.com/c/openrtb?partner=prebidserver"
INFO = RequestInfo(bidder="seedtag", convert_currency=converter("EUR", 2.0))


def adapter():
    return build_adapter("seedtag", AdapterConfig("seedtag", ENDPOINT))


def imp(imp_id: str = "i", **fields: Any) -> dict:
    return imp_with(imp_id, {"adUnitId": "unit"}, fields, {"banner": {"format": [{"w": 300, "h": 250}]}})


def run(request: dict):
    calls, bodies, errors = requests_of(adapter(), request, INFO)
    return calls, bodies, [(e.message, e.code) for e in errors]


@pytest.mark.parametrize(
    ("floor", "want"),
    [
        ({"bidfloor": 1.5, "bidfloorcur": "EUR"}, {"bidfloor": 3.0, "bidfloorcur": "USD"}),
        ({"bidfloor": 1.5, "bidfloorcur": "usd"}, {"bidfloor": 1.5, "bidfloorcur": "usd"}),  # USD in any case
        ({"bidfloor": 1.5}, {"bidfloor": 1.5}),  # no currency: left as it is
        ({"bidfloor": 0, "bidfloorcur": "JPY"}, {"bidfloor": 0, "bidfloorcur": "JPY"}),  # no positive floor
    ],
)
def test_floor_in_usd(floor, want):
    _calls, bodies, errors = run({"id": "r", "imp": [imp(**floor)]})
    assert errors == []
    sent = bodies[0]["imp"][0]
    assert {key: sent.get(key) for key in want} == want


def test_imp_without_a_rate_is_left_out():
    request = {"id": "r", "imp": [imp("a", bidfloor=1, bidfloorcur="JPY"), imp("b", bidfloor=1, bidfloorcur="EUR")]}
    calls, bodies, errors = run(request)
    assert errors == [("Currency conversion rate not found: 'JPY' => 'USD'", ErrorCode.UNKNOWN)]
    assert [call.imp_ids for call in calls] == [["b"]]
    assert [i["id"] for i in bodies[0]["imp"]] == ["b"]


def test_no_imp_left_sends_nothing():
    calls, _, errors = run({"id": "r", "imp": [imp("a", bidfloor=1, bidfloorcur="JPY")]})
    assert calls == []
    assert errors == [("Currency conversion rate not found: 'JPY' => 'USD'", ErrorCode.UNKNOWN)]


def test_request_goes_with_usd_currency_and_json_headers():
    request = {"id": "r", "cur": ["EUR"], "test": 0, "site": {"page": "p"}, "imp": [imp()]}
    calls, bodies, errors = run(request)
    assert errors == []
    assert [(call.method, call.uri) for call in calls] == [("POST", ENDPOINT)]
    assert dict(calls[0].headers) == {"Content-Type": "application/json;charset=utf-8", "Accept": "application/json"}
    assert bodies[0] == {"id": "r", "cur": ["USD"], "site": {"page": "p"}, "imp": [imp()]}  # Go drops "test": 0


def bids(body: Any, status: int = 200):
    return bids_for(adapter(), {"id": "r", "imp": [imp()]}, body, status)


def answer(*mtypes: Any, cur: str = "EUR") -> dict:
    return {
        "cur": cur,
        "seatbid": [{"bid": [{"id": f"b{n}", "impid": "i", "price": 1, "mtype": m} for n, m in enumerate(mtypes)]}],
    }


@pytest.mark.parametrize(
    ("mtypes", "want_types", "want_errors"),
    [
        ((1,), ["banner"], []),
        ((2,), ["video"], []),
        ((3, 1), ["banner"], ["bid.MType invalid"]),  # audio is not Seedtag's
        ((4,), [], ["bid.MType invalid"]),
        ((0, 2, None), ["video"], ["bid.MType invalid", "bid.MType invalid"]),
    ],
)
def test_bids_typed_by_mtype(mtypes, want_types, want_errors):
    response, errors = bids(answer(*mtypes))
    assert [b.bid_type for b in response.bids] == want_types
    assert [(e.message, e.code) for e in errors] == [(m, ErrorCode.UNKNOWN) for m in want_errors]
    assert response.currency == "USD"  # the answer's cur is not read


@pytest.mark.parametrize(
    ("status", "body", "want"),
    [
        (204, b"", []),
        (400, b"{}", [("Unexpected status code: 400. Run with request.debug = 1 for more info", ErrorCode.BAD_INPUT)]),
        (
            503,
            b"{}",
            [("Unexpected status code: 503. Run with request.debug = 1 for more info", ErrorCode.BAD_SERVER_RESPONSE)],
        ),
        (200, b"[]", [("expect { or n, but found [", ErrorCode.UNKNOWN)]),
        (
            200,
            b'{"seatbid": [{"bid": [{"id": "b", "impid": "i", "price": 1, "mtype": "1"}]}]}',
            [("cannot unmarshal openrtb2.Bid.MType: unexpected character: \ufffd", ErrorCode.UNKNOWN)],
        ),
    ],
)
def test_failed_answers(status, body, want):
    response, errors = bids(body, status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == want
