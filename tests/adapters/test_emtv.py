"""EMTV's own imp rule over its recipe: an imp naming neither a placement nor an endpoint is left
out silently, a bad ext stops the request, no call at all is an error."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, RequestInfo
from tests.adapters.helpers import requests_of


def imp(imp_id: str, ext: Any) -> dict[str, Any]:
    return {"id": imp_id, "banner": {"w": 1, "h": 1}, "ext": ext}


@pytest.mark.parametrize(
    ("imps", "ids", "errors"),
    [
        ([imp("a", {"bidder": {"placementId": "p"}}), imp("b", {"bidder": {}})], [["a"]], []),
        ([imp("a", {"bidder": {}}), imp("b", {"bidder": {"endpointId": "e"}})], [["b"]], []),
        ([imp("a", {"bidder": {}})], [], ["found no valid impressions"]),
        ([], [], ["found no valid impressions"]),
        (
            [imp("a", {"bidder": {"placementId": "p"}}), imp("b", {"bidder": {"placementId": 5}})],
            [],
            ['cannot unmarshal openrtb_ext.ImpExtEmtv.PlacementID: expects " or n, but found 5'],
        ),
    ],
)
def test_imps_without_ids_are_left_out(imps, ids, errors):
    adapter = build_adapter("emtv", AdapterConfig("emtv", "http://emtv.example.com/pserver"))
    calls, bodies, got = requests_of(adapter, {"id": "r", "imp": imps}, RequestInfo(bidder="emtv"))
    assert [call.imp_ids for call in calls] == ids
    assert [e.message for e in got] == errors
    assert all(body["imp"][0]["ext"]["bidder"]["type"] in ("publisher", "network") for body in bodies)
