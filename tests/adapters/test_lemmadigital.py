"""Lemma Digital's own rule: every bid typed by the request's first imp (the call and the wording are
recipe steps, tested there)."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.lemmadigital import build, first_imp_type
from tests.adapters.helpers import bids_for

ADAPTER = build(AdapterConfig("lemmadigital", "http://l.example/?pid={{.PublisherID}}&aid={{.AdUnit}}"))


@pytest.mark.parametrize(
    ("imps", "kind"),
    [
        ([{"id": "a", "video": {}}, {"id": "b", "banner": {}}], "video"),
        ([{"id": "a", "banner": {}}, {"id": "b", "video": {}}], "banner"),
        ([{"id": "a", "native": {}}], "banner"),
        ([], "banner"),
    ],
)
def test_first_imp_type(imps, kind):
    assert first_imp_type({"imp": imps}) == kind


def test_bids_of_the_first_seatbid_take_the_first_imps_type():
    request = {"imp": [{"id": "a", "video": {}}, {"id": "b", "banner": {}}]}
    answer = {
        "cur": "EUR",
        "seatbid": [{"bid": [{"id": "1", "impid": "b", "price": 1}]}, {"bid": [{"id": "2", "impid": "a"}]}],
    }
    result, errors = bids_for(ADAPTER, request, answer)
    assert errors == [] and result.currency == "EUR"
    assert [(bid.bid["id"], bid.bid_type) for bid in result.bids] == [("1", "video")]


def test_the_call_takes_the_first_imps_ids():
    imps = [{"id": "a", "banner": {}, "ext": {"bidder": {"pid": 1, "aid": 2}}}, {"id": "b", "banner": {}}]
    calls, errors = ADAPTER.make_requests({"imp": imps}, RequestInfo("lemmadigital"))
    assert errors == [] and calls[0].uri == "http://l.example/?pid=1&aid=2" and calls[0].headers == {}
