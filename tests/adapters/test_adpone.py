"""Adpone adapter: one call with the whole request, the first imp's decoding errors reported beside
it (PBS-Go goes on); every bid a banner, an answer without seatbids none."""

from __future__ import annotations

import pytest

from hbserver.adapters.adpone import build
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.golike import ABSENT_OBJECT
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "http://localhost/prebid_server"


def adapter():
    return build(AdapterConfig("adpone", ENDPOINT))


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"bidder": {"placementId": "p"}}, []),
        ({"bidder": {}}, []),
        (
            {"bidder": {"placementId": 1}},
            ['cannot unmarshal openrtb_ext.ExtAdpone.PlacementId: expects " or n, but found 1'],
        ),
        ({"bidder": None}, [ABSENT_OBJECT]),
        (None, [ABSENT_OBJECT, ABSENT_OBJECT]),  # no ext, then no bidder
        ("x", ['expect { or n, but found "', ABSENT_OBJECT]),
        (
            {"bidder": {"placementId": 1}, "prebid": 1},
            [
                "cannot unmarshal adapters.ExtImpBidder.Prebid: expect { or n, but found 1",
                'cannot unmarshal openrtb_ext.ExtAdpone.PlacementId: expects " or n, but found 1',
            ],
        ),
    ],
)
def test_one_call_with_the_first_imps_errors(ext, want):
    request = {"id": "r", "imp": [{"id": "a", "banner": {}, "ext": ext}, {"id": "b", "banner": {}, "ext": 1}]}
    calls, _, errors = requests_of(adapter(), request, RequestInfo(bidder="adpone"))
    assert [(c.uri, c.imp_ids) for c in calls] == [(ENDPOINT, ["a", "b"])]
    assert dict(calls[0].headers)["X-Openrtb-Version"] == "2.5"
    assert [e.code for e in errors] == [ErrorCode.BAD_INPUT] * len(want)
    assert [e.message.split(" (")[0] for e in errors] == want


def test_no_imps():
    calls, _, errors = requests_of(adapter(), {"imp": []}, RequestInfo(bidder="adpone"))
    assert (calls, [e.message for e in errors]) == ([], ["No impression in the bid request"])


@pytest.mark.parametrize(
    ("body", "want"),
    [({"seatbid": [{"bid": [{"id": "1", "impid": "v", "price": 1}]}]}, [("1", "banner")]), ({"seatbid": []}, None)],
)
def test_bids_are_banners(body, want):
    response, errors = bids_for(adapter(), {"imp": [{"id": "v", "video": {}}]}, body)
    assert errors == []
    assert (response and [(b.bid["id"], b.bid_type) for b in response.bids]) == want
