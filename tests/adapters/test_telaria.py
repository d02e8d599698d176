"""Telaria's own rules: the checks that stop a request, the first imp alone with its tag and
publisher moved into its ext, the seat code as publisher id, and the answer's bids matched to the
request's imps by position."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.telaria import DEFAULT_ENDPOINT, build
from tests.adapters.helpers import bids_for, requests_of

ADAPTER = build(AdapterConfig("telaria", ""))
PARAMS = {"seatCode": "seat", "adCode": "ad"}


def _imp(imp_id: str = "1", params=PARAMS, **fields):
    return {"id": imp_id, "video": {"mimes": ["video/mp4"]}, "ext": {"bidder": params}, **fields}


@pytest.mark.parametrize(
    ("imps", "error"),
    [
        ([], "Telaria: Missing Imp Object"),
        ([_imp(), _imp("2", banner={})], "Telaria: Banner not supported"),
        ([{"id": "1", "native": {}}], "Telaria: Only Supports Video"),
        ([_imp(ext="x")], "Telaria: ext.bidder not provided"),
        ([_imp(params={"seatCode": ""})], "Telaria: Seat Code required"),
    ],
)
def test_a_request_that_fails_a_check_gets_no_call(imps, error):
    calls, errors = ADAPTER.make_requests({"id": "r", "imp": imps}, RequestInfo("telaria"))
    assert calls == [] and [(e.message, e.code) for e in errors] == [(error, ErrorCode.BAD_INPUT)]


def test_the_first_imp_goes_alone_with_the_seat_as_publisher():
    request = {
        "id": "r",
        "imp": [_imp(tagid="t0", params={**PARAMS, "extra": {"k": 1}}), _imp("2")],
        "site": {"page": "p", "publisher": {"id": "pub", "name": "n", "other": 1}},
        "app": {"id": "a"},
        "device": {"ua": "UA", "ip": "1.2.3.4", "language": "en", "dnt": 1},
    }
    calls, bodies, errors = requests_of(ADAPTER, request, RequestInfo("telaria"))
    assert not errors and calls[0].uri == DEFAULT_ENDPOINT and calls[0].imp_ids == ["1"]
    body = bodies[0]
    assert [(imp["tagid"], imp["ext"]) for imp in body["imp"]] == [
        ("ad", {"originalTagid": "t0", "originalPublisherid": "pub"})
    ]
    assert body["site"]["publisher"] == {"id": "seat", "name": "n"} and "app" not in body
    assert body["ext"] == {"extra": {"k": 1}}
    assert {k: calls[0].headers[k] for k in ("User-Agent", "X-Forwarded-For", "Accept-Language", "Dnt")} == {
        "User-Agent": "UA", "X-Forwarded-For": "1.2.3.4", "Accept-Language": "en", "Dnt": "1",
    }  # fmt: skip


def test_an_app_gets_the_seat_as_its_publisher():
    _, bodies, _ = requests_of(ADAPTER, {"imp": [_imp()], "app": {"id": "a"}}, RequestInfo("telaria"))
    assert bodies[0]["app"]["publisher"] == {"id": "seat"} and bodies[0]["imp"][0]["ext"]["originalPublisherid"] == ""


def test_bids_take_the_imp_ids_by_position():
    bids = [{"id": f"b{n}", "impid": "x", "price": 1} for n in range(3)]
    request = {"imp": [{"id": "i1"}, {"id": "i2"}]}
    response, errors = bids_for(ADAPTER, request, {"cur": "EUR", "seatbid": [{"bid": bids}, {"bid": bids}]})
    assert [(t.bid["impid"], t.bid_type) for t in response.bids] == [("i1", "video"), ("i2", "video")]
    assert response.currency == "USD" and not errors
    assert bids_for(ADAPTER, request, {"seatbid": []}) == (response.__class__(), [])


@pytest.mark.parametrize(
    ("status", "body", "error", "code"),
    [
        (204, b"", "Telaria: Invalid Bid Request received by the server", ErrorCode.BAD_INPUT),
        (400, b"", "Telaria: Unexpected status code: [ 400 ] ", ErrorCode.BAD_INPUT),
        (503, b"", "Telaria: Something went wrong, please contact your Account Manager. Status Code: [ 503 ] ",
         ErrorCode.BAD_INPUT),
        (200, b"x", "Telaria: Bad Server Response", ErrorCode.BAD_SERVER_RESPONSE),
    ],
)  # fmt: skip
def test_failed_answers(status, body, error, code):
    response, errors = bids_for(ADAPTER, {}, body, status)
    assert response is None and [(e.message, e.code) for e in errors] == [(error, code)]
