"""Yahoo Ads adapter: one call per imp, banner sizes, regs promotion to OpenRTB 2.6, headers, bids."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.yahooads import REGS_EXT_WARNING, build, promote_regs
from tests.adapters.helpers import bids_for, imp_with, requests_of

ENDPOINT = "https://s2shb.ssp.yahoo.com/admax/bid/partners/PBS"
INFO = RequestInfo(bidder="yahooAds")
PARAMS = {"dcn": "dcn1", "pos": "pos1"}
MEDIA = {"banner": {"format": [{"w": 300, "h": 250}]}}  # an imp's media unless the test names its own


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    return imp_with(imp_id, PARAMS if params is None else params, fields, MEDIA)


def run(request: dict):
    calls, bodies, errors = requests_of(build(AdapterConfig("yahooAds", ENDPOINT)), request, INFO)
    assert all(call.uri == ENDPOINT for call in calls)
    return calls, bodies, [(e.message, e.code) for e in errors]


@pytest.mark.parametrize(
    ("regs", "want", "warned"),
    [
        (None, None, False),
        ({}, {}, False),
        ({"ext": {}}, {"ext": {}}, False),
        ({"ext": [1, 2, 3]}, {"ext": [1, 2, 3]}, True),
        ({"ext": 42}, {"ext": 42}, True),
        ({"ext": {"gpp": "DBA"}}, {"gpp": "DBA"}, False),
        ({"ext": {"gpp_sid": [6, 7]}}, {"gpp_sid": [6, 7]}, False),
        ({"ext": {"gpp": "X", "gpp_sid": [6], "gpc": "1"}}, {"gpp": "X", "gpp_sid": [6], "ext": {"gpc": "1"}}, False),
        ({"ext": {"gpp": 123, "gpp_sid": [6]}}, {"gpp_sid": [6], "ext": {"gpp": 123}}, False),
        ({"ext": {"gpp": "X", "gpp_sid": "oops"}}, {"gpp": "X", "ext": {"gpp_sid": "oops"}}, False),
        ({"ext": {"gpp_sid": [6, 300]}}, {"ext": {"gpp_sid": [6, 300]}}, False),
        ({"ext": {"gpp": 123}}, {"ext": {"gpp": 123}}, False),
        ({"ext": {"gpp": ""}}, {}, False),
        ({"ext": {"gpp": None, "gpp_sid": None}}, {}, False),
        ({"ext": {"gpp_sid": []}}, {}, False),
        ({"gpp": "KEEP", "ext": {"gpp": "stale", "gpc": "1"}}, {"gpp": "KEEP", "ext": {"gpc": "1"}}, False),
        ({"gpp": "KEEP", "ext": {"gpp": 123}}, {"gpp": "KEEP"}, False),
        ({"gpp_sid": [1, 2], "ext": {"gpp_sid": [6]}}, {"gpp_sid": [1, 2]}, False),
    ],
)
def test_regs_promotion(regs, want, warned):
    before = copy.deepcopy(regs)
    got, warnings = promote_regs(regs)
    assert regs == before
    assert got == want
    assert [w.message for w in warnings] == ([REGS_EXT_WARNING] if warned else [])


def test_regs_warning_keeps_the_imp_and_regs_go_to_every_call():
    calls, bodies, errors = run({"id": "r", "imp": [imp("a"), imp("b")], "regs": {"ext": [1]}})
    assert errors == [(REGS_EXT_WARNING, ErrorCode.UNKNOWN)]
    assert [call.imp_ids for call in calls] == [["a"], ["b"]]
    assert [body["regs"] for body in bodies] == [{"ext": [1]}, {"ext": [1]}]
    _, bodies, _ = run({"id": "r", "imp": [imp("a")]})
    assert "regs" not in bodies[0]


@pytest.mark.parametrize(
    ("device", "want_ua"),
    [(None, None), ({"ip": "1.2.3.4"}, None), ({"ua": ""}, None), ({"ua": "Mozilla/5.0"}, "Mozilla/5.0")],
)
def test_headers(device, want_ua):
    request: dict[str, Any] = {"id": "r", "imp": [imp()]}
    if device is not None:
        request["device"] = device
    calls, _, _ = run(request)
    want = {"Content-Type": "application/json;charset=utf-8", "Accept": "application/json", "X-Openrtb-Version": "2.6"}
    if want_ua:
        want["User-Agent"] = want_ua
    assert dict(calls[0].headers) == want


@pytest.mark.parametrize(
    ("request_fields", "params", "want"),
    [
        ({"site": {"id": "s", "page": "p"}}, PARAMS, {"site": {"id": "dcn1", "page": "p"}}),
        ({"app": {"id": "a", "bundle": "b"}}, PARAMS, {"app": {"id": "dcn1", "bundle": "b"}}),
        ({"site": {"id": "s"}, "app": {"id": "a"}}, PARAMS, {"site": {"id": "dcn1"}, "app": {"id": "a"}}),
        ({"site": {"id": "s"}}, {"pos": "p"}, {"site": {}}),
        ({}, PARAMS, {}),
    ],
)
def test_dcn_is_the_site_or_app_id(request_fields, params, want):
    _, bodies, errors = run(
        {"id": "r", "imp": [imp("i", params, tagid="old", banner={"w": 1, "h": 2})], **request_fields}
    )
    assert errors == []
    assert {key: bodies[0].get(key) for key in ("site", "app") if key in bodies[0]} == want
    assert bodies[0]["imp"][0].get("tagid") == params.get("pos")


@pytest.mark.parametrize(
    ("banner", "want", "error"),
    [
        ({"w": 300, "h": 250, "format": [{"w": 728, "h": 90}]}, {"w": 300, "h": 250}, None),
        ({"h": 250, "format": [{"w": 728, "h": 90}]}, {"w": 728, "h": 90}, None),
        ({"w": 300, "h": None, "format": [{"w": 728}]}, {"w": 728, "h": 0}, None),
        ({"w": 0, "h": 0}, None, "Invalid sizes provided for Banner 0x0"),
        ({"w": 300}, None, "No sizes provided for Banner []"),
        ({}, None, "No sizes provided for Banner []"),
    ],
)
def test_banner_sizes(banner, want, error):
    calls, bodies, errors = run({"id": "r", "imp": [imp("i", banner=banner)]})
    if error:
        assert (calls, errors) == ([], [(error, ErrorCode.UNKNOWN)])
    else:
        sent = bodies[0]["imp"][0]["banner"]
        assert {"w": sent["w"], "h": sent["h"]} == want


@pytest.mark.parametrize(
    ("bad_imp", "want"),
    [
        ({"id": "x", "banner": {}}, "imp #1: ext.bidder not provided"),
        ({"id": "x", "banner": {}, "ext": "s"}, "imp #1: ext.bidder not provided"),
        ({"id": "x", "banner": {}, "ext": {"prebid": 1, "bidder": PARAMS}}, "imp #1: ext.bidder not provided"),
        ({"id": "x", "banner": {}, "ext": {}}, "imp #1: expect { or n, but found \x00"),
        (imp("x", [1]), "imp #1: expect { or n, but found ["),
        (imp("x", {"dcn": 1}), 'imp #1: cannot unmarshal openrtb_ext.ExtImpYahooAds.Dcn: expects " or n, but found 1'),
        (
            imp("x", {"pos": True}),
            'imp #1: cannot unmarshal openrtb_ext.ExtImpYahooAds.Pos: expects " or n, but found t',
        ),
    ],
)
def test_unreadable_params_drop_the_imp(bad_imp, want):
    calls, _, errors = run({"id": "r", "imp": [imp("a"), bad_imp, imp("b", video={"w": 1})]})
    assert errors == [(want, ErrorCode.BAD_INPUT)]
    assert [call.imp_ids for call in calls] == [["a"], ["b"]]


def test_alias_builds_with_the_production_endpoint():
    adapter = build_adapter("yahooAds", AdapterConfig("yahoossp", ENDPOINT))
    calls, _ = adapter.make_requests({"id": "r", "imp": [imp()]}, RequestInfo(bidder="yahoossp"))
    assert [call.uri for call in calls] == [ENDPOINT]


REQUEST = {
    "id": "r",
    "imp": [
        {"id": "b", "banner": {}},
        {"id": "v", "video": {}},
        {"id": "bv", "banner": {}, "video": {}},
        {"id": "n", "native": {}},
        {"id": "v", "banner": {}},
    ],
}


def bids_of(body: Any, status: int = 200):
    return bids_for(build(AdapterConfig("yahooAds", ENDPOINT)), REQUEST, body, status)


def test_bids_are_typed_by_their_imp_and_others_dropped():
    bids = [{"id": str(n), "impid": impid, "price": 1} for n, impid in enumerate(["b", "v", "bv", "n"])]
    response, errors = bids_of({"cur": "EUR", "seatbid": [{"bid": bids[:2]}, {"bid": bids[2:]}]})
    assert errors == []
    assert response.currency == "USD"
    assert [(b.bid["impid"], b.bid_type) for b in response.bids] == [("b", "banner"), ("v", "video"), ("bv", "banner")]


def test_an_unknown_imp_voids_the_answer():
    bids = [{"id": "1", "impid": "b", "price": 1}, {"id": "2", "impid": "zz", "price": 1}]
    response, errors = bids_of({"seatbid": [{"bid": bids}]})
    assert response is None
    assert [(e.message, e.code) for e in errors] == [("Unknown ad unit code 'zz'", ErrorCode.BAD_SERVER_RESPONSE)]


@pytest.mark.parametrize(
    ("status", "body", "want"),
    [
        (204, b"", None),
        (400, b"", "Unexpected status code: 400."),
        (500, b"{}", "Unexpected status code: 500."),
        (200, b"[]", "Bad server response: &{%!d(string=expect { or n, but found [)}."),
    ],
)
def test_answer_errors(status, body, want):
    response, errors = bids_of(body, status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == ([(want, ErrorCode.BAD_SERVER_RESPONSE)] if want else [])
