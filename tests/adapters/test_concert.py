"""Concert adapter: the request's ext (adapterVersion, partnerId), params read from the first imp
(sizes as [][]int), and bid typing with the whole answer failing on any untyped bid."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.concert import build
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "https://concert.test/bids/openrtb"
INFO = RequestInfo(bidder="concert")


def imp(imp_id: str = "i", params: Any = None) -> dict[str, Any]:
    return {"id": imp_id, "banner": {}, "ext": {"bidder": {"partnerId": "p1"} if params is None else params}}


def run(request: dict[str, Any]):
    return requests_of(build(AdapterConfig("concert", ENDPOINT)), request, INFO)


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        (None, {"adapterVersion": "1.0.0", "partnerId": "p1"}),
        ({"prebid": {"x": 1}}, {"prebid": {"x": 1}, "adapterVersion": "1.0.0", "partnerId": "p1"}),
        ({"partnerId": "old", "adapterVersion": "0"}, {"partnerId": "p1", "adapterVersion": "1.0.0"}),
    ],
)
def test_request_ext(ext, want):
    request = {"id": "r", "imp": [imp("a"), imp("b", {"partnerId": "other"})]}
    if ext is not None:
        request["ext"] = ext
    calls, bodies, errors = run(request)
    assert errors == [] and len(calls) == 1
    assert bodies[0]["ext"] == want  # the first imp's partnerId
    assert [i["ext"] for i in bodies[0]["imp"]] == [i["ext"] for i in request["imp"]]  # imps as they are
    assert calls[0].imp_ids == ["a", "b"]
    assert calls[0].uri == ENDPOINT
    assert calls[0].headers["Content-Type"] == "application/json"


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"partnerId": "p", "sizes": [[300, 250], None]}, None),
        ({"partnerId": "p", "sizes": None}, None),
        ({"partnerId": 5}, "get bidder ext: bidder ext: cannot unmarshal"),
        ({"partnerId": "p", "sizes": [300, 250]}, "get bidder ext: bidder ext: cannot unmarshal"),
        ({"partnerId": "p", "sizes": [["300"]]}, "get bidder ext: bidder ext: cannot unmarshal"),
        ({"partnerId": "p", "placementId": "7"}, "get bidder ext: bidder ext: cannot unmarshal"),
    ],
)
def test_params(params, error):
    calls, _, errors = run({"id": "r", "imp": [imp(params=params)]})
    if error is None:
        assert (len(calls), errors) == (1, [])
    else:
        assert calls == [] and len(errors) == 1
        assert errors[0].message.startswith(error) and errors[0].code == ErrorCode.UNKNOWN


def test_first_imp_ext_error():
    calls, _, errors = run({"id": "r", "imp": [{"id": "i", "banner": {}, "ext": "x"}, imp()]})
    assert calls == [] and errors[0].message.startswith("get bidder ext: imp ext: ")


def answer(*mtypes: Any) -> dict[str, Any]:
    return {
        "cur": "EUR",
        "seatbid": [{"bid": [{"id": str(n), "impid": f"i{n}", "price": 1, "mtype": m} for n, m in enumerate(mtypes)]}],
    }


@pytest.mark.parametrize(
    ("body", "types", "errors"),
    [
        (answer(1, 2, 3), ["banner", "video", "audio"], []),
        (answer(1, 4), None, [("native media types are not yet supported", ErrorCode.UNKNOWN)]),
        (
            answer(0, 4, 9),
            None,
            [
                ('Failed to parse media type for bid: "i0"', ErrorCode.BAD_SERVER_RESPONSE),
                ("native media types are not yet supported", ErrorCode.UNKNOWN),
                ('Failed to parse media type for bid: "i2"', ErrorCode.BAD_SERVER_RESPONSE),
            ],
        ),
        ({"seatbid": []}, None, [("no bids returned", ErrorCode.UNKNOWN)]),
    ],
)
def test_bids(body, types, errors):
    response, got = bids_for(build(AdapterConfig("concert", ENDPOINT)), {"imp": [imp()]}, body)
    assert [(e.message, e.code) for e in got] == errors
    if types is None:
        assert response is None
    else:
        assert response.currency == "EUR" and [bid.bid_type for bid in response.bids] == types
