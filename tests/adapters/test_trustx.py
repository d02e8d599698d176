"""TRUSTX's own rules over its recipe: the adslot as gpid, and the bids' video facts and meta network
name."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.trustx import build, network_name, with_gpid
from tests.adapters.helpers import bids_for, requests_of

ADAPTER = build(AdapterConfig("trustx", "https://t.example/"))
DATA = {"pbadslot": "p", "adserver": {"adslot": "s"}}
NETWORK = {"bidder": {"trustx": {"networkName": "n"}}}


@pytest.mark.parametrize(
    ("ext", "sent"),
    [
        (
            {"bidder": {"uid": 1}, "data": {"adserver": {"name": "gam", "adslot": "/1/a"}}, "tid": "x", "gpid": "old"},
            {"bidder": {"uid": 1}, "data": {"adserver": {"name": "gam", "adslot": "/1/a"}}, "gpid": "/1/a"},
        ),
        (
            {"prebid": {"adunitcode": "", "is_rewarded_inventory": 0, "z": 1}, "data": DATA},
            {"prebid": {"is_rewarded_inventory": 0}, "bidder": None, "data": DATA, "gpid": "s"},
        ),
        ({"bidder": {}, "data": {"adserver": {"adslot": ""}}}, None),  # no adslot: as it came
        ({"data": {"adserver": {"adslot": "s"}}, "gpid": 5}, None),  # does not decode: as it came
        ({"data": {"adserver": {"adslot": "s", "name": 1}}}, None),
        ({"data": "x"}, None),
    ],
)  # fmt: skip
def test_the_adslot_becomes_the_gpid(ext, sent):
    imp = {"id": "1", "ext": ext}
    assert with_gpid(imp) == (imp if sent is None else {"id": "1", "ext": sent})


def test_the_call_has_them_all():
    request = {"imp": [{"id": "1", "banner": {}, "ext": {"data": {"adserver": {"adslot": "s"}}}}], "site": {"ref": "r"}}
    calls, bodies, errors = requests_of(ADAPTER, request, RequestInfo("trustx"))
    assert not errors and bodies[0]["imp"][0]["ext"]["gpid"] == "s"
    assert calls[0].headers["Referer"] == "r" and calls[0].headers["X-Openrtb-Version"] == "2.6"


@pytest.mark.parametrize(
    ("ext", "name"),
    [({"bidder": {"trustx": {"networkName": "n"}}}, "n"), ({"bidder": {"trustx": {"networkName": 1}}}, ""),
     ({"bidder": 1}, ""), (None, ""), ({"Bidder": {"TrustX": {"networkname": "n"}}}, "n")],
)  # fmt: skip
def test_network_name(ext, name):
    assert network_name(ext) == name


def test_video_facts_and_meta():
    bids = [
        {"id": "a", "impid": "1", "price": 1, "mtype": 2, "cat": ["IAB1"], "dur": 15},
        {"id": "b", "impid": "1", "price": 1, "mtype": 1, "cat": ["IAB1"], "ext": NETWORK},
        {"id": "c", "impid": "1", "price": 1, "mtype": 4},
    ]  # fmt: skip
    response, errors = bids_for(ADAPTER, {}, {"cur": "EUR", "seatbid": [{"bid": bids}]})
    video, banner = response.bids
    assert (video.bid_video, video.bid_meta) == ({"primary_category": "IAB1", "duration": 15}, None)
    assert (banner.bid_video, banner.bid_meta) == (None, {"networkName": "n"})
    assert response.currency == "USD" and [e.message for e in errors] == ["Unsupported MType: 4"]
