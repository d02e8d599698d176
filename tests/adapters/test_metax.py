"""MetaX adapter: one call per imp with its endpoint from the params, banner sizes from the first
format, no answer without bids in the first seatbid, mtype typing and video facts."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.metax import build
from tests.adapters.helpers import bids_for, imp_with, requests_of

ENDPOINT = "https://hb.metaxads.com/prebid?sid={{.PublisherID}}&adunit={{.AdUnit}}"
ADAPTER = build(AdapterConfig("metax", ENDPOINT))
INFO = RequestInfo(bidder="metax")


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    default = {"publisherId": 1, "adunit": 2}
    return imp_with(imp_id, default if params is None else params, fields, {"banner": {"w": 1, "h": 1}})


@pytest.mark.parametrize(
    ("params", "want"),
    [
        ({"publisherId": 10, "adunit": 20}, "https://hb.metaxads.com/prebid?sid=10&adunit=20"),
        ({"PUBLISHERID": 10}, "https://hb.metaxads.com/prebid?sid=10&adunit=0"),
        ({"publisherId": "10", "adunit": 20}, "Wrong MetaX bidder ext"),
        ({"publisherId": 1.5}, "Wrong MetaX bidder ext"),
        ("x", "Wrong MetaX bidder ext"),
    ],
)
def test_endpoint_from_params(params, want):
    calls, _bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": [imp(params=params)]}, INFO)
    assert [c.uri for c in calls] + [e.message for e in errors] == [want]


@pytest.mark.parametrize(
    ("banner", "want"),
    [
        ({"format": [{"w": 3, "h": 4}, {"w": 5, "h": 6}]}, (3, 4)),
        ({"w": 7, "format": [{"w": 3, "h": 4}]}, (3, 4)),
        ({"w": 7, "h": 8, "format": [{"w": 3, "h": 4}]}, (7, 8)),
        ({"format": []}, (None, None)),
    ],
)
def test_banner_size(banner, want):
    calls, bodies, _errors = requests_of(ADAPTER, {"id": "r", "imp": [imp("a", banner=banner), imp("b")]}, INFO)
    assert [c.imp_ids for c in calls] == [["a"], ["b"]]
    sent = bodies[0]["imp"][0]["banner"]
    assert (sent.get("w"), sent.get("h")) == want


@pytest.mark.parametrize(
    ("answer", "want"),
    [
        ({"seatbid": []}, None),
        ({"seatbid": [{"bid": []}, {"bid": [{"id": "b", "impid": "i", "price": 1, "mtype": 1}]}]}, None),
        ({"seatbid": [{"bid": [{"id": "b", "impid": "i", "price": 1, "mtype": 2, "cat": ["c"], "dur": 15}]}]}, "video"),
        (
            {
                "seatbid": [
                    {"bid": [{"id": "b", "impid": "i", "price": 1, "mtype": 1}, {"id": "c", "impid": "i", "price": 1}]}
                ]
            },
            "error",
        ),
    ],
)
def test_answer(answer, want):
    response, errors = bids_for(ADAPTER, {"imp": []}, {"cur": "EUR", **answer})
    if want is None:
        assert (response, errors) == (None, [])
    elif want == "error":
        assert response is None
        assert [(e.message, e.code) for e in errors] == [("Unsupported MType 0", ErrorCode.BAD_SERVER_RESPONSE)]
    else:
        assert response is not None and response.currency == "EUR"
        assert [(t.bid_type, t.bid_video) for t in response.bids] == [(want, {"primary_category": "c", "duration": 15})]


def test_empty_endpoint_refused():
    with pytest.raises(ValueError, match="endpoint is empty"):
        build(AdapterConfig("metax", ""))
