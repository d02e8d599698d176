"""Vungle's own rules: one call per imp, its ext and tagid, the request sent as an app, floors in USD,
every bid a video under its seat; and ``golike.go_ext_imp_prebid``, which its ext uses."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.golike import go_ext_imp_prebid
from hbserver.adapters.vungle import NO_APP, build
from tests.adapters.helpers import bids_for, converter, requests_of

ADAPTER = build(AdapterConfig("vungle", "http://v.example"))
INFO = RequestInfo("vungle", convert_currency=converter("EUR"))
PARAMS = {"app_store_id": "store", "placement_reference_id": "place"}


def _imp(imp_id: str = "i", params: Any = PARAMS, **fields: Any) -> dict[str, Any]:
    return {"id": imp_id, "video": {"mimes": ["video/mp4"]}, "ext": {"bidder": params}, **fields}


def _request(*imps: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"id": "r", "imp": list(imps or [_imp()]), "user": {"buyeruid": "uid"}, **fields}


@pytest.mark.parametrize(
    ("fields", "app"),
    [({"app": {"id": "x", "bundle": "b"}}, {"id": "store", "bundle": "b"}), ({"site": {"page": "p"}}, {"id": "store"})],
)
def test_one_call_per_imp_as_an_app(fields, app):
    calls, bodies, errors = requests_of(ADAPTER, _request(_imp("a"), _imp("b"), **fields), INFO)
    assert not errors and [call.imp_ids for call in calls] == [["a"], ["b"]]
    body = bodies[0]
    assert body["app"] == app and "site" not in body
    assert body["imp"][0]["tagid"] == "place"
    assert body["imp"][0]["ext"] == {"prebid": None, "bidder": PARAMS, "vungle": {**PARAMS, "bid_token": "uid"}}


@pytest.mark.parametrize(
    ("imp", "fields", "error"),
    [
        (_imp(), {}, NO_APP),
        (_imp(bidfloor=1.0, bidfloorcur="GBP"), {"app": {}}, "failed to convert currency (err)"),
        (_imp(params=5), {"app": {}}, "failed unmarshalling bidder imp ext (err)"),
        (_imp(ext={"bidder": PARAMS, "vungle": {"bid_token": 1}}), {"app": {}}, "failed unmarshalling imp ext (err)"),
        (_imp(ext=[]), {"app": {}}, "failed unmarshalling imp ext (err)"),
    ],
)
def test_a_failed_imp_is_left_out_with_its_error(imp, fields, error):
    calls, _, errors = requests_of(ADAPTER, _request(imp, _imp("ok"), **fields), INFO)
    no_app = error == NO_APP  # then the other imp fails too
    assert len(errors) == 1 + no_app and errors[0].message.startswith(error)
    assert [call.imp_ids for call in calls] == ([] if no_app else [["ok"]])


def test_floor_converted_and_no_store_id_means_no_app_id():
    imp = _imp(bidfloor=1.0, bidfloorcur="EUR", params={"placement_reference_id": "p"})
    _, bodies, errors = requests_of(ADAPTER, _request(imp, app={"id": "own"}), INFO)
    assert not errors and bodies[0]["app"] == {}
    assert (bodies[0]["imp"][0]["bidfloor"], bodies[0]["imp"][0]["bidfloorcur"]) == (2.0, "USD")


def test_every_bid_a_video_under_its_seat():
    answer = {"cur": "EUR", "seatbid": [{"seat": "s1", "bid": [{"id": "1", "impid": "i", "price": 1}]}]}
    response, errors = bids_for(ADAPTER, _request(app={}), answer)
    assert not errors and response is not None and response.currency == "EUR"
    assert [(bid.bid_type, bid.seat) for bid in response.bids] == [("video", "s1")]


@pytest.mark.parametrize(
    ("prebid", "expected"),
    [
        ({"is_rewarded_inventory": 0, "other": 1}, {"is_rewarded_inventory": 0}),
        ({"bidder": {}, "adunitcode": "", "options": {}}, {"options": {}}),
        ({"imp": {"a": 1}, "storedrequest": {"id": "s"}}, {"storedrequest": {"id": "s"}, "imp": {"a": 1}}),
    ],
)
def test_go_ext_imp_prebid(prebid, expected):
    out = go_ext_imp_prebid(prebid)
    assert out == expected and list(out) == list(expected)
