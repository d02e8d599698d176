"""Kidoz adapter: which imps get a call (and the wording of those that do not), one call per imp with
the OpenRTB 2.5 header, the status wording of an answer and bids typed by their imp."""

from __future__ import annotations

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestData, RequestInfo, ResponseData
from hbserver.adapters.kidoz import build

ENDPOINT = "http://example.com/prebid"
ADAPTER = build(AdapterConfig("kidoz", ENDPOINT))
PARAMS = {"access_token": "t", "publisher_id": "p"}
BANNER = {"format": [{"w": 320, "h": 50}]}


@pytest.mark.parametrize(
    ("imp", "want"),
    [
        ({"banner": BANNER, "ext": {"bidder": PARAMS}}, None),
        ({"video": {"mimes": ["video/mp4"]}, "ext": {"bidder": PARAMS}}, None),
        (
            {"native": {"request": "{}"}, "ext": {"bidder": PARAMS}},
            (ErrorCode.BAD_INPUT, "Kidoz only supports banner or video ads"),
        ),
        ({"banner": {}, "ext": {"bidder": PARAMS}}, (ErrorCode.BAD_INPUT, "banner format required")),
        ({"banner": {"format": []}, "ext": {"bidder": PARAMS}}, (ErrorCode.BAD_INPUT, "banner format array is empty")),
        ({"banner": BANNER}, (ErrorCode.UNKNOWN, "impression extensions required")),
        ({"banner": BANNER, "ext": {}}, (ErrorCode.UNKNOWN, "bidder required")),
        ({"banner": BANNER, "ext": {"bidder": 1}}, (ErrorCode.UNKNOWN, "expect { or n, but found 1")),
        ({"banner": BANNER, "ext": {"bidder": None}}, (ErrorCode.UNKNOWN, "Kidoz access_token required")),
        (
            {"banner": BANNER, "ext": {"bidder": {"access_token": "t"}}},
            (ErrorCode.UNKNOWN, "Kidoz publisher_id required"),
        ),
        (
            {"banner": BANNER, "ext": {"bidder": {**PARAMS, "publisher_id": 7}}},
            (ErrorCode.UNKNOWN, 'cannot unmarshal openrtb_ext.ExtImpKidoz.PublisherID: expects " or n, but found 7'),
        ),
    ],
)
def test_which_imps_get_a_call(imp, want):
    calls, errors = ADAPTER.make_requests({"id": "r", "imp": [{"id": "i", **imp}]}, RequestInfo(bidder="kidoz"))
    assert [(error.code, error.message) for error in errors] == ([want] if want else [])
    assert len(calls) == (0 if want else 1)


def test_one_call_per_imp_with_the_openrtb_version():
    imps = [{"id": name, "banner": BANNER, "ext": {"bidder": PARAMS}} for name in ("a", "b")]
    calls, errors = ADAPTER.make_requests({"id": "r", "imp": imps, "test": 0}, RequestInfo(bidder="kidoz"))
    assert errors == []
    assert [call.imp_ids for call in calls] == [["a"], ["b"]]
    assert all(call.uri == ENDPOINT and call.headers["X-Openrtb-Version"] == "2.5" for call in calls)
    assert [orjson.loads(call.body or b"") for call in calls] == [{"id": "r", "imp": [imp]} for imp in imps]


@pytest.mark.parametrize(
    ("status", "want"),
    [
        (204, None),
        (503, None),
        (400, (ErrorCode.BAD_INPUT, "unexpected status code: 400 oops")),
        (401, (ErrorCode.BAD_INPUT, "unexpected status code: 401 oops")),
        (403, (ErrorCode.BAD_INPUT, "unexpected status code: 403 oops")),
        (500, (ErrorCode.BAD_SERVER_RESPONSE, "unexpected status code: 500 oops")),
    ],
)
def test_status(status, want):
    response, errors = ADAPTER.make_bids({}, RequestData("POST", ENDPOINT), ResponseData(status, b"oops"))
    assert response is None
    assert [(error.code, error.message) for error in errors] == ([want] if want else [])


def test_bids_typed_by_their_imp_and_in_usd():
    request = {"imp": [{"id": "v", "video": {}}, {"id": "n", "native": {}}, {"id": "b", "banner": {}, "video": {}}]}
    bids = [{"id": f"bid-{imp}", "impid": imp, "price": 1} for imp in ("v", "n", "b", "x")]
    body = orjson.dumps({"cur": "EUR", "seatbid": [{"bid": bids}]})
    response, errors = ADAPTER.make_bids(request, RequestData("POST", ENDPOINT), ResponseData(200, body))
    assert response is not None and response.currency == "USD"
    assert [(typed.bid["id"], typed.bid_type) for typed in response.bids] == [
        ("bid-v", "video"),
        ("bid-n", "native"),
        ("bid-b", "banner"),
    ]
    assert [(error.code, error.message) for error in errors] == [
        (ErrorCode.BAD_SERVER_RESPONSE, "ignoring bid id=bid-x, request doesn't contain any valid impression with id=x")
    ]


def test_an_answer_that_does_not_decode():
    response, errors = ADAPTER.make_bids({}, RequestData("POST", ENDPOINT), ResponseData(200, b'"x"'))
    assert response is None
    assert [(error.code, error.message) for error in errors] == [
        (ErrorCode.BAD_SERVER_RESPONSE, 'expect { or n, but found "')
    ]
