"""Adagio adapter: the request goes as it is; an answer without seatbids is an error; bids typed
by ``mtype`` carry their ``ext.prebid`` meta and video; a bid ext that does not decode is reported."""

from __future__ import annotations

import pytest

from hbserver.adapters.adagio import build
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "https://mp-ams.4dex.io/pbserver"
ADAPTER = build(AdapterConfig("adagio", ENDPOINT))


def test_request_goes_as_it_is():
    request = {"id": "r", "imp": [{"id": "a", "banner": {}, "ext": {"bidder": {"organizationId": "1"}}}], "site": {}}
    calls, bodies, errors = requests_of(ADAPTER, request, RequestInfo(bidder="adagio"))
    assert errors == [] and [(c.uri, c.imp_ids) for c in calls] == [(ENDPOINT, ["a"])]
    assert bodies == [request]


@pytest.mark.parametrize(
    ("bid", "want"),
    [
        ({"mtype": 1}, ("banner", None, None)),
        ({"mtype": 2, "ext": {"prebid": {"video": {"duration": 30}}}}, ("video", None, {"duration": 30})),
        ({"mtype": 4, "ext": {"prebid": {"meta": {"brandId": 1}}}}, ("native", {"brandId": 1}, None)),
        ({"mtype": 3}, ("Could not define media type for impression: i", ErrorCode.BAD_INPUT)),
        ({"mtype": 1, "ext": "x"}, ('bid ext, err: expect { or n, but found "', ErrorCode.UNKNOWN)),
        (
            {"mtype": 1, "ext": {"prebid": {"video": {"duration": "x"}}}},
            ("bid ext, err: cannot unmarshal", ErrorCode.UNKNOWN),
        ),
    ],
)
def test_bids(bid, want):
    full = {"id": "b", "impid": "i", "price": 1, **bid}
    response, errors = bids_for(ADAPTER, {"imp": []}, {"cur": "EUR", "seatbid": [{"bid": [full]}]})
    assert response is not None and response.currency == "EUR"
    got = [(t.bid_type, t.bid_meta, t.bid_video) for t in response.bids]
    got += [(e.message[: len(want[0])], e.code) for e in errors]
    assert got == [want]


def test_answer_without_seatbids_is_an_error():
    response, errors = bids_for(ADAPTER, {"imp": []}, {"id": "r", "seatbid": []})
    assert response is None
    assert [(e.message, e.code) for e in errors] == [("empty seatbid array", ErrorCode.BAD_SERVER_RESPONSE)]


def test_body_that_does_not_decode():
    response, errors = bids_for(ADAPTER, {"imp": []}, b"[]")
    assert response is None and [e.message for e in errors] == ["bid response, err: expect { or n, but found ["]
