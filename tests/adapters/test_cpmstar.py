"""CPMStar adapter: the params moved up into ``imp.ext`` (other keys kept), the imps that refuse the
whole request, the status wording and bids typed by their imp."""

from __future__ import annotations

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestData, RequestInfo, ResponseData
from hbserver.adapters.cpmstar import build

ENDPOINT = "//host"
ADAPTER = build(AdapterConfig("cpmstar", ENDPOINT))


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"bidder": {"placementId": 1}}, {"placementId": 1}),
        (
            {"gpid": "/p", "bidder": {"placementId": 1, "subpoolId": 2}},
            {"gpid": "/p", "placementId": 1, "subpoolId": 2},
        ),
        ({"placementId": 9, "bidder": {"placementId": 1}}, {"placementId": 1}),  # the params win
        ({"bidder": None, "tid": "t"}, {"tid": "t"}),
        ({"bidder": {"big": 2**60}}, {"big": float(2**60)}),  # numbers pass through Go's float64
    ],
)
def test_params_move_up_into_the_ext(ext, want):
    request = {"id": "r", "imp": [{"id": "i", "banner": {}, "ext": ext}]}
    calls, errors = ADAPTER.make_requests(request, RequestInfo(bidder="cpmstar"))
    assert errors == []
    assert [(call.uri, call.imp_ids) for call in calls] == [(ENDPOINT, ["i"])]
    assert orjson.loads(calls[0].body or b"")["imp"][0]["ext"] == want


@pytest.mark.parametrize(
    ("imps", "want"),
    [
        ([], "No Imps in Bid Request"),
        ([{"id": "i", "banner": {}, "ext": {}}], "bidder field not found in impression extension"),
        ([{"id": "i", "banner": {}, "ext": None}], "bidder field not found in impression extension"),
        (
            [{"id": "i", "native": {}, "ext": {"bidder": {}}}],
            "Only Banner and Video bid-types are supported at this time",
        ),
        (
            [{"id": "a", "video": {}, "ext": {"bidder": {}}}, {"id": "b", "audio": {}, "ext": {"bidder": {}}}],
            "Only Banner and Video bid-types are supported at this time",
        ),
        ([{"id": "i", "banner": {}, "ext": {"bidder": "x"}}], 'expect { or n, but found "'),
        ([{"id": "i", "banner": {}, "ext": 1}], "expect { or n, but found 1"),
    ],
)
def test_imps_that_refuse_the_request(imps, want):
    calls, errors = ADAPTER.make_requests({"id": "r", "imp": imps}, RequestInfo(bidder="cpmstar"))
    assert calls == []
    assert [(error.code, error.message) for error in errors] == [(ErrorCode.BAD_INPUT, want)]


@pytest.mark.parametrize(
    ("status", "body", "want"),
    [
        (204, b"", None),
        (500, b"", "Unexpected HTTP status code: 500. Run with request.debug = 1 for more info"),
        (200, b"[]", "expect { or n, but found ["),
        (200, b'{"seatbid": []}', None),
    ],
)
def test_no_response(status, body, want):
    response, errors = ADAPTER.make_bids({}, RequestData("POST", ENDPOINT), ResponseData(status, body))
    assert response is None
    assert [(error.code, error.message) for error in errors] == (
        [(ErrorCode.BAD_SERVER_RESPONSE, want)] if want else []
    )


def test_bids_typed_by_their_imp():
    request = {"imp": [{"id": "b", "banner": {}, "video": {}}, {"id": "v", "video": {}}, {"id": "n", "native": {}}]}
    bids = [{"id": f"bid-{imp}", "impid": imp, "price": 1} for imp in ("b", "v", "n", "x")]
    body = orjson.dumps({"cur": "EUR", "seatbid": [{"bid": bids}]})
    response, errors = ADAPTER.make_bids(request, RequestData("POST", ENDPOINT), ResponseData(200, body))
    assert response is not None and response.currency == "USD"
    assert [(typed.bid["id"], typed.bid_type) for typed in response.bids] == [
        ("bid-b", "banner"),
        ("bid-v", "video"),
        ("bid-n", "banner"),
    ]
    assert [(error.code, error.message) for error in errors] == [
        (ErrorCode.BAD_SERVER_RESPONSE, "bid id='bid-x' could not find valid impid='x'")
    ]
