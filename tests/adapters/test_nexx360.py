"""Nexx360 adapter: the endpoint query from the first imp, params moved to ``ext.nexx360``, the
caller ext, params errors, headers, bid typing by ``ext.bidType`` and status texts."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.golike import ABSENT_OBJECT
from hbserver.adapters.nexx360 import build
from tests.adapters.helpers import bids_for, imp_with, requests_of

ENDPOINT = "http://fast.nexx360.io/prebid-server"
INFO = RequestInfo(bidder="nexx360")


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    return imp_with(imp_id, {"tagId": "t"} if params is None else params, fields, {"banner": {"w": 1, "h": 2}})


def run(request: dict, endpoint: str = ENDPOINT, **extra: Any):
    calls, bodies, errors = requests_of(build(AdapterConfig("nexx360", endpoint, extra)), request, INFO)
    return calls, bodies, errors


def bids(body: Any, status: int = 200):
    return bids_for(build(AdapterConfig("nexx360", ENDPOINT)), {"id": "r", "imp": [imp()]}, body, status)


@pytest.mark.parametrize(
    ("endpoint", "first", "want"),
    [
        (ENDPOINT, {"tagId": "t1"}, ENDPOINT + "?tag_id=t1"),
        (ENDPOINT, {"placement": "p"}, ENDPOINT + "?placement=p"),
        (ENDPOINT, {"tagId": "t", "placement": "p"}, ENDPOINT + "?placement=p&tag_id=t"),
        (ENDPOINT, {"tagId": "a b/c&d"}, ENDPOINT + "?tag_id=a+b%2Fc%26d"),  # escaped as a form
        (ENDPOINT, {"TAGID": "x"}, ENDPOINT + "?tag_id=x"),  # Go matches the field ignoring case
        (ENDPOINT, {"tagId": "", "other": 1}, ENDPOINT),  # no params: no "?" at all
        (ENDPOINT + "?old=1#frag", {"tagId": "t"}, ENDPOINT + "?tag_id=t#frag"),  # the query is replaced
    ],
)
def test_query_comes_from_the_first_imp_only(endpoint, first, want):
    calls, _, errors = run(
        {"id": "r", "imp": [imp("a", first), imp("b", {"tagId": "other", "placement": "q"})]}, endpoint
    )
    assert errors == []
    assert [(call.uri, call.imp_ids) for call in calls] == [(want, ["a", "b"])]


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"bidder": {"tagId": "t", "k": [1]}}, {"nexx360": {"tagId": "t", "k": [1]}}),
        ({"bidder": {"tagId": "t"}, "gpid": "g", "nexx360": "old"}, {"nexx360": {"tagId": "t"}, "gpid": "g"}),
        ({"bidder": None, "data": {}}, {"nexx360": None, "data": {}}),  # PBS-Go writes the null params
        ({"Bidder": {"tagId": "t"}}, {"Bidder": {"tagId": "t"}, "nexx360": {"tagId": "t"}}),  # only "bidder" goes
    ],
)
def test_params_move_to_ext_nexx360(ext, want):
    _, bodies, errors = run({"id": "r", "imp": [imp(ext=ext)]})
    assert errors == []
    assert bodies[0]["imp"][0]["ext"] == want


@pytest.mark.parametrize(
    ("extra", "version"), [({}, "n/a"), ({"pbs_version": ""}, "n/a"), ({"pbs_version": "3.1"}, "3.1")]
)
def test_request_ext_names_prebid_server_as_caller(extra, version):
    request = {"id": "r", "imp": [imp()], "ext": {"prebid": {"debug": True}, "nexx360": {"caller": [{"name": "x"}]}}}
    _, bodies, _ = run(request, **extra)
    assert bodies[0]["ext"] == {"nexx360": {"caller": [{"name": "Prebid-Server", "version": version}]}}


def test_body_is_written_as_go_types_and_headers_are_content_type_only():
    request = {
        "id": "r",
        "test": 0,
        "site": {"page": "p"},
        "imp": [imp(video={"mimes": ["v"], "minduration": 0, "skip": 0}, instl=0, secure=0, tagid="")],
    }
    calls, bodies, _ = run(request)
    assert dict(calls[0].headers) == {"Content-Type": "application/json"}
    assert bodies[0] == {
        "id": "r",
        "site": {"page": "p"},
        "imp": [{"id": "i", "video": {"mimes": ["v"], "skip": 0}, "secure": 0, "ext": {"nexx360": {"tagId": "t"}}}],
        "ext": {"nexx360": {"caller": [{"name": "Prebid-Server", "version": "n/a"}]}},
    }


@pytest.mark.parametrize(
    ("imps", "message"),
    [
        ([{"id": "a", "banner": {}}], ABSENT_OBJECT),
        ([{"id": "a", "banner": {}, "ext": {}}], ABSENT_OBJECT),
        ([{"id": "a", "banner": {}, "ext": {"placement_id": "1"}}], ABSENT_OBJECT),
        ([{"id": "a", "banner": {}, "ext": []}], "expect { or n, but found ["),
        (
            [imp(ext={"bidder": {}, "prebid": 1})],
            "cannot unmarshal adapters.ExtImpBidder.Prebid: expect { or n, but found 1",
        ),
        ([imp(ext={"bidder": "x"})], 'expect { or n, but found "'),
        ([imp(params={"tagId": 5})], 'cannot unmarshal openrtb_ext.ExtImpNexx360.TagId: expects " or n, but found 5'),
        (
            [imp(params={"placement": []})],
            'cannot unmarshal openrtb_ext.ExtImpNexx360.Placement: expects " or n, but found [',
        ),
        ([imp("a"), {"id": "b", "banner": {}}], ABSENT_OBJECT),  # any imp fails the whole request
    ],
)
def test_bad_imp_fails_the_request(imps, message):
    calls, _, errors = run({"id": "r", "imp": imps})
    assert calls == []
    assert [(e.message, e.code) for e in errors] == [(message, ErrorCode.BAD_INPUT)]


def test_params_of_later_imps_are_not_typed():
    calls, _, errors = run({"id": "r", "imp": [imp("a"), imp("b", {"tagId": 5})]})
    assert errors == []
    assert len(calls) == 1


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"bidType": "banner"}, "banner"),
        ({"bidType": "video", "mediaType": "banner"}, "video"),
        ({"bidType": "audio"}, "audio"),
        ({"bidtype": "native"}, "native"),  # Go matches the field ignoring case
        ({"bidType": "native", "bidType2": 1}, "native"),
    ],
)
def test_bid_typed_by_ext_bid_type(ext, want):
    response, errors = bids({"cur": "EUR", "seatbid": [{"bid": [{"id": "b", "impid": "i", "price": 1, "ext": ext}]}]})
    assert errors == []
    assert response.currency == "EUR"
    assert [(b.bid_type, b.bid["ext"]) for b in response.bids] == [(want, ext)]


@pytest.mark.parametrize(
    "ext", [None, {}, {"bidType": "Banner"}, {"bidType": 1}, {"bidType": None}, {"mediaType": "banner"}]
)
def test_untyped_bid_is_dropped_with_an_error(ext):
    good = {"id": "ok", "impid": "i", "price": 1, "ext": {"bidType": "banner"}}
    bad = {"id": "b", "impid": "x", "price": 1, **({} if ext is None else {"ext": ext})}
    response, errors = bids({"seatbid": [{"bid": [bad, good]}]})
    assert response.currency == "USD"
    assert [b.bid["id"] for b in response.bids] == ["ok"]
    assert [(e.message, e.code) for e in errors] == [
        ("unable to fetch mediaType in multi-format: x", ErrorCode.BAD_SERVER_RESPONSE)
    ]


def test_answer_without_a_typed_bid_gives_nothing():
    assert bids({"seatbid": [{"bid": [{"id": "b", "impid": "x", "price": 1}]}]}) == (None, [])


@pytest.mark.parametrize(("status", "errors"), [(204, []), (400, [400]), (500, [500]), (201, [201])])
def test_failure_status_is_bad_input(status, errors):
    response, got = bids(b"", status)
    assert response is None
    assert [(e.message, e.code) for e in got] == [
        (f"Unexpected http status code: {code}", ErrorCode.BAD_INPUT) for code in errors
    ]


def test_answer_that_does_not_decode_is_an_unclassified_error():
    response, errors = bids({"seatbid": {}})
    assert response is None
    assert [(e.message, e.code) for e in errors] == [
        ("cannot unmarshal openrtb2.BidResponse.SeatBid: decode slice: expect [ or n, but found {", ErrorCode.UNKNOWN)
    ]
