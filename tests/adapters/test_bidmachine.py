"""BidMachine's own imp rules over its recipe: the endpoint from host/path/seller_id, the banner size
check and rewarded battr (the answer's wording and bid typing are recipe steps, tested there)."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.bidmachine import build, go_path_join
from tests.adapters.helpers import requests_of

ADAPTER = build(AdapterConfig("bidmachine", "https://{{.Host}}.bidmachine.io"))
INFO = RequestInfo(bidder="bidmachine")


def imp(params: Any = None, **fields: Any) -> dict:
    bidder = {"host": "api-us", "path": "auction/rtb/v2", "seller_id": "1"} if params is None else params
    return {"id": "i", "banner": {"w": 1, "h": 1}, **fields, "ext": {"bidder": bidder}}


@pytest.mark.parametrize(
    ("params", "want"),
    [
        (
            {"host": "api-us", "path": "auction/rtb/v2", "seller_id": "1"},
            "https://api-us.bidmachine.io/auction/rtb/v2/1",
        ),
        ({"host": "api-eu", "path": "/a//b/../c", "seller_id": "x y"}, "https://api-eu.bidmachine.io/a/c/x%20y"),
        ({"host": "api"}, "https://api.bidmachine.io"),
        ({"host": "evil.com/p?x#"}, "Failed to create final URL with provided host"),
        ({"host": ""}, "Failed to create final URL with provided host"),
        ({"host": 1}, 'cannot unmarshal openrtb_ext.ExtImpBidmachine.Host: expects " or n, but found 1'),
    ],
)
def test_endpoint(params, want):
    calls, _bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": [imp(params)]}, INFO)
    assert [c.uri for c in calls] + [e.message for e in errors] == [want]


@pytest.mark.parametrize(
    ("elements", "want"), [(("", ""), ""), (("", "a"), "a"), (("/", "a/"), "/a"), (("a", "../.."), "..")]
)
def test_path_join(elements, want):
    assert go_path_join(*elements) == want


@pytest.mark.parametrize(
    ("banner", "want"),
    [
        ({}, "banner format is missing"),
        ({"format": []}, "banner format array is empty"),
    ],
)
def test_banner_needs_a_size(banner, want):
    calls, _bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": [imp(banner=banner)]}, INFO)
    assert calls == [] and len(errors) == 1 and want in errors[0].message
    assert errors[0].code is ErrorCode.BAD_INPUT


@pytest.mark.parametrize(
    ("media", "want"),
    [
        ({"banner": {"w": 1, "h": 1}}, {"banner": [16]}),
        ({"banner": {"w": 1, "h": 1, "battr": [3, 16]}}, {"banner": [3, 16]}),
        ({"video": {"mimes": ["v"], "battr": [2]}}, {"video": [2, 16]}),
    ],
)
def test_rewarded_battr(media, want):
    request = {
        "id": "r",
        "imp": [{"id": "i", **media, "ext": {"bidder": {"host": "h"}, "prebid": {"is_rewarded_inventory": 1}}}],
    }
    _calls, bodies, _errors = requests_of(ADAPTER, request, INFO)
    assert {kind: bodies[0]["imp"][0][kind]["battr"] for kind in want} == want
