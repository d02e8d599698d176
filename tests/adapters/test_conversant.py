"""Conversant adapter: params into the imp, site/app id, currency, whole-request errors, bid typing."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import (
    AdapterConfig,
    ErrorCode,
    RequestInfo,
)
from hbserver.adapters.conversant import build
from tests.adapters.helpers import bids_for, converter, imp_with, requests_of

ENDPOINT = "http://api.hb.ad.cpe.dotomi.com/cvx/server/hb/ortb"
PARAMS = {"site_id": "s1"}
MEDIA = {"banner": {"w": 300, "h": 250, "pos": 3}}  # an imp's media unless the test names its own


INFO = RequestInfo(bidder="conversant", convert_currency=converter("EUR"))


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    return imp_with(imp_id, PARAMS if params is None else params, fields, MEDIA)


def run(request: dict, version: str = "", bidder: str = "conversant"):
    adapter = build_adapter("conversant", AdapterConfig(bidder, ENDPOINT, {"pbs_version": version}))
    calls, bodies, errors = requests_of(adapter, request, INFO)
    assert all(call.uri == ENDPOINT for call in calls)
    return calls, bodies, [e.message for e in errors]


@pytest.mark.parametrize("bidder", ["conversant", "epsilon"])
def test_first_imps_site_id_names_the_site_or_app(bidder):
    imps = [imp("a", {"site_id": "first"}), imp("b", {"site_id": "second"})]
    _, bodies, _ = run({"id": "r", "imp": imps, "site": {"id": "old", "page": "p"}}, bidder=bidder)
    assert bodies[0]["site"] == {"id": "first", "page": "p"}
    _, bodies, _ = run({"id": "r", "imp": imps, "app": {"bundle": "b"}}, bidder=bidder)
    assert bodies[0]["app"] == {"id": "first", "bundle": "b"}


@pytest.mark.parametrize(
    ("version", "fields", "want"),
    [
        ("", {}, {"displaymanager": "prebid-s2s"}),
        ("3.2.1", {}, {"displaymanager": "prebid-s2s", "displaymanagerver": "3.2.1"}),
        (
            "",
            {"displaymanager": "x", "displaymanagerver": "9"},
            {"displaymanager": "prebid-s2s", "displaymanagerver": "9"},
        ),
    ],
)
def test_display_manager(version, fields, want):
    _, bodies, _ = run({"id": "r", "imp": [imp(**fields)]}, version)
    sent = bodies[0]["imp"][0]
    assert {k: sent.get(k) for k in want} == want


@pytest.mark.parametrize(
    ("params", "fields", "want"),
    [
        ({"site_id": "s", "bidfloor": 2}, {}, {"bidfloor": 2}),
        ({"site_id": "s", "bidfloor": 2}, {"bidfloor": 1}, {"bidfloor": 1}),
        ({"site_id": "s", "bidfloor": 2}, {"bidfloor": -1}, {"bidfloor": 2}),
        ({"site_id": "s", "bidfloor": 1}, {"bidfloorcur": "EUR"}, {"bidfloor": 2, "bidfloorcur": "USD"}),
        ({"site_id": "s", "tag_id": "t"}, {"tagid": "old"}, {"tagid": "t"}),
        ({"site_id": "s", "tag_id": ""}, {"tagid": "old"}, {"tagid": "old"}),
        ({"site_id": "s", "secure": 1}, {"secure": 0}, {"secure": 1}),
        ({"site_id": "s", "secure": 0}, {}, {"secure": 0}),
        ({"site_id": "s", "secure": 0}, {"secure": 1}, {"secure": 1}),
        ({"site_id": "s", "position": 1}, {}, {"banner": {"w": 300, "h": 250, "pos": 1}}),
        ({"site_id": "s"}, {}, {"banner": {"w": 300, "h": 250}}),
    ],
)
def test_params_into_the_imp(params, fields, want):
    _, bodies, errors = run({"id": "r", "imp": [imp(params=params, **fields)]})
    assert errors == []
    sent = bodies[0]["imp"][0]
    assert {k: sent.get(k) for k in want} == want


def test_video_params_and_go_video_shape():
    params = {"site_id": "s", "position": 2, "api": [1], "protocols": [2, 3], "mimes": ["m"], "maxduration": 30}
    video = {"mimes": ["x"], "w": 0, "minduration": 0, "pos": 1, "format": [{"w": 1}], "linearity": 1}
    _, bodies, _ = run({"id": "r", "imp": [imp(params=params, video=video)]})
    assert bodies[0]["imp"][0]["video"] == {
        "mimes": ["m"],
        "w": 0,
        "pos": 2,
        "linearity": 1,
        "api": [1],
        "protocols": [2, 3],
        "maxduration": 30,
    }


def test_banner_wins_over_video():
    _, bodies, _ = run({"id": "r", "imp": [imp(params={"site_id": "s", "position": 1}, banner={}, video={"pos": 7})]})
    sent = bodies[0]["imp"][0]
    assert (sent["banner"], sent["video"]) == ({"pos": 1}, {"pos": 7, "mimes": None})


@pytest.mark.parametrize(("cur", "want"), [(["EUR", "USD"], ["USD"]), (["USD", "EUR"], ["USD", "EUR"]), (None, None)])
def test_request_currency(cur, want):
    request: dict[str, Any] = {"id": "r", "imp": [imp()]}
    if cur is not None:
        request["cur"] = cur
    _, bodies, _ = run(request)
    assert bodies[0].get("cur") == want


@pytest.mark.parametrize(
    ("bad", "want_error"),
    [
        ({"id": "x", "banner": {}}, "Impression[1] missing ext object"),
        (imp("x", ext="junk"), "Impression[1] missing ext object"),
        (imp("x", ext={"prebid": 1, "bidder": {"site_id": "s"}}), "Impression[1] missing ext object"),
        (imp("x", ext={}), "Impression[1] missing ext.bidder object"),
        (imp("x", {"site_id": 5}), "Impression[1] missing ext.bidder object"),
        (imp("x", {"site_id": "s", "api": ["a"]}), "Impression[1] missing ext.bidder object"),
        (imp("x", {"site_id": ""}), "Impression[1] requires ext.bidder.site_id"),
        (imp("x", ext={"bidder": None}), "Impression[1] requires ext.bidder.site_id"),
        (imp("x", bidfloor=1, bidfloorcur="JPY"), "Unable to convert provided bid floor currency from JPY to USD"),
    ],
)
def test_any_bad_imp_drops_the_request(bad, want_error):
    calls, _, errors = run({"id": "r", "imp": [imp("ok"), bad, imp("later")]})
    assert calls == []
    assert errors == [want_error]


REQUEST = {
    "id": "r",
    "imp": [
        {"id": "b", "banner": {}},
        {"id": "v", "video": {}},
        {"id": "a", "audio": {}, "video": {}},
        {"id": "n", "native": {}, "audio": {}},
    ],
}


def bids_of(body: Any, status: int = 200):
    return bids_for(build(AdapterConfig("conversant", ENDPOINT)), REQUEST, body, status)


def test_bids_of_the_first_seatbid_typed_by_imp():
    first = [{"id": str(n), "impid": impid, "price": 1} for n, impid in enumerate(["b", "v", "a", "n", "zz"])]
    response, errors = bids_of({"cur": "EUR", "seatbid": [{"bid": first}, {"bid": [{"id": "x", "impid": "b"}]}]})
    assert errors == []
    assert response.currency == "USD"
    assert [(t.bid["id"], t.bid_type) for t in response.bids] == [
        ("0", "banner"),
        ("1", "video"),
        ("2", "audio"),
        ("3", "native"),
        ("4", "banner"),
    ]


@pytest.mark.parametrize(
    ("status", "body", "want"),
    [
        (302, b"", ("Unexpected status code: 302", ErrorCode.BAD_SERVER_RESPONSE)),
        (400, b"", ("Unexpected status code: 400", ErrorCode.BAD_SERVER_RESPONSE)),
        (200, b"{}", ("Empty bid request", ErrorCode.BAD_SERVER_RESPONSE)),
        (200, b'{"seatbid": []}', ("Empty bid request", ErrorCode.BAD_SERVER_RESPONSE)),
        (  # Go's %d of the decoder's error
            200,
            b"[1]",
            ("bad server response: &{%!d(string=expect { or n, but found [)}. ", ErrorCode.BAD_SERVER_RESPONSE),
        ),
    ],
)
def test_failures(status, body, want):
    response, errors = bids_of(body, status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == [want]


def test_no_content():
    assert bids_of(b"", 204) == (None, [])
