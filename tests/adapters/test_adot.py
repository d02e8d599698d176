"""Adot adapter: the first imp's publisherPath in the endpoint (its module), one call, bids typed by
ext.adot.media_type with the price in nurl and adm (its recipe)."""

from __future__ import annotations

import pytest

from hbserver.adapters.adot import build
from hbserver.adapters.base import AdapterConfig, RequestInfo
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "https://dsp.adotmob.com/headerbidding{PUBLISHER_PATH}/bidrequest"


def adapter():
    return build(AdapterConfig("adot", ENDPOINT))


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"bidder": {"publisherPath": "/hubvisor"}}, "/hubvisor"),
        ({"bidder": {"placementId": "p"}}, ""),
        ({"bidder": {"publisherPath": 1}}, ""),  # the params do not decode: no path
        ({"bidder": None}, ""),
        (None, ""),
    ],
)
def test_the_first_imps_publisher_path(ext, want):
    request = {
        "id": "r",
        "imp": [
            {"id": "a", "banner": {}, "ext": ext},
            {"id": "b", "banner": {}, "ext": {"bidder": {"publisherPath": "/x"}}},
        ],
    }
    calls, _, errors = requests_of(adapter(), request, RequestInfo(bidder="adot"))
    assert errors == []
    assert [(c.uri, c.imp_ids) for c in calls] == [
        (f"https://dsp.adotmob.com/headerbidding{want}/bidrequest", ["a", "b"])
    ]
    assert dict(calls[0].headers) == {"Content-Type": "application/json;charset=utf-8"}


def test_bids_typed_by_their_ext_with_the_price_resolved():
    bids = [
        {
            "id": "1",
            "impid": "a",
            "price": 1.5,
            "nurl": "n${AUCTION_PRICE}",
            "adm": "a${AUCTION_PRICE}",
            "ext": {"adot": {"media_type": "video"}},
        },
        {"id": "2", "impid": "a", "price": 1, "ext": {"adot": {"media_type": "audio"}}},
        {"id": "3", "impid": "a", "price": 1, "ext": {"adot": "x"}},
        {"id": "4", "impid": "a", "price": 1},
    ]
    response, errors = bids_for(
        adapter(), {"imp": [{"id": "a", "video": {}}]}, {"cur": "EUR", "seatbid": [{"bid": bids}]}
    )
    assert errors == []
    assert response.currency == "USD"
    assert [(b.bid["id"], b.bid_type, b.bid.get("nurl"), b.bid.get("adm")) for b in response.bids] == [
        ("1", "video", "n1.5", "a1.5")
    ]
