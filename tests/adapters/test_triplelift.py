"""TripleLift adapter: params, floors in USD, errors and bid typing by ``triplelift_pb.format``."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, ConversionError, ErrorCode, RequestData, RequestInfo, ResponseData
from hbserver.adapters.triplelift import build

ENDPOINT = "https://tlx.3lift.com/s2s/auction?sra=1&supplier_id=20"


def convert(amount: float, source: str, target: str) -> float:
    """A converter knowing EUR -> USD at 1.1 and nothing else."""
    if (source, target) == ("EUR", "USD"):
        return amount * 1.1
    raise ConversionError(f"Currency conversion rate not found: '{source}' => '{target}'")


INFO = RequestInfo(bidder="triplelift", convert_currency=convert)


def run(request: dict):
    before = copy.deepcopy(request)
    calls, errors = build(AdapterConfig("triplelift", ENDPOINT)).make_requests(request, INFO)
    assert request == before
    return calls, [orjson.loads(call.body) for call in calls], [e.message for e in errors]


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    out = {"id": imp_id, "banner": {"format": [{"w": 300, "h": 250}]}, **fields}
    out.setdefault("ext", {"bidder": {"inventoryCode": "code"} if params is None else params})
    return out


@pytest.mark.parametrize(("params", "fields", "want"), [
    ({"inventoryCode": "aa"}, {}, {"tagid": "aa", "bidfloor": None, "bidfloorcur": None}),
    ({"inventoryCode": "aa", "floor": 20}, {}, {"bidfloor": 20, "bidfloorcur": "USD"}),
    ({"inventoryCode": "aa", "floor": 2}, {"bidfloor": 1, "bidfloorcur": "USD"}, {"bidfloor": 2}),
    ({"inventoryCode": "aa"}, {"bidfloor": 1.0, "bidfloorcur": "EUR"}, {"bidfloor": 1.1, "bidfloorcur": "USD"}),
    ({"inventoryCode": "aa"}, {"bidfloor": 1.0, "bidfloorcur": "usd"}, {"bidfloor": 1.0, "bidfloorcur": "USD"}),
    ({"inventoryCode": "aa"}, {"bidfloor": 1.0}, {"bidfloor": 1.0, "bidfloorcur": "USD"}),
    ({"inventoryCode": "aa"}, {"bidfloor": 0, "bidfloorcur": "EUR"}, {"bidfloor": 0, "bidfloorcur": "EUR"}),
    ({"inventoryCode": "aa", "floor": 1}, {"bidfloorcur": "EUR"}, {"bidfloor": 1.1, "bidfloorcur": "USD"}),
])
def test_tagid_and_floor(params, fields, want):
    _, bodies, errors = run({"id": "r", "imp": [imp(params=params, **fields)]})
    assert errors == []
    sent = bodies[0]["imp"][0]
    for key, value in want.items():
        assert sent.get(key) == (pytest.approx(value) if isinstance(value, float) else value), key
    assert sent["ext"] == {"bidder": params}


@pytest.mark.parametrize(("imps", "want_errors", "want_ids"), [
    ([imp(ext="aaa")], ['expect { or n, but found "', "No valid impressions for triplelift"], []),
    ([imp(ext={"bidder": "aaa"})], ['expect { or n, but found "', "No valid impressions for triplelift"], []),
    ([imp(ext={"bidder": [1]})], ["expect { or n, but found [", "No valid impressions for triplelift"], []),
    ([{"id": "i", "ext": {"bidder": {"inventoryCode": "a"}}}],
     ["neither Banner nor Video object specified", "No valid impressions for triplelift"], []),
    ([imp("a", bidfloor=1, bidfloorcur="JPY"), imp("b")],
     ["Currency conversion rate not found: 'JPY' => 'USD'"], ["b"]),
    ([imp("a", params={"inventoryCode": 5}), imp("b", video={"w": 1})],
     ["triplelift params: inventoryCode must be a string"], ["b"]),
    ([imp("a", params={"inventoryCode": "c", "floor": "1"})],
     ["triplelift params: floor must be a number", "No valid impressions for triplelift"], []),
    ([], ["No valid impressions for triplelift"], []),
])
def test_request_errors(imps, want_errors, want_ids):
    calls, _, errors = run({"id": "r", "imp": imps})
    assert errors == want_errors
    assert [i for call in calls for i in call.imp_ids] == want_ids


def test_one_call_for_all_imps():
    calls, bodies, _ = run({"id": "r", "site": {"page": "p"}, "imp": [imp("a"), imp("b", video={"w": 1})]})
    assert [call.imp_ids for call in calls] == [["a", "b"]]
    assert calls[0].uri == ENDPOINT
    assert bodies[0]["site"] == {"page": "p"}


def bids_of(body: Any, status: int = 200):
    data = body if isinstance(body, bytes) else orjson.dumps(body)
    built = build(AdapterConfig("triplelift", ENDPOINT))
    return built.make_bids({"id": "r"}, RequestData("POST", ENDPOINT), ResponseData(status, data))


@pytest.mark.parametrize(("ext", "want_type", "want_error"), [
    ({"triplelift_pb": {"format": 11}}, "video", None),
    ({"triplelift_pb": {"format": 12}}, "video", None),
    ({"triplelift_pb": {"format": 17}}, "video", None),
    ({"triplelift_pb": {"format": 2}}, "banner", None),
    ({}, "banner", None),
    (None, "banner", None),
    ("aaa", None, 'expect { or n, but found "'),
    ({"triplelift_pb": 1}, None, "expect { or n, but found 1"),
    ({"triplelift_pb": {"format": "11"}}, None, "bid.ext.triplelift_pb.format must be an integer"),
    ("absent", None, "bid b: no ext.triplelift_pb to type it by"),
])
def test_bid_types(ext, want_type, want_error):
    bid: dict[str, Any] = {"id": "b", "impid": "i", "price": 1}
    if ext != "absent":
        bid["ext"] = ext
    response, errors = bids_of({"seatbid": [{"bid": [bid]}]})
    assert [b.bid_type for b in response.bids] == ([want_type] if want_type else [])
    assert [e.message for e in errors] == ([want_error] if want_error else [])


@pytest.mark.parametrize(("status", "body", "want_response", "want_error", "want_code"), [
    (204, b"", False, None, None),
    (400, b"{}", False, "Unexpected status code: 400. Run with request.debug = 1 for more info", ErrorCode.BAD_INPUT),
    (302, b"{}", False, "Unexpected status code: 302. Run with request.debug = 1 for more info",
     ErrorCode.BAD_SERVER_RESPONSE),
    (200, b"nope", False, "Bad response body", ErrorCode.BAD_SERVER_RESPONSE),
    (200, b'{"id": "r"}', True, None, None),
])
def test_statuses(status, body, want_response, want_error, want_code):
    response, errors = bids_of(body, status)
    assert (response is not None) == want_response
    if want_error is None:
        assert errors == []
        assert response is None or response.currency == "USD"
    else:
        assert errors[0].message.startswith(want_error)
        assert errors[0].code == want_code
