"""AMX adapter: endpoint query, floors and cur, publisher id and tagid, bid typing, seat and errors."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.amx import build, versioned_endpoint
from hbserver.adapters.base import (
    AdapterConfig,
    ErrorCode,
    RequestInfo,
)
from tests.adapters.helpers import bids_for, converter, requests_of

ENDPOINT = "http://pbs.amxrtb.com/auction/openrtb"


INFO = RequestInfo(bidder="amx", convert_currency=converter("GBP"))


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    out = {"id": imp_id, "banner": {"w": 300, "h": 250}, **fields}
    out.setdefault("ext", {"bidder": {} if params is None else params})
    return out


def run(request: dict):
    calls, bodies, errors = requests_of(build(AdapterConfig("amx", ENDPOINT)), request, INFO)
    return calls, bodies, [e.message for e in errors]


@pytest.mark.parametrize(
    ("endpoint", "want"),
    [
        ("http://h/a", "http://h/a?v=pbs1.3"),
        ("http://h/a?z=1&b=x y", "http://h/a?b=x+y&v=pbs1.3&z=1"),
        ("http://h/a?v=old", "http://h/a?v=old&v=pbs1.3"),
        ("", "?v=pbs1.3"),
    ],
)
def test_version_added_to_the_query(endpoint, want):
    assert versioned_endpoint(endpoint) == want
    calls, _ = build(AdapterConfig("amx", endpoint)).make_requests({"id": "r", "imp": [imp()]}, INFO)
    assert calls[0].uri == want


@pytest.mark.parametrize(
    "endpoint",
    [" http://leading.space.is.invalid", "http://invalid.query/page?%gh&%ij", "http://h/a?x=1;y=2", "http://h/\x01"],
)
def test_endpoint_go_refuses_fails_the_build(endpoint):
    with pytest.raises(ValueError, match="invalid endpoint"):
        build(AdapterConfig("amx", endpoint))


def test_headers_are_content_type_only():
    calls, _, _ = run({"id": "r", "imp": [imp()]})
    assert dict(calls[0].headers) == {"Content-Type": "application/json;charset=utf-8"}


@pytest.mark.parametrize(
    ("imps", "want_floors", "want_cur", "want_errors"),
    [
        ([imp(bidfloor=1, bidfloorcur="GBP")], [(2, "USD")], ["USD"], []),
        ([imp(bidfloor=1)], [(1, None)], ["USD"], []),
        ([imp()], [(None, None)], ["EUR"], []),
        (
            [imp("a", bidfloor=1, bidfloorcur="JPY"), imp("b")],
            [(None, None)],
            ["EUR"],
            ["Currency conversion rate not found: 'JPY' => 'USD'"],
        ),
    ],
)
def test_floors_and_currency(imps, want_floors, want_cur, want_errors):
    _, bodies, errors = run({"id": "r", "cur": ["EUR"], "imp": imps})
    assert errors == want_errors
    assert [(i.get("bidfloor"), i.get("bidfloorcur")) for i in bodies[0]["imp"]] == want_floors
    assert bodies[0]["cur"] == want_cur


def test_no_imp_left_is_no_call():
    calls, _, errors = run({"id": "r", "imp": [imp(bidfloor=1, bidfloorcur="JPY")]})
    assert calls == []
    assert errors == ["Currency conversion rate not found: 'JPY' => 'USD'"]


@pytest.mark.parametrize(
    ("imps", "want_publisher", "want_tagids"),
    [
        ([imp("a", {"tagId": "t1"}), imp("b", {"tagId": "t2"}), imp("c")], "t2", [None, None, None]),
        ([imp("a", {"adUnitId": "unit"}, tagid="old")], "p0", ["unit"]),
        ([imp("a", {"tagId": 5, "adUnitId": "unit"}, tagid="old")], "p0", ["old"]),
        ([imp("a", ext="junk")], "p0", [None]),
    ],
)
def test_tag_id_and_ad_unit_id(imps, want_publisher, want_tagids):
    request = {"id": "r", "imp": imps, "site": {"publisher": {"id": "p0", "name": "n"}}, "app": {"id": "a"}}
    _, bodies, errors = run(request)
    assert errors == []
    assert bodies[0]["site"]["publisher"] == {"id": want_publisher, "name": "n"}
    assert bodies[0]["app"].get("publisher", {"id": "p0"}) == {"id": want_publisher}
    assert [i.get("tagid") for i in bodies[0]["imp"]] == want_tagids


REQUEST = {"id": "r", "imp": [{"id": "i", "banner": {}}]}


def bids_of(body: Any, status: int = 200, headers: dict | None = None):
    return bids_for(build(AdapterConfig("amx", ENDPOINT)), REQUEST, body, status, headers)


@pytest.mark.parametrize(
    ("ext", "want_type", "want_seat", "want_meta"),
    [
        (None, "banner", "", {}),
        ({"startdelay": 0}, "video", "", {}),
        ({"ct": 10}, "native", "", {}),
        ({"ct": 1, "bc": "amx-pmp", "ds": "dsp"}, "banner", "amx-pmp", {"demandSource": "dsp"}),
        ({"startdelay": 0, "ct": 10}, "video", "", {}),
    ],
)
def test_bid_type_seat_and_meta(ext, want_type, want_seat, want_meta):
    bid: dict[str, Any] = {"id": "b", "impid": "i", "price": 1}
    if ext is not None:
        bid["ext"] = ext
    response, errors = bids_of({"cur": "EUR", "seatbid": [{"bid": [bid]}]})
    assert errors == []
    assert response.currency == "EUR"
    typed = response.bids[0]
    assert (typed.bid_type, typed.seat, typed.bid_meta, typed.bid) == (want_type, want_seat, want_meta, bid)


def test_advertiser_domains_in_meta_and_bad_ext_skips_the_bid():
    bids = [
        {"id": "1", "impid": "i", "price": 1, "adomain": ["a.com"]},
        {"id": "2", "impid": "i", "price": 1, "ext": {"startdelay": "x"}},
        {"id": "3", "impid": "i", "price": 1, "ext": "x"},
    ]
    response, errors = bids_of({"seatbid": [{"bid": bids}]})
    assert [typed.bid["id"] for typed in response.bids] == ["1"]
    assert response.bids[0].bid_meta == {"advertiserDomains": ["a.com"]}
    assert len(errors) == 2
    assert errors[1].message == 'expect { or n, but found "'


@pytest.mark.parametrize(
    ("status", "headers", "want"),
    [
        (400, {"X-Nbr": "3b"}, ("Invalid Request: 400. Error Code: 3b", ErrorCode.BAD_INPUT)),
        (500, {"x-nbr": "7a"}, ("Unexpected response: 500. Error Code: 7a", ErrorCode.BAD_SERVER_RESPONSE)),
        (503, {}, ("Unexpected response: 503. Error Code: ", ErrorCode.BAD_SERVER_RESPONSE)),
    ],
)
def test_failure_statuses_carry_the_nbr_header(status, headers, want):
    response, errors = bids_of(b"{}", status, headers)
    assert response is None
    assert [(e.message, e.code) for e in errors] == [want]


def test_no_content():
    assert bids_of(b"", 204) == (None, [])
