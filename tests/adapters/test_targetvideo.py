"""TargetVideo's own rules over its recipe: the imp's ext rewritten (bidder gone, prebid typed and
naming the placement as its stored request), and an answer without bids in USD."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.targetvideo import build, stored_request_ext
from tests.adapters.helpers import bids_for, requests_of

ADAPTER = build(AdapterConfig("targetVideo", "https://t.example/pbs"))


@pytest.mark.parametrize(
    ("ext", "sent"),
    [
        ({"bidder": {}}, {"prebid": {"storedrequest": {"id": "7"}}}),
        (
            {"bidder": {}, "tid": "t", "prebid": {"storedrequest": {"id": "x", "y": 1}, "is_rewarded_inventory": 0}},
            {"tid": "t", "prebid": {"storedrequest": {"id": "7"}, "is_rewarded_inventory": 0}},
        ),
        (
            {"prebid": {"adunitcode": "", "bidder": {}, "passthrough": {}, "unknown": 1, "options": None}},
            {"prebid": {"storedrequest": {"id": "7"}, "passthrough": {}}},
        ),
    ],
)
def test_the_ext_names_the_placement_as_stored_request(ext, sent):
    assert stored_request_ext(ext, 7) == sent


def test_one_call_per_imp_a_bad_one_dropped():
    imps = [
        {"id": "1", "video": {"mimes": []}, "ext": {"bidder": {"placementId": "12"}}},
        {"id": "2", "video": {"mimes": []}, "ext": "x"},
        {"id": "3", "video": {"mimes": []}, "ext": {"bidder": {"placementId": "a"}}},
    ]
    _, bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": imps}, RequestInfo("targetVideo"))
    assert [body["imp"][0]["ext"] for body in bodies] == [{"prebid": {"storedrequest": {"id": "12"}}}]
    assert errors[0].message == "Invalid ext.bidder" and len(errors) == 2


@pytest.mark.parametrize(
    ("seatbid", "currency"), [([], "USD"), ([{"bid": [{"id": "b", "impid": "1", "price": 1}]}], "EUR")]
)
def test_the_currency_is_the_answers_only_with_bids(seatbid, currency):
    response, errors = bids_for(ADAPTER, {}, {"cur": "EUR", "seatbid": seatbid})
    assert response.currency == currency and all(t.bid_type == "video" for t in response.bids) and not errors
