"""SmartHub adapter: endpoint macros from the first imp, headers, the unchanged body, params errors,
status texts with the answer's body, and the first bid typed by ext.mediaType."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.smarthub import build
from tests.adapters.helpers import bids_for, imp_with, requests_of

ENDPOINT = "https://prebid.example.com/pbserver?partnerName={{.Host}}&seat={{.AccountID}}&token={{.SourceId}}"
INFO = RequestInfo(bidder="smarthub")
PARAMS = {"partnerName": "pn", "seat": "s1", "token": "t1"}
BAD_EXT = ("Bidder extension not provided or can't be unmarshalled", ErrorCode.BAD_INPUT)
BAD_PARAMS = ("Error while unmarshaling bidder extension", ErrorCode.BAD_INPUT)


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    return imp_with(imp_id, PARAMS if params is None else params, fields, {"banner": {"w": 1, "h": 1}})


def run(request: dict):
    calls, bodies, errors = requests_of(build(AdapterConfig("smarthub", ENDPOINT)), request, INFO)
    return calls, bodies, [(e.message, e.code) for e in errors]


def bids(request: dict, body: Any, status: int = 200):
    return bids_for(build(AdapterConfig("smarthub", ENDPOINT)), request, body, status)


def answer(*bids_: dict, cur: str = "USD") -> dict:
    return {"id": "r", "seatbid": [{"bid": list(bids_)}], "cur": cur}


@pytest.mark.parametrize(
    ("params", "uri"),
    [
        (PARAMS, "https://prebid.example.com/pbserver?partnerName=pn&seat=s1&token=t1"),
        ({"seat": "a b", "token": "x&y"}, "https://prebid.example.com/pbserver?partnerName=&seat=a b&token=x&y"),
        (
            {"PartnerName": "P", "SEAT": "S", "Token": "T"},
            "https://prebid.example.com/pbserver?partnerName=P&seat=S&token=T",
        ),
        ({"seat": "s", "Seat": None, "token": "t"}, "https://prebid.example.com/pbserver?partnerName=&seat=&token=t"),
    ],
)
def test_first_imp_params_fill_the_endpoint(params, uri):
    calls, _, errors = run({"id": "r", "imp": [imp("a", params), imp("b", {"seat": 5})]})  # imp b is not read
    assert errors == []
    assert [(c.uri, c.imp_ids) for c in calls] == [(uri, ["a", "b"])]


def test_request_goes_unchanged_with_the_adapter_version_header():
    request = {"id": "r", "site": {"page": "p"}, "imp": [imp(ext={"bidder": PARAMS, "gpid": "g"})]}
    calls, bodies, _ = run(request)
    assert bodies == [request]
    assert calls[0].method == "POST"
    assert dict(calls[0].headers) == {
        "Content-Type": "application/json;charset=utf-8",
        "Accept": "application/json",
        "Prebid-Adapter-Ver": "1.0.0",
    }


@pytest.mark.parametrize(
    ("first", "want"),
    [
        ({"id": "x", "banner": {}}, BAD_EXT),
        ({"id": "x", "banner": {}, "ext": ""}, BAD_EXT),
        ({"id": "x", "banner": {}, "ext": {"prebid": 1, "bidder": PARAMS}}, BAD_EXT),
        ({"id": "x", "banner": {}, "ext": {}}, BAD_PARAMS),
        ({"id": "x", "banner": {}, "ext": {"bidder": None}}, BAD_PARAMS),
        ({"id": "x", "banner": {}, "ext": {"bidder": []}}, BAD_PARAMS),
        (imp("x", {"seat": 1, "token": "t"}), BAD_PARAMS),
        (imp("x", {"partnerName": True, "seat": "s", "token": "t"}), BAD_PARAMS),
    ],
)
def test_first_imp_that_does_not_decode_fails_the_request(first, want):
    calls, _, errors = run({"id": "r", "imp": [first, imp("ok")]})
    assert calls == []
    assert errors == [want]


@pytest.mark.parametrize(
    ("status", "body", "want"),
    [
        (204, b"", None),
        (400, b'"bad key"', ('Bad Request. "bad key"', ErrorCode.BAD_INPUT)),
        (503, b"down", ("Bidder unavailable. Please contact the bidder support.", ErrorCode.BAD_INPUT)),
        (403, b"Access is denied", ("Status Code: [ 403 ] Access is denied", ErrorCode.BAD_SERVER_RESPONSE)),
        (500, b"", ("Status Code: [ 500 ] ", ErrorCode.BAD_SERVER_RESPONSE)),
        (200, b"", ("expect { or n, but found \x00", ErrorCode.UNKNOWN)),
        (200, b"[]", ("expect { or n, but found [", ErrorCode.UNKNOWN)),
        (200, b"{}", ("Array SeatBid cannot be empty", ErrorCode.BAD_SERVER_RESPONSE)),
        (200, b'{"seatbid": [{"bid": []}]}', ("Array SeatBid[0].Bid cannot be empty", ErrorCode.BAD_SERVER_RESPONSE)),
    ],
)
def test_failed_answers(status, body, want):
    response, errors = bids({"id": "r", "imp": [imp()]}, body, status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == ([] if want is None else [want])


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"mediaType": "banner"}, "banner"),
        ({"mediaType": "video"}, "video"),
        ({"mediaType": "audio"}, "audio"),
        ({"MEDIATYPE": "native"}, "native"),  # keys in any case
        (None, ("Field BidExt is required", ErrorCode.BAD_SERVER_RESPONSE)),
        ("video", ("Field BidExt is required", ErrorCode.BAD_SERVER_RESPONSE)),
        ({"mediaType": 2}, ("Field BidExt is required", ErrorCode.BAD_SERVER_RESPONSE)),
        ({}, ("invalid BidType: ", ErrorCode.UNKNOWN)),
        ({"mediaType": "Banner"}, ("invalid BidType: Banner", ErrorCode.UNKNOWN)),
    ],
)
def test_first_bid_typed_by_ext_media_type(ext, want):
    bid = {"id": "b", "impid": "i", "price": 1, **({} if ext is None else {"ext": ext})}
    response, errors = bids({"id": "r", "imp": [imp()]}, answer(bid))
    if isinstance(want, str):
        assert errors == []
        assert [b.bid_type for b in response.bids] == [want]
    else:
        assert response is None
        assert [(e.message, e.code) for e in errors] == [want]


def test_only_the_first_bid_of_the_first_seatbid_counts_and_currency_is_usd():
    first = {"id": "1", "impid": "i", "price": 1, "ext": {"mediaType": "banner"}}
    other = {"id": "2", "impid": "i", "price": 2, "ext": {"mediaType": "bad"}}
    body = {"seatbid": [{"bid": [first, other]}, {"bid": [other]}], "cur": "EUR"}
    response, errors = bids({"id": "r", "imp": [imp()]}, body)
    assert errors == []
    assert response.currency == "USD"
    assert [b.bid for b in response.bids] == [first]
