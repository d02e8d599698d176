"""Smoot's own rule: an imp with neither a placementId nor an endpointId is a network one."""

from __future__ import annotations

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.smoot import build

ADAPTER = build(AdapterConfig("smoot", "https://s.example/pserver"))


@pytest.mark.parametrize(
    ("params", "bidder"),
    [
        ({"placementId": "p", "endpointId": "e"}, {"type": "publisher", "placementId": "p"}),
        ({"endpointId": "e"}, {"type": "network", "endpointId": "e"}),
        ({}, {"type": "network"}),
    ],
)
def test_imp_ext(params, bidder):
    calls, errors = ADAPTER.make_requests(
        {"imp": [{"id": "a", "banner": {}, "ext": {"bidder": params}}]}, RequestInfo("smoot")
    )
    assert not errors and orjson.loads(calls[0].body)["imp"][0]["ext"] == {"bidder": bidder}
