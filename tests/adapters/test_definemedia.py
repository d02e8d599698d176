"""Definemedia's own bid typing over its recipe: bid.ext.prebid.type banner or native; any other
type, or no decodable prebid, drops the bid with its error."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo, ResponseData

FAILED = 'Failed to parse impression "a" mediatype'


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"prebid": {"type": "banner"}}, "banner"),
        ({"prebid": {"type": "native"}}, "native"),
        ({"prebid": {"type": "video"}}, "Invalid mediatype in the impression"),
        ({"prebid": {}}, "Invalid mediatype in the impression"),
        ({}, FAILED),
        ({"prebid": 5}, FAILED),
        (None, FAILED),
    ],
)
def test_bids_typed_by_ext_prebid_type(ext: Any, want: str):
    adapter = build_adapter("definemedia", AdapterConfig("definemedia", "https://rtb.example.com/auction"))
    request = {"id": "r", "imp": [{"id": "a", "banner": {"w": 1, "h": 1}}]}
    calls, _ = adapter.make_requests(request, RequestInfo(bidder="definemedia"))
    bid = {"id": "b", "impid": "a", "price": 1, **({} if ext is None else {"ext": ext})}
    body = orjson.dumps({"seatbid": [{"bid": [bid]}]})
    result, errors = adapter.make_bids(request, calls[0], ResponseData(200, body))
    if want in ("banner", "native"):
        assert (errors, [typed.bid_type for typed in result.bids]) == ([], [want])
    else:
        assert result.bids == []
        assert [(e.message, e.code) for e in errors] == [(want, ErrorCode.BAD_SERVER_RESPONSE)]
