"""TripleLift Native adapter: the publisher whitelist (parentAccount first), tagid from
inventoryCode or msn's tag_code, the floor in USD, native imps only, every bid native in USD."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.triplelift_native import build
from tests.adapters.helpers import bids_for, converter, requests_of

ENDPOINT = "http://tlx.3lift.net/s2sn/auction?supplier_id=20"
ADAPTER = build(AdapterConfig("triplelift_native", ENDPOINT, {"extra_info": '{"publisher_whitelist":["foo"]}'}))
INFO = RequestInfo(bidder="triplelift_native")


def request(publisher: Any, *imps: dict[str, Any], holder: str = "site") -> dict[str, Any]:
    return {"id": "r", holder: {"publisher": publisher}, "imp": list(imps)}


def imp(params: Any = None, data: Any = None, **fields: Any) -> dict[str, Any]:
    ext: dict[str, Any] = {"bidder": {"inventoryCode": "inv"} if params is None else params}
    if data is not None:
        ext["data"] = data
    return {"id": "i", "native": {"request": "{}"}, "ext": ext, **fields}


@pytest.mark.parametrize(
    ("publisher", "holder", "allowed"),
    [
        ({"id": "foo"}, "site", True),
        ({"id": "foo"}, "app", True),
        ({"id": "bar"}, "site", False),
        ({"id": "bar", "ext": {"prebid": {"parentAccount": "foo"}}}, "site", True),
        ({"id": "foo", "ext": {"prebid": {"parentAccount": "bar"}}}, "site", False),
        ({"id": "foo", "ext": {"prebid": {"parentAccount": ""}}}, "site", True),
        (None, "site", False),
    ],
)
def test_publisher_whitelist(publisher, holder, allowed):
    calls, _, errors = requests_of(ADAPTER, request(publisher, imp(), holder=holder), INFO)
    assert len(calls) == (1 if allowed else 0)
    assert [e.message for e in errors] == ([] if allowed else ["Unsupported publisher for triplelift_native"])


@pytest.mark.parametrize(
    ("domain", "data", "tagid"),
    [
        ("msn.com", {"tag_code": "tc"}, "tc"),
        ("msn.com", {"tag_code": ""}, "inv"),
        ("msn.com", None, "inv"),
        ("example.com", {"tag_code": "tc"}, "inv"),
    ],
)
def test_tagid(domain, data, tagid):
    _, bodies, errors = requests_of(ADAPTER, request({"id": "foo", "domain": domain}, imp(data=data)), INFO)
    assert errors == []
    assert bodies[0]["imp"][0]["tagid"] == tagid


@pytest.mark.parametrize(
    ("params", "fields", "want"),
    [
        ({"inventoryCode": "inv", "floor": 2}, {}, {"bidfloor": 2, "bidfloorcur": "USD"}),
        ({"inventoryCode": "inv"}, {"bidfloor": 3, "bidfloorcur": "EUR"}, {"bidfloor": 6, "bidfloorcur": "USD"}),
        ({"inventoryCode": "inv", "floor": 0}, {"bidfloorcur": "EUR"}, {"bidfloorcur": "EUR"}),
        ({"inventoryCode": "inv"}, {}, {}),
    ],
)
def test_floor_in_usd(params, fields, want):
    info = RequestInfo(bidder="triplelift_native", convert_currency=converter("EUR"))
    _, bodies, errors = requests_of(ADAPTER, request({"id": "foo"}, imp(params, **fields)), info)
    assert errors == []
    sent = bodies[0]["imp"][0]
    assert {key: sent[key] for key in ("bidfloor", "bidfloorcur") if key in sent} == want


@pytest.mark.parametrize(
    ("the_imp", "error"),
    [
        ({"id": "i", "banner": {}, "ext": {"bidder": {}}}, "no native object specified"),
        (imp(params="x"), 'expect { or n, but found "'),
        (
            imp(params={"inventoryCode": 1}),
            'cannot unmarshal openrtb_ext.ExtImpTriplelift.InvCode: expects " or n, but found 1',
        ),
        (
            imp(bidfloor=1, bidfloorcur="GBP"),
            "Unable to convert bid floor from GBP to USD: Currency conversion rate not found: 'GBP' => 'USD'",
        ),
    ],
)
def test_dropped_imps(the_imp, error):
    calls, _, errors = requests_of(ADAPTER, request({"id": "foo"}, the_imp), INFO)
    assert calls == []
    assert [e.message for e in errors] == [error, "No valid impressions for triplelift"]


@pytest.mark.parametrize(("cur", "ext"), [("EUR", {"triplelift_pb": {"format": 11}}), ("", None)])
def test_every_bid_is_native_in_usd(cur, ext):
    bid = {"id": "b", "impid": "i", "price": 1.5, **({"ext": ext} if ext else {})}
    response, errors = bids_for(ADAPTER, {}, {"id": "r", "cur": cur, "seatbid": [{"bid": [bid]}]})
    assert errors == []
    assert response is not None and response.currency == "USD"
    assert [(typed.bid, typed.bid_type) for typed in response.bids] == [(bid, "native")]


@pytest.mark.parametrize(
    ("status", "code"), [(400, ErrorCode.BAD_INPUT), (500, ErrorCode.BAD_SERVER_RESPONSE), (204, None)]
)
def test_status(status, code):
    response, errors = bids_for(ADAPTER, {}, b"", status)
    assert response is None
    assert [e.code for e in errors] == ([code] if code else [])


@pytest.mark.parametrize("extra_info", ["{foo:2}", '{"publisher_whitelist": "foo"}'])
def test_bad_extra_info_is_refused(extra_info):
    with pytest.raises(ValueError, match="invalid extra info"):
        build(AdapterConfig("triplelift_native", ENDPOINT, {"extra_info": extra_info}))
