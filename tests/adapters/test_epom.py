"""Epom's own rules over its recipe: a device IPv4 is required, and an answer without bids in its
first seatbid is "No bids in response"."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo, ResponseData
from tests.adapters.helpers import requests_of

IMP = {"id": "a", "banner": {"w": 1, "h": 1}, "ext": {"bidder": {}}}


def adapter() -> Any:
    return build_adapter("epom", AdapterConfig("epom", "https://epom.example.com/ortb"))


@pytest.mark.parametrize(
    ("device", "calls_made"),
    [({"ip": "1.2.3.4"}, 1), ({"ipv6": "::1"}, 0), ({"ip": ""}, 0), (None, 0)],
)
def test_a_device_ipv4_is_required(device, calls_made):
    request = {"id": "r", "imp": [IMP], **({} if device is None else {"device": device})}
    calls, _, errors = requests_of(adapter(), request, RequestInfo(bidder="epom"))
    assert len(calls) == calls_made
    want = [] if calls_made else [("ipv4 address is required field", ErrorCode.BAD_INPUT)]
    assert [(e.message, e.code) for e in errors] == want


BID = {"id": "b", "impid": "a", "price": 1}


@pytest.mark.parametrize(
    ("seatbids", "bids"),
    [
        ([], None),
        ([{"bid": []}, {"bid": [BID]}], None),  # the first seatbid decides
        ([{"bid": [BID]}, {"bid": [BID]}], 2),
    ],
)
def test_an_answer_without_bids_in_its_first_seatbid(seatbids, bids):
    request = {"id": "r", "imp": [IMP], "device": {"ip": "1.2.3.4"}}
    calls, _ = adapter().make_requests(request, RequestInfo(bidder="epom"))
    result, errors = adapter().make_bids(request, calls[0], ResponseData(200, orjson.dumps({"seatbid": seatbids})))
    if bids is None:
        assert (result, [e.message for e in errors]) == (None, ["No bids in response"])
    else:
        assert errors == []
        assert [typed.bid_type for typed in result.bids] == ["banner"] * bids
