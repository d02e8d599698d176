"""ElementalTV's own rules over its recipe: the request id per call, the imp map that types bids
(duplicates and imps without media fail the answer), unknown imps, and video facts from ext.ads."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo, ResponseData
from tests.adapters.helpers import requests_of

ENDPOINT = "https://elementaltv.example.com/bid/{{.AdUnit}}"


def adapter() -> Any:
    return build_adapter("elementaltv", AdapterConfig("elementaltv", ENDPOINT))


def imp(imp_id: str, adunit: str, **media: Any) -> dict[str, Any]:
    return {"id": imp_id, **(media or {"banner": {"w": 1, "h": 1}}), "ext": {"bidder": {"adunit": adunit}}}


def test_each_call_has_its_request_id_and_adunit_path():
    request = {"id": "r", "imp": [imp("a", "u 1"), imp("b", "")]}
    calls, bodies, errors = requests_of(adapter(), request, RequestInfo(bidder="elementaltv"))
    assert [call.uri for call in calls] == ["https://elementaltv.example.com/bid/u%201"]
    assert [body["id"] for body in bodies] == ["r-u 1"]
    assert calls[0].headers["X-OpenRTB-Version"] == "2.6"
    assert [(e.message, e.code) for e in errors] == [("$.imp.ext.bidder.adunit required", ErrorCode.BAD_INPUT)]


VIDEO = {"mimes": ["video/mp4"]}


@pytest.mark.parametrize(
    ("imps", "bid", "want"),
    [
        ([imp("a", "u")], {"impid": "a"}, ("banner", None)),
        (
            [imp("a", "u", video=VIDEO)],
            {"impid": "a", "cat": ["IAB1", "IAB2"], "ext": {"ads": {"video": {"duration": 15}}}},
            ("video", {"duration": 15, "primary_category": "IAB1"}),
        ),
        ([imp("a", "u", video=VIDEO)], {"impid": "a", "ext": {"ads": {}}}, "$.seatbid.bid.ext.ads.video required"),
        ([imp("a", "u", video=VIDEO)], {"impid": "a", "ext": "x"}, 'expect { or n, but found "'),
        ([imp("a", "u")], {"impid": "z"}, "unknown impid: z"),
        ([imp("a", "u"), imp("a", "v")], {"impid": "a"}, "duplicate $.imp.id a"),
        (
            [imp("a", "u"), {"id": "b"}],
            {"impid": "a"},
            "one of $.imp.banner, $.imp.video, $.imp.audio and $.imp.native field required",
        ),
    ],
)
def test_bid_typing(imps, bid, want):
    request = {"id": "r", "imp": imps}
    calls, _ = adapter().make_requests(request, RequestInfo(bidder="elementaltv"))
    body = orjson.dumps({"seatbid": [{"bid": [{"id": "b", "price": 1, **bid}]}]})
    result, errors = adapter().make_bids(request, calls[0], ResponseData(200, body))
    if isinstance(want, tuple):
        assert errors == []
        assert [(typed.bid_type, typed.bid_video) for typed in result.bids] == [want]
    else:
        assert result is None
        assert [e.message for e in errors] == [want]
