"""Insticator adapter: grouping by ad unit, the publisher id (site/app and the URL), the app endpoint
and extra info, the request's caller list, floors, video checks, headers and bid typing."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.insticator import build
from tests.adapters.helpers import bids_for, converter, imp_with, requests_of

ENDPOINT = "https://insticator.example.com/v1/pbs"
APP_ENDPOINT = "https://insticator-app.example.com/v1/pbs"
EXTRA = {"extra_info": f'{{"app_endpoint": "{APP_ENDPOINT}"}}'}
INFO = RequestInfo(bidder="insticator", convert_currency=converter("GBP", 1.23456789))
PBS_CALLER = {"name": "Prebid-Server", "version": "n/a"}
VIDEO = {"mimes": ["video/mp4"], "w": 640, "h": 480}


def imp(imp_id: str = "i", unit: str = "u1", pub: str = "p1", **fields: Any) -> dict:
    return imp_with(imp_id, {"adUnitId": unit, "publisherId": pub}, fields, {"banner": {"w": 1, "h": 1}})


def run(request: dict, extra: dict | None = None, info: RequestInfo = INFO):
    adapter = build(AdapterConfig("insticator", ENDPOINT, EXTRA if extra is None else extra))
    calls, bodies, errors = requests_of(adapter, request, info)
    return calls, bodies, [e.message for e in errors]


def test_imps_grouped_by_ad_unit_each_with_its_own_ext():
    imps = [imp("a", "x"), imp("b", "y"), imp("c", "x", pub="p2")]
    calls, bodies, errors = run({"id": "r", "imp": imps, "site": {}})
    assert errors == []
    assert [call.imp_ids for call in calls] == [["a", "c"], ["b"]]
    assert [i["ext"] for i in bodies[0]["imp"]] == [
        {"insticator": {"adUnitId": "x", "publisherId": "p1"}},
        {"insticator": {"adUnitId": "x", "publisherId": "p2"}},
    ]
    assert {body["site"]["publisher"]["id"] for body in bodies} == {"p1"}  # the first valid imp's


@pytest.mark.parametrize(
    ("request_fields", "imps", "uri", "want"),
    [
        (
            {"site": {"id": "s"}},
            [imp()],
            f"{ENDPOINT}?publisherId=p1",
            {"site": {"id": "s", "publisher": {"id": "p1"}}},
        ),
        (
            {"app": {"publisher": {"id": "old", "name": "n"}}},
            [imp()],
            f"{APP_ENDPOINT}?publisherId=p1",
            {"app": {"publisher": {"id": "p1", "name": "n"}}},
        ),
        ({"site": {"publisher": {"id": "old"}}}, [imp(pub="")], ENDPOINT, {"site": {"publisher": {}}}),
        # an imp that fails the params or the video check does not give the publisher id
        (
            {"site": {}},
            [imp("a", pub="bad", video={"w": 0}), imp("b", pub="p2")],
            f"{ENDPOINT}?publisherId=p2",
            {"site": {"publisher": {"id": "p2"}}},
        ),
        ({}, [imp(pub="a b&c")], f"{ENDPOINT}?publisherId=a+b%26c", {}),
    ],
)
def test_publisher_id_from_the_first_valid_imp(request_fields, imps, uri, want):
    calls, bodies, _ = run({"id": "r", "imp": imps, **request_fields})
    assert [call.uri for call in calls] == [uri]
    assert {key: bodies[0][key] for key in ("site", "app") if key in bodies[0]} == want


@pytest.mark.parametrize(
    ("endpoint", "extra", "request_fields", "uri"),
    [
        (ENDPOINT, {}, {"app": {}}, f"{ENDPOINT}?publisherId=p1"),
        (ENDPOINT, {"extra_info": ""}, {"app": {}}, f"{ENDPOINT}?publisherId=p1"),
        (ENDPOINT, EXTRA, {"site": {}}, f"{ENDPOINT}?publisherId=p1"),
        ("https://h/x?z=1&publisherId=old&a=2", {}, {}, "https://h/x?a=2&publisherId=p1&z=1"),
    ],
)
def test_endpoint(endpoint, extra, request_fields, uri):
    adapter = build(AdapterConfig("insticator", endpoint, extra))
    calls, _, _ = requests_of(adapter, {"id": "r", "imp": [imp()], **request_fields}, INFO)
    assert calls[0].uri == uri


@pytest.mark.parametrize(
    ("extra_info", "message"),
    [
        ("[]", "invalid extra info: expect { or n, but found ["),
        (
            '{"app_endpoint": 5}',
            'invalid extra info: cannot unmarshal insticator.ExtraInfo.AppEndpoint: expects " or n, but found 5',
        ),
    ],
)
def test_extra_info_that_does_not_decode_refuses_the_adapter(extra_info, message):
    with pytest.raises(ValueError) as caught:
        build(AdapterConfig("insticator", ENDPOINT, {"extra_info": extra_info}))
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("ext", "want_ext", "messages"),
    [
        (None, {"insticator": {"caller": [PBS_CALLER]}}, []),
        ({"prebid": {"debug": True}}, {"insticator": {"caller": [PBS_CALLER]}}, []),
        (
            {"insticator": {"caller": [{"name": "wrapper", "version": "", "x": 1}, None]}},
            {"insticator": {"caller": [{"name": "wrapper"}, {}, PBS_CALLER]}},
            [],
        ),
        (
            {"insticator": {"caller": [{"name": "a"}]}, "Insticator": {}},
            {"insticator": {"caller": [{"name": "a"}, PBS_CALLER]}},
            [],
        ),
        ({"insticator": {"caller": [{"name": "a"}]}, "Insticator": None}, {"insticator": {"caller": [PBS_CALLER]}}, []),
        ({"insticator": "x"}, None, ['cannot unmarshal insticator.reqExt.Insticator: expect { or n, but found "']),
        (
            {"insticator": {"caller": "x"}},
            None,
            ['cannot unmarshal insticator.reqInsticatorExt.Caller: decode slice: expect [ or n, but found "'],
        ),
        (
            {"insticator": {"caller": [5]}},
            None,
            ["cannot unmarshal []insticator.insticatorCaller: expect { or n, but found 5"],
        ),
        (
            {"insticator": {"caller": [{"version": 5}]}},
            None,
            ['cannot unmarshal insticator.insticatorCaller.Version: expects " or n, but found 5'],
        ),
        ([1], None, ["expect { or n, but found ["]),
    ],
)
def test_request_ext_names_the_callers(ext, want_ext, messages):
    request = {"id": "r", "imp": [imp()], **({"ext": ext} if ext is not None else {})}
    calls, bodies, errors = run(request)
    assert errors == messages
    assert len(calls) == 1  # the call is made without the ext when it does not decode
    assert bodies[0].get("ext") == want_ext


@pytest.mark.parametrize(
    ("floor", "currency", "want"),
    [
        (1, "GBP", {"bidfloor": 1.2346, "bidfloorcur": "USD"}),  # converted, rounded to 4 decimals
        (1.5, "usd", {"bidfloor": 1.5, "bidfloorcur": "USD"}),
        (1.5, None, {"bidfloor": 1.5, "bidfloorcur": "USD"}),  # any positive floor is labelled USD
        (0, "GBP", {"bidfloor": 0, "bidfloorcur": "GBP"}),
        (0.00001, "GBP", {"bidfloor": 0.00001, "bidfloorcur": "GBP"}),  # rounds to 0: left as it was
    ],
)
def test_floors_in_usd(floor, currency, want):
    fields = {"bidfloor": floor, **({"bidfloorcur": currency} if currency else {})}
    _, bodies, errors = run({"id": "r", "imp": [imp(**fields)]})
    assert errors == []
    assert {key: bodies[0]["imp"][0].get(key) for key in want} == want


def test_floor_without_a_rate_leaves_the_imp_out():
    calls, _, errors = run({"id": "r", "imp": [imp("a", bidfloor=1, bidfloorcur="JPY"), imp("b")]})
    assert errors == ["Error in converting the provided bid floor currency from JPY to USD"]
    assert [call.imp_ids for call in calls] == [["b"]]


@pytest.mark.parametrize(
    ("imp_fields", "message"),
    [
        ({"video": {**VIDEO, "w": 0}}, "One or more invalid or missing video field(s) w, h, mimes"),
        ({"video": {"mimes": ["v"], "w": 1}}, "One or more invalid or missing video field(s) w, h, mimes"),
        ({"video": {"w": 1, "h": 1}}, "One or more invalid or missing video field(s) w, h, mimes"),
        ({"video": {"w": 1, "h": 1, "mimes": []}}, None),  # an empty list is no missing list
        ({"ext": {"bidder": "x"}}, 'expect { or n, but found "'),
        ({"ext": {"bidder": None}}, "expect { or n, but found \x00"),
        ({"ext": 5}, "expect { or n, but found 5"),
        (
            {"ext": {"bidder": {"adUnitId": 5}}},
            'cannot unmarshal openrtb_ext.ExtImpInsticator.AdUnitId: expects " or n, but found 5',
        ),
    ],
)
def test_bad_imp_is_left_out_with_bad_input(imp_fields, message):
    adapter = build(AdapterConfig("insticator", ENDPOINT, EXTRA))
    calls, _, errors = requests_of(adapter, {"id": "r", "imp": [imp("a", **imp_fields), imp("b")]}, INFO)
    assert [(e.message, e.code) for e in errors] == ([(message, ErrorCode.BAD_INPUT)] if message else [])
    assert [call.imp_ids for call in calls] == [["b"] if message else ["a", "b"]]


@pytest.mark.parametrize(
    ("device", "headers"),
    [
        (None, {}),
        ({"ua": "UA", "ipv6": "::1"}, {"User-Agent": "UA", "X-Forwarded-For": "::1"}),
        ({"ipv6": "::1", "ip": "1.2.3.4"}, {"X-Forwarded-For": "1.2.3.4", "Ip": "1.2.3.4"}),
        ({"ua": "", "ip": ""}, {}),
    ],
)
def test_headers(device, headers):
    calls, bodies, _ = run({"id": "r", "imp": [imp()], **({"device": device} if device else {})})
    base = {"Content-Type": "application/json;charset=utf-8", "Accept": "application/json"}
    assert dict(calls[0].headers) == {**base, **headers}
    if device:
        assert bodies[0]["device"] == {key: value for key, value in device.items() if value}


@pytest.mark.parametrize(
    ("bid", "seat", "kind", "meta", "video"),
    [
        (
            {"mtype": 1, "adomain": ["a.com"]},
            "s",
            "banner",
            {"mediaType": "banner", "seat": "s", "advertiserDomains": ["a.com"]},
            None,
        ),
        (
            {"mtype": 2, "dur": 30, "cat": ["IAB1", "IAB2"]},
            "",
            "video",
            {"mediaType": "video", "primaryCatId": "IAB1", "secondaryCatIds": ["IAB2"]},
            {"duration": 30, "primary_category": "IAB1"},
        ),
        ({"mtype": 2}, "", "video", {"mediaType": "video"}, {"duration": 0, "primary_category": ""}),
        ({"mtype": 4, "cat": ["IAB3"]}, "", "banner", {"mediaType": "banner", "primaryCatId": "IAB3"}, None),
    ],
)
def test_bids_typed_by_mtype_with_meta(bid, seat, kind, meta, video):
    body = {"seatbid": [{"seat": seat, "bid": [{"id": "b", "impid": "i", "price": 1, **bid}]}]}
    response, errors = bids_for(build(AdapterConfig("insticator", ENDPOINT, EXTRA)), {"imp": [imp()]}, body)
    assert errors == []
    assert response.currency == "USD"
    (typed,) = response.bids
    assert (typed.bid_type, typed.bid_meta, typed.bid_video) == (kind, meta, video)


@pytest.mark.parametrize(
    ("status", "body", "want"),
    [
        (204, b"", []),
        (400, b"{}", [("Unexpected status code: 400. Run with request.debug = 1 for more info", ErrorCode.BAD_INPUT)]),
        (
            503,
            b"{}",
            [("Unexpected status code: 503. Run with request.debug = 1 for more info", ErrorCode.BAD_SERVER_RESPONSE)],
        ),
        (200, b'"x"', [('expect { or n, but found "', ErrorCode.UNKNOWN)]),
    ],
)
def test_answers_without_bids(status, body, want):
    response, errors = bids_for(build(AdapterConfig("insticator", ENDPOINT, EXTRA)), {"imp": [imp()]}, body, status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == want
