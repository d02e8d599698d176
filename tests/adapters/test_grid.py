"""TheMediaGrid adapter: uid checks, gpid, keyword consolidation, native requests and bid typing."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.grid import build
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "https://grid.bidswitch.net/sp_bid?sp=prebid"
INFO = RequestInfo(bidder="grid")


def imp(imp_id: str, ext: Any = "default", **fields: Any) -> dict:
    out = {"id": imp_id, **(fields or {"banner": {"format": [{"w": 300, "h": 250}]}})}
    if ext != "absent":
        out["ext"] = {"bidder": {"uid": 1}} if ext == "default" else ext
    return out


def run(request: dict):
    calls, bodies, errors = requests_of(build(AdapterConfig("grid", ENDPOINT)), request, INFO)
    assert all(call.uri == ENDPOINT for call in calls)
    return calls, bodies, [e.message for e in errors]


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ("absent", "expect { or n, but found \x00"),
        ([1], "expect { or n, but found ["),
        (
            {"prebid": 1, "bidder": {"uid": 1}},
            "cannot unmarshal adapters.ExtImpBidder.Prebid: expect { or n, but found 1",
        ),
        ({"gpid": "g"}, "expect { or n, but found \x00"),
        ({"bidder": "x"}, 'expect { or n, but found "'),
        ({"bidder": {"uid": "1"}}, "cannot unmarshal openrtb_ext.ExtImpGrid.Uid: unexpected character: \ufffd"),
        ({"bidder": {"uid": 1.5}}, "cannot unmarshal openrtb_ext.ExtImpGrid.Uid: can not decode float as int"),
        ({"bidder": {"uid": 0}}, "uid is empty"),
        ({"bidder": {"uid": None}}, "uid is empty"),
    ],
)
def test_unusable_imps_are_dropped(ext, want):
    calls, bodies, errors = run({"id": "r", "imp": [imp("bad", ext), imp("good")]})
    assert errors == [want]
    assert [call.imp_ids for call in calls] == [["good"]]
    assert [i["id"] for i in bodies[0]["imp"]] == ["good"]
    assert dict(calls[0].headers) == {"Content-Type": "application/json;charset=utf-8"}


def test_no_usable_imp_means_no_call():
    calls, _, errors = run({"id": "r", "imp": [imp("a", {"bidder": {}})]})
    assert calls == []
    assert errors == ["uid is empty", "No valid impressions for grid"]


def test_uid_key_is_matched_ignoring_case():
    _, _, errors = run({"id": "r", "imp": [imp("a", {"bidder": {"UID": 7}})]})
    assert errors == []


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        (
            {"bidder": {"uid": 1}, "tid": "t", "data": {"pbadslot": "p", "other": 1, "adserver": {"adslot": "s"}}},
            {"bidder": {"uid": 1}, "data": {"pbadslot": "p", "adserver": {"name": "", "adslot": "s"}}, "gpid": "s"},
        ),
        (
            {
                "bidder": {"uid": 1},
                "gpid": "old",
                "prebid": {"bidder": {}, "is_rewarded_inventory": 0, "x": 1},
                "context": {"c": 1},
                "data": {"adserver": {"name": "gam", "adslot": "s"}},
            },
            {
                "bidder": {"uid": 1},
                "prebid": {"is_rewarded_inventory": 0},
                "context": {"c": 1},
                "data": {"adserver": {"name": "gam", "adslot": "s"}},
                "gpid": "s",
            },
        ),
        ({"bidder": {"uid": 1}, "tid": "t", "data": {"adserver": {"adslot": ""}}}, None),
        ({"bidder": {"uid": 1}, "tid": "t", "gpid": 5, "data": {"adserver": {"adslot": "s"}}}, None),
        ({"bidder": {"uid": 1}, "tid": "t", "data": {"adserver": {"adslot": 5}}}, None),
    ],
)
def test_gpid_from_the_ad_server_slot(ext, want):
    _, bodies, _ = run({"id": "r", "imp": [imp("a", ext)]})
    assert bodies[0]["imp"][0]["ext"] == (ext if want is None else want)


def test_keywords_come_from_the_first_imp_even_when_it_is_dropped():
    first = imp("a", {"bidder": {"uid": 0, "keywords": {"user": {"p": [{"name": "n", "topic": ["x"]}]}}}})
    request = {"id": "r", "user": {"keywords": "k1,,k2"}, "imp": [first, imp("b")]}
    _, bodies, _ = run(request)
    assert bodies[0]["ext"] == {
        "keywords": {
            "user": {
                "p": [{"name": "n", "segments": [{"name": "topic", "value": "x"}]}],
                "ortb2": [{"name": "keywords", "segments": [{"name": "keywords", "value": v} for v in ("k1", "k2")]}],
            }
        }
    }


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        (None, None),
        ({}, None),
        ({"keywords": "x"}, None),
        ({"keywords": {"site": {"p": ["x"]}}, "prebid": {"a": 1}}, {"prebid": {"a": 1}}),
        ({"keywords": {"site": "x", "other": 1}}, {"keywords": {"other": 1}}),
        (
            {"keywords": {"site": {"p": [{"name": "a", "t": ["1"]}, {"name": 5, "t": ["2"]}, {"name": "b"}]}}},
            {"keywords": {"site": {"p": [{"name": "a", "segments": [{"name": "t", "value": "1"}]}]}}},
        ),
    ],
)
def test_request_ext_keywords(ext, want):
    request: dict[str, Any] = {"id": "r", "imp": [imp("a")]}
    if ext is not None:
        request["ext"] = ext
    _, bodies, _ = run(request)
    assert bodies[0].get("ext") == want


def test_site_keywords_go_before_the_request_ones():
    site_item = {"name": "s", "segments": [{"name": "a", "value": "b"}]}
    request = {
        "id": "r",
        "site": {"keywords": "w"},
        "ext": {"keywords": {"site": {"ortb2": [site_item]}}},
        "imp": [imp("a")],
    }
    _, bodies, _ = run(request)
    assert bodies[0]["ext"]["keywords"]["site"]["ortb2"] == [
        {"name": "keywords", "segments": [{"name": "keywords", "value": "w"}]},
        site_item,
    ]


def test_native_requests():
    imps = [
        imp("a", native={"ver": "1.2", "request": '{"x": 1}'}),
        imp("b", native={"request": "[1]"}),
        imp("c", native={"request": '{"y": 2}'}),
        imp("d", native={"request": "null"}),
        imp("e", native={"request": '{"z": 3}'}),
        imp("f", native={"ver": "1.1"}),
    ]
    _, bodies, _ = run({"id": "r", "imp": imps})
    natives = [i["native"] for i in bodies[0]["imp"]]
    assert natives == [
        {"ver": "1.2", "request_native": {"x": 1, "y": 2}},  # PBS-Go shares one map between them
        {"request_native": "[1]"},
        {"request_native": {"x": 1, "y": 2}},
        {"request_native": None},
        {"request_native": {"z": 3}},
        {"ver": "1.1", "request_native": ""},
    ]


REQUEST = {
    "id": "r",
    "imp": [
        {"id": "b", "banner": {}, "video": {}},
        {"id": "v", "video": {}, "native": {}},
        {"id": "n", "native": {}},
        {"id": "a", "audio": {}},
    ],
}


def bids_of(body: Any, status: int = 200):
    return bids_for(build(AdapterConfig("grid", ENDPOINT)), REQUEST, body, status)


@pytest.mark.parametrize(
    ("fields", "want_type", "want_bid"),
    [
        ({"impid": "b"}, "banner", {}),
        ({"impid": "v"}, "video", {}),
        ({"impid": "n"}, "native", {}),
        ({"impid": "x", "content_type": "video"}, "video", {}),
        ({"impid": "n", "adm_native": {"t": "<b>&"}}, "native", {"adm": '{"t":"\\u003cb\\u003e\\u0026"}'}),
        ({"impid": "n", "adm": "keep", "adm_native": {"t": 1}}, "native", {"adm": "keep"}),
        ({"impid": "n", "adm_native": None}, "native", {}),
    ],
)
def test_bid_types_and_native_markup(fields, want_type, want_bid):
    bid = {"id": "1", "price": 1, **fields}
    response, errors = bids_of({"cur": "EUR", "seatbid": [{"bid": [bid]}]})
    assert errors == []
    assert response.currency == "USD"
    [typed] = response.bids
    assert typed.bid_type == want_type
    assert "adm_native" not in typed.bid and "content_type" not in typed.bid
    assert typed.bid.get("adm") == want_bid.get("adm")


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"bidder": {"grid": {"demandSource": "trustx"}}}, {"networkName": "trustx"}),
        ({"bidder": {"grid": {"demandSource": ""}}}, None),
        ({"bidder": "x"}, None),
        (None, None),
    ],
)
def test_bid_meta_network_name(ext, want):
    bid: dict[str, Any] = {"id": "1", "impid": "b", "price": 1}
    if ext is not None:
        bid["ext"] = ext
    response, _ = bids_of({"seatbid": [{"bid": [bid]}]})
    assert response.bids[0].bid_meta == want


@pytest.mark.parametrize(
    ("bids", "want", "want_code"),
    [
        ([{"impid": "b"}, {"impid": "x"}], 'Failed to find impression for ID: "x"', ErrorCode.BAD_SERVER_RESPONSE),
        ([{"impid": "a"}], 'Unknown impression type for ID: "a"', ErrorCode.BAD_SERVER_RESPONSE),
        (
            [{"impid": "x"}, {"impid": "b", "content_type": 1}],
            'cannot unmarshal grid.GridBid.ContentType: expects " or n, but found 1',
            ErrorCode.UNKNOWN,
        ),
    ],
)
def test_one_bad_bid_drops_the_answer(bids, want, want_code):
    response, errors = bids_of({"seatbid": [{"bid": [{"id": "1", "price": 1, **b} for b in bids]}]})
    assert response is None
    assert [(e.message, e.code) for e in errors] == [(want, want_code)]


@pytest.mark.parametrize(
    ("status", "body", "want_error", "want_code"),
    [
        (204, b"", None, None),
        (400, b"{}", "Unexpected status code: 400. Run with request.debug = 1 for more info", ErrorCode.BAD_INPUT),
        (
            418,
            b"{}",
            "Unexpected status code: 418. Run with request.debug = 1 for more info",
            ErrorCode.BAD_SERVER_RESPONSE,
        ),
        (200, b'"x"', 'expect { or n, but found "', ErrorCode.BAD_SERVER_RESPONSE),
    ],
)
def test_statuses(status, body, want_error, want_code):
    response, errors = bids_of(body, status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == ([(want_error, want_code)] if want_error else [])
