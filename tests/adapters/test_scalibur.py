"""Scalibur's own rules: the floor from the params (converted to USD), the imp ext it builds, its
video defaults, the debug flag, and bids typed by mtype or their imp, video markup from the ext."""

from __future__ import annotations

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, RequestData, RequestInfo, ResponseData
from hbserver.adapters.scalibur import bid_media_type, build, is_debug, video_with_defaults, with_vast
from tests.adapters.helpers import converter

ADAPTER = build(AdapterConfig("scalibur", "https://s.example/ortb"))
INFO = RequestInfo("scalibur", convert_currency=converter("EUR"))


def _imp(imp_id, params, **fields):
    return {"id": imp_id, "banner": {"w": 300, "h": 250}, **fields, "ext": {"bidder": params, "gpid": "g"}}


@pytest.mark.parametrize(
    ("params", "fields", "floor", "ext"),
    [
        ({"placementId": "p"}, {}, (None, "USD"), {"placementId": "p", "bidfloorcur": "USD", "gpid": "g"}),
        (
            {"placementId": "p", "bidfloor": 1.5, "bidfloorcur": "EUR"},
            {},
            (3.0, "USD"),
            {"placementId": "p", "bidfloor": 3.0, "bidfloorcur": "USD", "gpid": "g"},
        ),
        (
            {"placementId": "p", "bidfloor": 0},
            {"bidfloor": 2.0, "bidfloorcur": "USD"},
            (2.0, "USD"),
            {"placementId": "p", "bidfloor": 2.0, "bidfloorcur": "USD", "gpid": "g"},
        ),
    ],
    ids=["no-floor", "params-floor-converted", "imp-floor-kept"],
)
def test_floor_and_ext(params, fields, floor, ext):
    calls, errors = ADAPTER.make_requests({"id": "r", "cur": ["EUR"], "imp": [_imp("a", params, **fields)]}, INFO)
    body = orjson.loads(calls[0].body)
    assert not errors and "cur" not in body and "ext" not in body
    imp = body["imp"][0]
    assert (imp.get("bidfloor"), imp["bidfloorcur"]) == floor and imp["ext"] == ext


def test_bad_imps_are_dropped_with_their_errors():
    imps = [_imp("a", {"placementId": 5}), _imp("b", {"placementId": "p", "bidfloor": 1, "bidfloorcur": "GBP"})]
    calls, errors = ADAPTER.make_requests({"imp": imps}, INFO)
    assert calls == [] and [e.message[:31] for e in errors] == [
        "Failed to parse Scalibur params",
        "Currency conversion rate not fo",
    ]


@pytest.mark.parametrize(
    ("request_", "debug"),
    [({"test": 1}, True), ({"ext": {"prebid": {"debug": True}}}, True), ({"ext": {"prebid": {}}}, False), ({}, False)],
)
def test_debug(request_, debug):
    assert is_debug(request_) is debug


def test_video_defaults_fill_only_zero_values():
    video = video_with_defaults({"mimes": [], "w": 0, "h": 300, "maxduration": 30})
    assert video["mimes"] == ["video/mp4"] and (video["w"], video["h"], video["maxduration"]) == (640, 300, 30)
    assert video["protocols"] == [2, 3, 5, 6] and video["linearity"] == 1


@pytest.mark.parametrize(
    ("mtype", "imp", "kind"),
    [
        (1, {"video": {}}, "banner"),
        (2, {}, "video"),
        (0, {"banner": {}}, "banner"),
        (0, {"video": {}}, "video"),
        (0, {"banner": {}, "video": {}}, None),
        (4, {}, None),
    ],
)
def test_bid_media_type(mtype, imp, kind):
    assert bid_media_type({"mtype": mtype}, imp) == kind


@pytest.mark.parametrize(
    ("bid", "adm"),
    [
        ({"ext": {"vastXml": "<x/>"}, "adm": "a"}, "<x/>"),
        ({"ext": {"vastUrl": "u"}, "adm": "a"}, "a"),
        ({"ext": {"vastUrl": "u"}}, "wrapper"),
        ({"ext": {"vastXml": 5}, "adm": "a"}, "a"),
    ],
)
def test_video_markup(bid, adm):
    got = with_vast(bid).get("adm")
    assert got == adm or (adm == "wrapper" and "<![CDATA[u]]>" in got)


def test_bids_need_an_imp_of_the_call():
    call = RequestData("POST", "u", orjson.dumps({"imp": [{"id": "a", "banner": {}}]}))
    answer = {"seatbid": [{"bid": [{"id": "1", "impid": "zz", "price": 1}]}]}
    result, errors = ADAPTER.make_bids({}, call, ResponseData(200, orjson.dumps(answer)))
    assert result is None and errors[0].message == "Invalid bid imp ID zz"
    answer["seatbid"][0]["bid"][0]["impid"] = "a"
    result, errors = ADAPTER.make_bids({}, call, ResponseData(200, orjson.dumps(answer)))
    assert not errors and result.currency == "USD" and result.bids[0].bid_type == "banner"
