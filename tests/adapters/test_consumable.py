"""Consumable's own rules over its recipe: a site request goes to /sb/rtb and needs a site, network
or unit id, any other to /rtb/bid?s=<placementid> and needs the placement id; the whole request is
sent; a video bid carries its dur as the duration."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo, ResponseData
from tests.adapters.helpers import requests_of

ENDPOINT = "https://e.example.com"


def adapter() -> Any:
    return build_adapter("consumable", AdapterConfig("consumable", ENDPOINT))


def request_with(params: Any, **top: Any) -> dict[str, Any]:
    return {"id": "r", "imp": [{"id": "a", "banner": {"w": 1, "h": 1}, "ext": {"bidder": params}}], **top}


@pytest.mark.parametrize(
    ("params", "top", "uri", "error"),
    [
        ({"siteId": 1}, {"site": {"page": "p"}}, ENDPOINT + "/sb/rtb", None),
        ({"unitId": 3}, {"site": {}}, ENDPOINT + "/sb/rtb", None),
        ({"placementId": "abc"}, {"site": {}}, None, "SiteId, NetworkId and UnitId are all required for site requests"),
        ({"placementId": "abc"}, {"app": {"id": "1"}}, ENDPOINT + "/rtb/bid?s=abc", None),
        ({"placementId": "abc"}, {}, ENDPOINT + "/rtb/bid?s=abc", None),
        ({"siteId": 1}, {"app": {}}, None, "PlacementId is required for non-site requests"),
    ],
)
def test_site_and_non_site_calls(params, top, uri, error):
    calls, bodies, errors = requests_of(adapter(), request_with(params, **top), RequestInfo(bidder="consumable"))
    if error is None:
        assert errors == []
        assert [call.uri for call in calls] == [uri]
        assert bodies[0]["imp"][0]["ext"] == {"bidder": params}
    else:
        assert calls == []
        assert [(e.message, e.code) for e in errors] == [(error, ErrorCode.FAILED_TO_REQUEST_BIDS)]


def test_params_of_the_wrong_type_are_bad_input():
    _, _, errors = requests_of(adapter(), request_with({"siteId": "x"}, site={}), RequestInfo(bidder="consumable"))
    assert [e.code for e in errors] == [ErrorCode.BAD_INPUT]


@pytest.mark.parametrize(
    ("bid", "kind", "video"),
    [
        ({"mtype": 2, "dur": 30}, "video", {"duration": 30, "primary_category": ""}),
        ({"mtype": 1, "dur": 30}, "banner", None),
        ({"mtype": 3}, "audio", None),
        ({"mtype": 4}, None, None),  # native: let go without an error
    ],
)
def test_bids_typed_by_mtype_video_with_its_duration(bid, kind, video):
    request = request_with({"placementId": "p"})
    answer = {"seatbid": [{"bid": [{"id": "b", "impid": "a", "price": 1, "cat": ["IAB1"], **bid}]}], "cur": "USD"}
    calls, _ = adapter().make_requests(request, RequestInfo(bidder="consumable"))
    result, errors = adapter().make_bids(request, calls[0], ResponseData(200, orjson.dumps(answer)))
    assert errors == []
    assert [(typed.bid_type, typed.bid_video) for typed in result.bids] == ([(kind, video)] if kind else [])
