"""Adman adapter (a recipe): one call per imp with its TagID as tagid; the answer's statuses (204
no bids, 404 an error, any other read as 200) and bids typed by their imp."""

from __future__ import annotations

import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "http://pub.admanmedia.com/?c=o&m=ortb"


def adapter():
    return build_adapter("adman", AdapterConfig("adman", ENDPOINT))


def test_one_call_per_imp_with_its_tag():
    request = {
        "id": "r",
        "imp": [
            {"id": "a", "banner": {}, "ext": {"bidder": {"TagID": "t1"}}},
            {"id": "b", "banner": {}, "ext": {"bidder": {"TagID": 1}}},
            {"id": "c", "video": {"mimes": ["v"]}, "ext": {"bidder": {"TagID": "t3"}}},
        ],
    }
    calls, bodies, errors = requests_of(adapter(), request, RequestInfo(bidder="adman"))
    assert [(c.uri, c.imp_ids) for c in calls] == [(ENDPOINT, ["a"]), (ENDPOINT, ["c"])]
    assert [body["imp"][0]["tagid"] for body in bodies] == ["t1", "t3"]
    assert [e.message for e in errors] == [
        'cannot unmarshal openrtb_ext.ExtImpAdman.TagID: expects " or n, but found 1'
    ]


REQUEST = {"imp": [{"id": "b", "banner": {}, "video": {}}, {"id": "v", "video": {}}, {"id": "n", "native": {}}]}
BIDS = [{"id": i, "impid": i, "price": 1} for i in ("b", "v", "n", "x")]


@pytest.mark.parametrize("status", [200, 400, 500])
def test_any_status_but_204_and_404_is_read(status):
    response, errors = bids_for(adapter(), REQUEST, {"cur": "EUR", "seatbid": [{"bid": BIDS}]}, status)
    assert response.currency == "USD"
    assert [(b.bid["id"], b.bid_type) for b in response.bids] == [("b", "banner"), ("v", "video"), ("n", "banner")]
    assert [(e.code, e.message) for e in errors] == [(ErrorCode.BAD_INPUT, 'Failed to find impression "x" ')]


@pytest.mark.parametrize(
    ("status", "want"),
    [
        (204, []),
        (
            404,
            [(ErrorCode.BAD_SERVER_RESPONSE, "Unexpected status code: 404. Run with request.debug = 1 for more info")],
        ),
        (500, [(ErrorCode.UNKNOWN, "expect { or n, but found \x00")]),
    ],
)
def test_failed_answers(status, want):
    response, errors = bids_for(adapter(), REQUEST, b"", status)
    assert response is None
    assert [(e.code, e.message) for e in errors] == want
