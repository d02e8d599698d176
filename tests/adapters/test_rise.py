"""Rise adapter: the org in the URL (which imp decides, trimming), params errors, the unchanged body
and its one header, status texts and bid typing by ``mtype``."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.rise import build
from tests.adapters.helpers import bids_for, imp_with, requests_of

ENDPOINT = "http://localhost/prebid_server"
INFO = RequestInfo(bidder="rise")


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    return imp_with(imp_id, {"org": "o1"} if params is None else params, fields, {"banner": {}})


def run(request: dict):
    return requests_of(build(AdapterConfig("rise", ENDPOINT)), request, INFO)


def bids(body: Any, status: int = 200):
    return bids_for(build(AdapterConfig("rise", ENDPOINT)), {"imp": [imp()]}, body, status)


@pytest.mark.parametrize(
    ("imps", "org"),
    [
        ([imp(params={"org": "72720", "publisher_id": "72721"})], "72720"),
        ([imp(params={"publisher_id": "72721"})], "72721"),
        ([imp(params={"org": " 7 \t", "publisher_id": "x"})], "7"),
        ([imp(params={"org": "   ", "publisher_id": "x"})], ""),  # tested before trimming: it decides
        ([imp(params={"org": ""}), imp("j", {"publisher_id": "p2"})], "p2"),
        ([imp(params={"ORG": "upper"})], "upper"),  # Go matches fields ignoring case
        ([imp(params={"org": "a b&c"})], "a b&c"),  # appended as given, not escaped
        ([imp(params={"org": "first"}), {"id": "j", "banner": {}}], "first"),  # later imps are not read
    ],
)
def test_org_of_the_first_imp_naming_one_goes_into_the_uri(imps, org):
    calls, _, errors = run({"id": "r", "imp": imps})
    assert errors == []
    assert [(call.uri, call.imp_ids) for call in calls] == [(f"{ENDPOINT}?publisher_id={org}", [i["id"] for i in imps])]


def test_request_goes_unchanged_with_only_a_content_type():
    request = {"id": "r", "site": {"page": "p"}, "imp": [imp(ext={"bidder": {"org": "x", "zone": "z"}})]}
    calls, bodies, _ = run(request)
    assert bodies == [request]
    assert dict(calls[0].headers) == {"Content-Type": "application/json;charset=utf-8"}


@pytest.mark.parametrize(
    ("imps", "message"),
    [
        ([{"id": "a", "banner": {}}], "extractOrg: unmarshal bidderExt: expect { or n, but found \x00"),
        ([{"id": "a", "banner": {}, "ext": []}], "extractOrg: unmarshal bidderExt: expect { or n, but found ["),
        ([{"id": "a", "banner": {}, "ext": {}}], "extractOrg: unmarshal ImpExtRise: expect { or n, but found \x00"),
        (
            [{"id": "a", "banner": {}, "ext": {"bidder": None}}],
            "extractOrg: unmarshal ImpExtRise: expect { or n, but found \x00",
        ),
        ([imp(params="x")], 'extractOrg: unmarshal ImpExtRise: expect { or n, but found "'),
        (
            [imp(params={"org": 5})],
            "extractOrg: unmarshal ImpExtRise: cannot unmarshal openrtb_ext.ImpExtRise.Org: "
            'expects " or n, but found 5',
        ),
        (
            [imp(params={"org": "x", "placementId": 7})],
            "extractOrg: unmarshal ImpExtRise: cannot unmarshal openrtb_ext.ImpExtRise.PlacementID: "
            'expects " or n, but found 7',
        ),
        ([imp(params={"org": "", "publisher_id": ""})], "extractOrg: no org or publisher_id supplied"),
        (
            [imp(params={"org": ""}), {"id": "j", "banner": {}}],
            "extractOrg: unmarshal bidderExt: expect { or n, but found \x00",
        ),
        ([], "extractOrg: no org or publisher_id supplied"),
    ],
)
def test_request_fails_without_an_org(imps, message):
    calls, _, errors = run({"id": "r", "imp": imps})
    assert calls == []
    assert [(e.message, e.code) for e in errors] == [(message, ErrorCode.UNKNOWN)]


@pytest.mark.parametrize(
    ("mtypes", "types", "messages"),
    [
        ([1, 2, 4], ["banner", "video", "native"], []),
        ([3, 1], ["banner"], ["unsupported MType 3"]),
        ([None, 2], ["video"], ["unsupported MType 0"]),
    ],
)
def test_bids_typed_by_mtype(mtypes, types, messages):
    bid_list = [{"id": f"b{n}", "impid": "i", "price": 1, **({"mtype": m} if m else {})} for n, m in enumerate(mtypes)]
    response, errors = bids({"cur": "EUR", "seatbid": [{"bid": bid_list}]})
    assert [b.bid_type for b in response.bids] == types
    assert [(e.message, e.code) for e in errors] == [(m, ErrorCode.UNKNOWN) for m in messages]
    assert response.currency == "EUR"


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
        (200, b"[]", [("expect { or n, but found [", ErrorCode.UNKNOWN)]),
    ],
)
def test_answers_without_bids(status, body, want):
    response, errors = bids(body, status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == want


def test_answer_without_currency_is_usd():
    response, errors = bids({"seatbid": [{"bid": [{"id": "b", "impid": "i", "price": 1, "mtype": 1}]}]})
    assert errors == []
    assert response.currency == "USD"
