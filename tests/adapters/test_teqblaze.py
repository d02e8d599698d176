"""TeqBlaze adapter: one call per imp, the imp ext rewritten by params, per-imp errors in
json-iterator's words, bids typed by mtype alone, status texts."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.golike import ABSENT_OBJECT
from tests.adapters.helpers import bids_for, imp_with, requests_of

ENDPOINT = "https://ssp.example.com/pserver"
INFO = RequestInfo(bidder="teqblaze")


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    return imp_with(imp_id, {"placementId": "p"} if params is None else params, fields, {"banner": {"w": 1, "h": 1}})


def run(request: dict):
    calls, bodies, errors = requests_of(build_adapter("teqblaze", AdapterConfig("teqblaze", ENDPOINT)), request, INFO)
    return calls, bodies, [(e.message, e.code) for e in errors]


def bids(request: dict, body: Any, status: int = 200):
    return bids_for(build_adapter("teqblaze", AdapterConfig("teqblaze", ENDPOINT)), request, body, status)


@pytest.mark.parametrize(
    ("params", "ext"),
    [
        ({"placementId": "p1"}, {"bidder": {"type": "publisher", "placementId": "p1"}}),
        ({"endpointId": "e1"}, {"bidder": {"type": "network", "endpointId": "e1"}}),
        ({"placementId": "p1", "endpointId": "e1"}, {"bidder": {"type": "publisher", "placementId": "p1"}}),
        ({"placementId": "", "endpointId": "e1"}, {"bidder": {"type": "network", "endpointId": "e1"}}),
        ({"placementId": None, "endpointId": "e1"}, {"bidder": {"type": "network", "endpointId": "e1"}}),
        ({}, {"bidder": {"type": ""}}),  # Go's "type" has no omitempty
        ({"PLACEMENTID": "p2"}, {"bidder": {"type": "publisher", "placementId": "p2"}}),  # keys in any case
        ({"placementId": "p1", "PlacementId": None}, {"bidder": {"type": ""}}),  # json-iterator: null is ""
        ({"endpointId": "e", "other": 5}, {"bidder": {"type": "network", "endpointId": "e"}}),
    ],
)
def test_imp_ext_is_rewritten_from_params(params, ext):
    _, bodies, errors = run({"id": "r", "imp": [imp("a", params, ext={"bidder": params, "prebid": {}})]})
    assert errors == []
    assert bodies[0]["imp"][0]["ext"] == ext


def test_one_call_per_imp_with_the_rest_of_the_request():
    request = {"id": "r", "test": 0, "site": {"page": "p"}, "imp": [imp("a"), imp("b", video={"w": 2})]}
    calls, bodies, _ = run(request)
    assert [(c.method, c.uri, c.imp_ids) for c in calls] == [("POST", ENDPOINT, ["a"]), ("POST", ENDPOINT, ["b"])]
    assert [dict(c.headers) for c in calls] == [
        {"Content-Type": "application/json;charset=utf-8", "Accept": "application/json"}
    ] * 2
    assert bodies[0] == {
        "id": "r",
        "site": {"page": "p"},
        "imp": [{"id": "a", "banner": {"w": 1, "h": 1}, "ext": {"bidder": {"type": "publisher", "placementId": "p"}}}],
    }  # "test": 0 is left out as Go's omitempty does
    assert bodies[1]["imp"] == [
        {"id": "b", "video": {"w": 2, "mimes": None}, "ext": {"bidder": {"type": "publisher", "placementId": "p"}}}
    ]


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"id": "x", "banner": {}}, ABSENT_OBJECT),
        ({"id": "x", "banner": {}, "ext": 123}, "expect { or n, but found 1"),
        ({"id": "x", "banner": {}, "ext": {"bidder": None}}, ABSENT_OBJECT),
        ({"id": "x", "banner": {}, "ext": {"bidder": []}}, "expect { or n, but found ["),
        (
            imp("x", {"placementId": 1}),
            'cannot unmarshal openrtb_ext.ImpExtTeqBlaze.PlacementID: expects " or n, but found 1',
        ),
        (
            imp("x", {"endpointId": True, "placementId": "p"}),
            'cannot unmarshal openrtb_ext.ImpExtTeqBlaze.EndpointID: expects " or n, but found t',
        ),
        (
            imp("x", {"placementid": 1, "placementId": "p"}),  # Go decodes every occurrence in turn
            'cannot unmarshal PlacementID: expects " or n, but found 1',  # read on past it: the field alone
        ),
    ],
)
def test_a_bad_imp_is_dropped_with_its_error_and_the_others_go(bad, message):
    calls, _, errors = run({"id": "r", "imp": [bad, imp("ok")]})
    assert [c.imp_ids for c in calls] == [["ok"]]
    assert errors == [(message, ErrorCode.UNKNOWN)]


@pytest.mark.parametrize(
    ("mtype", "want"),
    [(1, "banner"), (2, "video"), (4, "native"), (3, None), (0, None), (None, None)],
)
def test_bids_are_typed_by_mtype_alone(mtype, want):
    bid = {"id": "b", "impid": "i", "price": 1, **({} if mtype is None else {"mtype": mtype})}
    response, errors = bids({"imp": [imp(video={})]}, {"seatbid": [{"bid": [{**bid, "id": "ok", "mtype": 1}, bid]}]})
    if want is None:
        assert response is None
        assert [(e.message, e.code) for e in errors] == [("could not define media type for bid: i", ErrorCode.UNKNOWN)]
    else:
        assert errors == []
        assert [b.bid_type for b in response.bids] == ["banner", want]


@pytest.mark.parametrize(("cur", "want"), [("EUR", "EUR"), ("", "USD"), (None, "USD")])
def test_currency_from_the_answer(cur, want):
    body = {"seatbid": [{"bid": [{"id": "b", "impid": "i", "price": 1, "mtype": 1}]}], "cur": cur}
    response, _ = bids({"imp": [imp()]}, body)
    assert response.currency == want


@pytest.mark.parametrize(
    ("status", "body", "want"),
    [
        (204, b"", None),
        (
            400,
            b"{}",
            ("Unexpected status code: 400. Run with request.debug = 1 for more info", ErrorCode.BAD_INPUT),
        ),
        (
            500,
            b"{}",
            ("Unexpected status code: 500. Run with request.debug = 1 for more info", ErrorCode.BAD_SERVER_RESPONSE),
        ),
        (200, b'""', ('expect { or n, but found "', ErrorCode.UNKNOWN)),
        (200, b"[]", ("expect { or n, but found [", ErrorCode.UNKNOWN)),
    ],
)
def test_failed_answers(status, body, want):
    response, errors = bids({"imp": [imp()]}, body, status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == ([] if want is None else [want])
