"""SA Lunamedia adapter: the first bid of the first seatbid alone, typed by its ext.mediaType."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode
from hbserver.adapters.sa_lunamedia import build
from tests.adapters.helpers import bids_for

ADAPTER = build(AdapterConfig("sa_lunamedia", "http://l.example/pserver"))
REQUEST = {"id": "r", "imp": [{"id": "a", "banner": {"w": 1, "h": 1}}]}


def bid(bid_id: str, ext: Any = "absent") -> dict[str, Any]:
    return {"id": bid_id, "impid": "a", "price": 1} | ({} if ext == "absent" else {"ext": ext})


@pytest.mark.parametrize(
    ("seatbids", "want", "errors"),
    [
        ([{"bid": [bid("x", {"mediaType": "video"}), bid("y", {"mediaType": "banner"})]}], [("x", "video")], []),
        ([{"bid": [bid("x", {"MEDIATYPE": "native"})]}], [("x", "native")], []),
        ([{"bid": [bid("x", {"mediaType": "vast"})]}], None, [("invalid BidType: vast", ErrorCode.UNKNOWN)]),
        ([{"bid": [bid("x", {})]}], None, [("invalid BidType: ", ErrorCode.UNKNOWN)]),
        ([{"bid": [bid("x")]}], None, [("Missing BidExt", ErrorCode.BAD_SERVER_RESPONSE)]),
        ([{"bid": [bid("x", {"mediaType": 1})]}], None, [("Missing BidExt", ErrorCode.BAD_SERVER_RESPONSE)]),
        ([{"bid": []}, {"bid": [bid("x")]}], None, [("Empty SeatBid.Bids", ErrorCode.BAD_SERVER_RESPONSE)]),
        ([], None, [("Empty SeatBid", ErrorCode.BAD_SERVER_RESPONSE)]),
    ],
)
def test_the_bid_taken(seatbids: list[Any], want: Any, errors: list[Any]) -> None:
    response, got = bids_for(ADAPTER, REQUEST, {"seatbid": seatbids})
    assert [(e.message, e.code) for e in got] == errors
    assert (None if response is None else [(b.bid["id"], b.bid_type) for b in response.bids]) == want
