"""Colossus adapter: the tagid read from ``ext.bidder.TagID`` as jsonparser reads it, the imp kept
otherwise; bids typed by ext.mediaType, else by their imp."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.colossus import build
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "http://colossus.test/?c=o&m=rtb"
INFO = RequestInfo(bidder="colossus")


def run(imps: list[dict[str, Any]]):
    return requests_of(build(AdapterConfig("colossus", ENDPOINT)), {"id": "r", "imp": imps}, INFO)


@pytest.mark.parametrize(
    ("imp", "tagid", "error"),
    [
        ({"id": "i", "banner": {}, "ext": {"bidder": {"TagID": "t1"}}}, "t1", None),
        ({"id": "i", "banner": {}, "tagid": "old", "ext": {"bidder": {"TagID": ""}}}, None, None),  # emptied
        ({"id": "i", "banner": {}, "tagid": "old", "ext": {"bidder": {"groupId": "g"}}}, "old", None),  # kept
        ({"id": "i", "banner": {}, "tagid": "old", "ext": {"bidder": {"tagid": "t"}}}, "old", None),  # exact key
        ({"id": "i", "banner": {}, "ext": "aaa"}, None, None),  # no path: the imp as it is
        ({"id": "i", "banner": {}}, None, None),
        ({"id": "i", "banner": {}, "ext": {"bidder": {"TagID": 5}}}, None, "Value is not a string: 5"),
        ({"id": "i", "banner": {}, "ext": {"bidder": {"TagID": None}}}, None, "Value is not a string: null"),
    ],
)
def test_tag_id(imp, tagid, error):
    calls, bodies, errors = run([imp])
    if error is not None:
        assert (calls, [(e.message, e.code) for e in errors]) == ([], [(error, ErrorCode.UNKNOWN)])
        return
    assert errors == []
    assert [call.uri for call in calls] == [ENDPOINT]
    assert bodies[0]["imp"][0].get("tagid") == tagid
    assert bodies[0]["imp"][0].get("ext") == imp.get("ext")


def test_one_call_per_imp_a_bad_one_dropped():
    good = {"id": "a", "banner": {}, "ext": {"bidder": {"TagID": "t"}}}
    bad = {"id": "b", "banner": {}, "ext": {"bidder": {"TagID": []}}}
    calls, bodies, errors = run([good, bad, {**good, "id": "c"}])
    assert [body["imp"][0]["id"] for body in bodies] == ["a", "c"]
    assert [call.imp_ids for call in calls] == [["a"], ["c"]]
    assert [e.message for e in errors] == ["Value is not a string: []"]


REQUEST = {"imp": [{"id": "b", "banner": {}}, {"id": "v", "video": {}}, {"id": "none"}]}


@pytest.mark.parametrize(
    ("bid", "want"),
    [
        ({"impid": "b", "ext": {"mediaType": "video"}}, "video"),
        ({"impid": "v", "ext": {"mediaType": "audio"}}, "video"),  # not one of its types: the imp's
        ({"impid": "b", "ext": "x"}, "banner"),
        ({"impid": "none"}, ('Failed to find impression "none"', ErrorCode.BAD_INPUT)),
        ({"impid": "zzz"}, ('Failed to find impression "zzz"', ErrorCode.BAD_INPUT)),
    ],
)
def test_bid_types(bid, want):
    answer = {"seatbid": [{"bid": [{"id": "1", "price": 1, **bid}]}]}
    response, errors = bids_for(build(AdapterConfig("colossus", ENDPOINT)), REQUEST, answer)
    assert response is not None and response.currency == "USD"
    if isinstance(want, tuple):
        assert (response.bids, [(e.message, e.code) for e in errors]) == ([], [want])
    else:
        assert ([bid.bid_type for bid in response.bids], errors) == ([want], [])


@pytest.mark.parametrize("status", [400, 404, 500])
def test_failure_statuses_are_bad_server_responses(status):
    response, errors = bids_for(build(AdapterConfig("colossus", ENDPOINT)), REQUEST, b"", status)
    want = f"Unexpected status code: {status}. Run with request.debug = 1 for more info"
    assert (response, [(e.message, e.code) for e in errors]) == (None, [(want, ErrorCode.BAD_SERVER_RESPONSE)])
