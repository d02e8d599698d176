"""Mobkoi's own rules: the first imp's tagid, the consent in user.ext and the seat (the params'
reading and the answer are recipe steps)."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.mobkoi import NO_TAG, build, with_consent_ext
from tests.adapters.helpers import bids_for, requests_of

ADAPTER = build(AdapterConfig("mobkoi", "https://mobkoi.example/bid"))


@pytest.mark.parametrize(
    ("user", "want"),
    [
        (None, None),
        ({"consent": ""}, {"consent": ""}),
        ({"consent": "c", "ext": {"eids": []}}, {"consent": "c", "ext": {"consent": "c"}}),
    ],
)
def test_consent_ext(user, want):
    request = {} if user is None else {"user": user}
    assert with_consent_ext(request).get("user") == want


@pytest.mark.parametrize(
    ("first", "tagids", "error"),
    [
        ({"tagid": "t", "ext": {"bidder": {"placementId": "p"}}}, ["p", "keep"], None),
        ({"tagid": "t", "ext": {"bidder": {}}}, ["t", "keep"], None),
        ({"ext": {"bidder": {}}}, [], NO_TAG),
        ({"ext": {"bidder": {"placementId": 1}}}, [], "cannot unmarshal openrtb_ext.ImpExtMobkoi.PlacementID"),
        ({"ext": []}, [], "expect { or n, but found ["),
    ],
)
def test_first_imp_tagid(first, tagids, error):
    imps = [{"id": "a", "banner": {}, **first}, {"id": "b", "banner": {}, "tagid": "keep"}]
    _, bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": imps}, RequestInfo("mobkoi"))
    assert [i["tagid"] for b in bodies for i in b["imp"]] == tagids
    assert [e.message[: len(error)] for e in errors] == ([] if error is None else [error])


def test_bids_under_the_mobkoi_seat():
    bids = [{"id": "1", "impid": "a", "price": 1}]
    response, errors = bids_for(ADAPTER, {}, {"cur": "EUR", "seatbid": [{"bid": bids}]})
    assert not errors and response.currency == "EUR"
    assert [(t.bid_type, t.seat) for t in response.bids] == [("banner", "mobkoi")]
