"""AAX adapter: the ``src`` query parameter from ``extra_info``, one call (its recipe), bids typed by
``ext.adCodeType`` else by their imp's one media type."""

from __future__ import annotations

import pytest

from hbserver.adapters.aax import build
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "https://example.aax.media/rtb/prebid"


@pytest.mark.parametrize(
    ("extra_info", "want"),
    [
        ("", ENDPOINT),
        ("http://localhost:8080/x", ENDPOINT + "?src=http%3A%2F%2Flocalhost%3A8080%2Fx"),
    ],
)
def test_one_call_to_the_built_endpoint(extra_info, want):
    adapter = build(AdapterConfig("aax", ENDPOINT, {"extra_info": extra_info}))
    request = {"id": "r", "imp": [{"id": "a", "banner": {}}, {"id": "b", "native": {"request": ""}}]}
    calls, bodies, errors = requests_of(adapter, request, RequestInfo(bidder="aax"))
    assert errors == []
    assert [(c.uri, c.imp_ids) for c in calls] == [(want, ["a", "b"])]
    assert dict(calls[0].headers) == {"Content-Type": "application/json;charset=utf-8"}
    assert bodies[0] == request


REQUEST = {"imp": [{"id": "b", "banner": {}}, {"id": "m", "banner": {}, "video": {}}, {"id": "v", "video": {}}]}


@pytest.mark.parametrize(
    ("bid", "want"),
    [
        ({"impid": "m", "ext": {"adCodeType": "native"}}, "native"),  # the ext wins over the imp
        ({"impid": "b", "ext": {"adCodeType": "audio"}}, "banner"),  # an unknown type: the imp's
        ({"impid": "v", "ext": {"adCodeType": 1}}, "video"),  # an ext that does not decode: the imp's
        ({"impid": "b"}, "banner"),
        ({"impid": "m"}, None),  # two media types
        ({"impid": "x"}, None),  # no imp
    ],
)
def test_bid_types(bid, want):
    adapter = build(AdapterConfig("aax", ENDPOINT))
    response, errors = bids_for(adapter, REQUEST, {"cur": "EUR", "seatbid": [{"bid": [{"price": 1, **bid}]}]})
    assert response.currency == "USD"
    assert [b.bid_type for b in response.bids] == ([want] if want else [])
    want_errors = [] if want else [(ErrorCode.UNKNOWN, f"unable to fetch mediaType in multi-format: {bid['impid']}")]
    assert [(e.code, e.message) for e in errors] == want_errors
