"""Media.net adapter: the ``src`` query parameter from ``extra_info``, one call (its recipe), bids typed by
``mtype`` and statuses."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.medianet import build, endpoint_with_source
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "https://prebid-adapter.media.net/rtb/pb/prebids2s"


@pytest.mark.parametrize(
    ("endpoint", "source", "want"),
    [
        (ENDPOINT, "", ENDPOINT),
        (ENDPOINT, "https://medianet.golang.pbs.com", ENDPOINT + "?src=https%3A%2F%2Fmedianet.golang.pbs.com"),
        ("https://x.net/p?z=1&a=b c", "s t~&", "https://x.net/p?a=b+c&src=s+t~%26&z=1"),
        ("https://x.net/p?src=old", "new", "https://x.net/p?src=old&src=new"),
    ],
)
def test_endpoint_with_source(endpoint, source, want):
    assert endpoint_with_source(endpoint, source) == want


def test_one_call_to_the_built_endpoint():  # the request as Go re-encodes it (Video writes mimes)
    adapter = build(AdapterConfig("medianet", ENDPOINT, {"extra_info": "https://h.example"}))
    request = {"id": "r", "imp": [{"id": "a", "banner": {}}, {"id": "b", "video": {}}], "ext": {"x": 1}}
    calls, bodies, errors = requests_of(adapter, request, RequestInfo(bidder="medianet"))
    assert errors == []
    assert [(c.uri, c.imp_ids) for c in calls] == [(ENDPOINT + "?src=https%3A%2F%2Fh.example", ["a", "b"])]
    assert dict(calls[0].headers) == {"Content-Type": "application/json;charset=utf-8"}
    assert bodies[0] == {**request, "imp": [{"id": "a", "banner": {}}, {"id": "b", "video": {"mimes": None}}]}


def bids_of(body: Any, status: int = 200):
    return bids_for(build(AdapterConfig("medianet", ENDPOINT)), {}, body, status)


def test_bids_typed_by_mtype():
    bids = [{"id": str(m), "impid": f"i{m}", "price": 1, "mtype": m} for m in (1, 2, 3, 4, None)]
    response, errors = bids_of({"cur": "EUR", "seatbid": [{"bid": bids}]})
    assert response.currency == "USD"
    assert [(b.bid["id"], b.bid_type) for b in response.bids] == [("1", "banner"), ("2", "video"), ("4", "native")]
    assert [(e.code, e.message) for e in errors] == [
        (ErrorCode.UNKNOWN, "Unable to fetch mediaType for imp: i3"),
        (ErrorCode.UNKNOWN, "Unable to fetch mediaType for imp: iNone"),
    ]


@pytest.mark.parametrize(
    ("status", "want_errors"),
    [
        (204, []),
        (400, [(ErrorCode.BAD_INPUT, "Unexpected status code: 400. Run with request.debug = 1 for more info")]),
        (
            502,
            [(ErrorCode.BAD_SERVER_RESPONSE, "Unexpected status code: 502. Run with request.debug = 1 for more info")],
        ),
    ],
)
def test_statuses(status, want_errors):
    response, errors = bids_of(b"", status)
    assert response is None
    assert [(e.code, e.message) for e in errors] == want_errors
