"""Ogury adapter: params lifted into ``imp.ext``, ``tagid``, which imps are sent, floors, device
headers, bid typing by ``mtype`` (one bad bid drops the answer) and status texts."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.ogury import build
from tests.adapters.helpers import bids_for, converter, requests_of

ENDPOINT = "https://prebids2s.presage.io/api/header-bidding-request"
INFO = RequestInfo(bidder="ogury", convert_currency=converter("EUR", 2.0))
PARAMS = {"assetKey": "OGY", "adUnitId": "123"}
SITE = {"page": "p", "publisher": {"id": "pub"}}
NO_PARAMS = "Invalid request. assetKey/adUnitId or request.site/app.publisher.id required"


def imp(imp_id: str = "i", ext: Any = "default", **fields: Any) -> dict:
    out = {"id": imp_id, **(fields or {"banner": {"format": [{"w": 320, "h": 50}]}})}
    if ext != "absent":
        out["ext"] = {"bidder": PARAMS} if ext == "default" else ext
    return out


def run(request: dict):
    calls, bodies, errors = requests_of(build(AdapterConfig("ogury", ENDPOINT)), request, INFO)
    return calls, bodies, [(e.message, e.code) for e in errors]


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"bidder": PARAMS, "gpid": "g"}, {"adUnitId": "123", "assetKey": "OGY", "gpid": "g"}),
        ({"bidder": {**PARAMS, "gpid": "mine", "x": None}, "gpid": "g"}, {**PARAMS, "gpid": "mine", "x": None}),
        ({"bidder": {**PARAMS, "bidder": 1}, "prebid": {"k": 1}}, {**PARAMS, "prebid": {"k": 1}}),  # no "bidder" left
        ({"gpid": "g"}, {"gpid": "g"}),  # no bidder: ext kept
    ],
)
def test_params_lifted_into_imp_ext(ext, want):
    _calls, bodies, errors = run({"id": "r", "site": SITE, "imp": [imp("a", ext)]})
    assert errors == []
    sent = bodies[0]["imp"][0]
    assert sent["ext"] == want
    assert list(sent["ext"]) == sorted(want)  # Go writes a map's keys sorted
    assert sent["tagid"] == "a"


def test_tagid_is_the_imp_id():
    _calls, bodies, _ = run({"id": "r", "site": SITE, "imp": [imp("a", tagid="old"), imp("", tagid="old")]})
    assert [(i.get("tagid"), i["id"]) for i in bodies[0]["imp"]] == [("a", "a"), (None, "")]  # "" is left out


@pytest.mark.parametrize(
    ("imps", "want"),
    [
        ([imp("a", "absent")], "Bidder extension not provided or can't be unmarshalled"),
        ([imp("a", None)], "Bidder extension not provided or can't be unmarshalled"),
        ([imp("a", [])], "Bidder extension not provided or can't be unmarshalled"),
        ([imp("a", {"bidder": "x"})], "Ogury bidder extension not provided or can't be unmarshalled"),
        ([imp("a", {"bidder": None})], "Ogury bidder extension not provided or can't be unmarshalled"),
        ([imp("a"), imp("b", {"bidder": []})], "Ogury bidder extension not provided or can't be unmarshalled"),
    ],
)
def test_unreadable_ext_fails_the_request(imps, want):
    calls, _, errors = run({"id": "r", "site": SITE, "imp": imps})
    assert calls == []
    assert errors == [(want, ErrorCode.BAD_INPUT)]


@pytest.mark.parametrize(
    ("request_fields", "imps", "want_ids"),
    [
        ({"site": SITE}, [imp("a"), imp("b", {"bidder": {}}), imp("c")], ["a", "c"]),
        ({}, [imp("a", {"bidder": {"assetKey": "k", "adUnitId": None}}), imp("b", {})], ["a"]),  # key presence counts
        ({"site": SITE}, [imp("a", {"bidder": {"assetKey": "k"}}), imp("b", {})], ["a", "b"]),  # none complete: all
        ({"app": {"publisher": {"id": "p"}}}, [imp("a", {})], ["a"]),
        ({}, [imp("a", {"bidder": {"assetkey": "k", "adunitid": "u"}})], NO_PARAMS),  # map keys: exact case
        ({"site": {"publisher": {"id": ""}}}, [imp("a", {})], NO_PARAMS),
        ({"site": {"publisher": {"name": "n"}}, "app": {}}, [imp("a", {})], NO_PARAMS),
    ],
)
def test_which_imps_are_sent(request_fields, imps, want_ids):
    calls, bodies, errors = run({"id": "r", **request_fields, "imp": imps})
    if isinstance(want_ids, str):
        assert (calls, errors) == ([], [(want_ids, ErrorCode.BAD_INPUT)])
        return
    assert errors == []
    assert [call.imp_ids for call in calls] == [want_ids]
    assert [i["id"] for i in bodies[0]["imp"]] == want_ids


def test_floor_converted_and_a_missing_rate_fails_the_request():
    calls, bodies, errors = run(
        {"id": "r", "site": SITE, "imp": [imp("a", bidfloor=1.5, bidfloorcur="EUR", banner={})]}
    )
    assert errors == []
    assert (bodies[0]["imp"][0]["bidfloor"], bodies[0]["imp"][0]["bidfloorcur"]) == (3.0, "USD")
    calls, _, errors = run(
        {"id": "r", "site": SITE, "imp": [imp("a"), imp("b", bidfloor=1, bidfloorcur="JPY", banner={})]}
    )
    assert calls == []
    assert errors == [("Currency conversion rate not found: 'JPY' => 'USD'", ErrorCode.UNKNOWN)]


@pytest.mark.parametrize(
    ("device", "want"),
    [
        (None, {}),
        (
            {"ip": "1.2.3.4", "ipv6": "::1", "ua": "UA/1", "language": "fr"},
            {"X-Forwarded-For": "1.2.3.4, ::1", "User-Agent": "UA/1", "Accept-Language": "fr"},
        ),
        ({"ipv6": "::1"}, {"X-Forwarded-For": "::1", "User-Agent": "", "Accept-Language": ""}),
        ({}, {"X-Forwarded-For": "", "User-Agent": "", "Accept-Language": ""}),  # Go adds them even when empty
    ],
)
def test_device_headers(device, want):
    request: dict[str, Any] = {"id": "r", "site": SITE, "imp": [imp()]}
    if device is not None:
        request["device"] = device
    calls, _, _ = run(request)
    assert dict(calls[0].headers) == {"Content-Type": "application/json;charset=utf-8", **want}
    assert calls[0].uri == ENDPOINT


def bids(body: Any, status: int = 200):
    return bids_for(build(AdapterConfig("ogury", ENDPOINT)), {"id": "r", "imp": [imp()]}, body, status)


def answer(*mtypes: Any, cur: str | None = "EUR") -> dict:
    out: dict[str, Any] = {
        "seatbid": [{"bid": [{"id": f"b{n}", "impid": f"i{n}", "price": 1, "mtype": m} for n, m in enumerate(mtypes)]}]
    }
    if cur is not None:
        out["cur"] = cur
    return out


@pytest.mark.parametrize(
    ("body", "want_types", "want_currency"),
    [
        (answer(1, 2, 3, 4), ["banner", "video", "audio", "native"], "EUR"),
        (answer(1, cur=None), ["banner"], "USD"),
        ({"seatbid": []}, [], "USD"),
    ],
)
def test_bids_typed_by_mtype(body, want_types, want_currency):
    response, errors = bids(body)
    assert errors == []
    assert [b.bid_type for b in response.bids] == want_types
    assert response.currency == want_currency


def test_any_bid_without_a_known_mtype_drops_the_answer():
    response, errors = bids(answer(1, 0, 5))
    assert response is None
    assert [(e.message, e.code) for e in errors] == [
        ('Unsupported MType "0", for impression "i1"', ErrorCode.BAD_SERVER_RESPONSE),
        ('Unsupported MType "5", for impression "i2"', ErrorCode.BAD_SERVER_RESPONSE),
    ]


@pytest.mark.parametrize(
    ("status", "body", "want"),
    [
        (204, b"", []),
        (400, b"{}", [("Unexpected status code: 400. Run with request.debug = 1 for more info", ErrorCode.BAD_INPUT)]),
        (
            500,
            b"{}",
            [("Unexpected status code: 500. Run with request.debug = 1 for more info", ErrorCode.BAD_SERVER_RESPONSE)],
        ),
        (200, b'"x"', [('expect { or n, but found "', ErrorCode.UNKNOWN)]),
    ],
)
def test_failed_answers(status, body, want):
    response, errors = bids(body, status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == want
