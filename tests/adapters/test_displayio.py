"""Displayio's own rules over its recipe: the floor currency rule, the request ext's displayio
member per call, and exactly one seatbid in an answer."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo, ResponseData
from tests.adapters.helpers import converter, requests_of

ENDPOINT = "https://displayio.example.com/?p={{.PublisherID}}"
PARAMS = {"placementId": "11", "inventoryId": "22", "publisherId": "33"}


def adapter() -> Any:
    return build_adapter("displayio", AdapterConfig("displayio", ENDPOINT))


def request_with(floor: dict[str, Any], ext: Any = None) -> dict[str, Any]:
    imp = {"id": "a", "banner": {"w": 1, "h": 1}, "ext": {"bidder": PARAMS}, **floor}
    return {"id": "r", "imp": [imp], **({} if ext is None else {"ext": ext})}


@pytest.mark.parametrize(
    ("floor", "want"),
    [
        ({}, {"bidfloorcur": "USD"}),
        ({"bidfloor": 2}, {"bidfloor": 2, "bidfloorcur": "USD"}),
        ({"bidfloor": 0, "bidfloorcur": "EUR"}, {"bidfloorcur": "USD"}),
        ({"bidfloor": 2, "bidfloorcur": "EUR"}, {"bidfloor": 4, "bidfloorcur": "USD"}),
        ({"bidfloor": 2, "bidfloorcur": "USD"}, {"bidfloor": 2, "bidfloorcur": "USD"}),
    ],
)
def test_floor_in_usd(floor, want):
    info = RequestInfo(bidder="displayio", convert_currency=converter("EUR"))
    calls, bodies, errors = requests_of(adapter(), request_with(floor), info)
    assert errors == []
    assert [call.uri for call in calls] == ["https://displayio.example.com/?p=33"]
    sent = bodies[0]["imp"][0]
    assert {key: sent[key] for key in ("bidfloor", "bidfloorcur") if key in sent} == want


def test_a_floor_that_cannot_be_converted_drops_the_imp():
    info = RequestInfo(bidder="displayio", convert_currency=converter("EUR"))
    calls, _, errors = requests_of(adapter(), request_with({"bidfloor": 2, "bidfloorcur": "GBP"}), info)
    assert calls == []
    assert [e.message for e in errors] == ["Currency conversion rate not found: 'GBP' => 'USD'"]


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        (None, {}),
        ({"prebid": {"debug": True}}, {"prebid": {"debug": True}}),
        ({"displayio": 5}, {}),
    ],
)
def test_request_ext_carries_displayio(ext, want):
    _, bodies, _ = requests_of(adapter(), request_with({}, ext), RequestInfo(bidder="displayio"))
    assert bodies[0]["ext"] == {**want, "displayio": {"placementId": "11", "inventoryId": "22"}}


@pytest.mark.parametrize("count", [0, 2])
def test_an_answer_needs_one_seatbid(count):
    request = request_with({})
    calls, _ = adapter().make_requests(request, RequestInfo(bidder="displayio"))
    bid = {"id": "b", "impid": "a", "price": 1, "mtype": 1}
    body = orjson.dumps({"seatbid": [{"bid": [bid]}] * count})
    result, errors = adapter().make_bids(request, calls[0], ResponseData(200, body))
    assert result is None
    assert [(e.message, e.code) for e in errors] == [
        (f"Invalid SeatBids count: {count}", ErrorCode.BAD_SERVER_RESPONSE)
    ]
