"""Visx's own rules: the currency the call is sent with and Visx's answer (bids rebuilt with the
request's id, typed by ext.prebid.meta.mediaType, then by imp). The recipe steps are tested there."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.visx import build
from tests.adapters.helpers import bids_for, requests_of

ADAPTER = build(AdapterConfig("visx", "http://v.example"))
IMPS = [{"id": "b", "banner": {"w": 1, "h": 1}, "ext": {}}, {"id": "v", "video": {"mimes": []}, "ext": {}},
        {"id": "n", "native": {"request": ""}, "ext": {}}]  # fmt: skip
REQUEST: dict[str, Any] = {"id": "req", "imp": IMPS}


@pytest.mark.parametrize(("cur", "sent"), [(None, ["USD"]), ([], ["USD"]), (["EUR"], ["EUR"])])
def test_the_call_names_usd_when_the_request_names_no_currency(cur, sent):
    request = {**REQUEST, "device": {"ip": "1.2.3.4", "ipv6": "::1"}} | ({} if cur is None else {"cur": cur})
    calls, bodies, errors = requests_of(ADAPTER, request, RequestInfo("visx"))
    assert not errors and bodies[0]["cur"] == sent and calls[0].imp_ids == ["b", "v", "n"]
    assert calls[0].headers["X-Forwarded-For"] == "1.2.3.4, ::1"


def _answer(**bid: Any) -> dict[str, Any]:
    return {"cur": "EUR", "seatbid": [{"bid": [{"impid": "b", "price": 1.5, "auid": 7, "w": 300, "h": 0, **bid}]}]}


@pytest.mark.parametrize(
    ("bid", "kind"),
    [
        ({}, "banner"),
        ({"impid": "v"}, "video"),
        ({"ext": {"prebid": {"meta": {"mediaType": "video"}}}}, "video"),
        ({"impid": "v", "ext": {"prebid": {"meta": {"mediaType": "banner"}}}}, "banner"),
        ({"impid": "v", "ext": {"prebid": {"meta": {"mediaType": "native"}}}}, "video"),
        ({"impid": "v", "ext": {"prebid": {"meta": {"mediaType": 5}}}}, "video"),  # does not decode: let go
        ({"impid": "v", "ext": {"prebid": "x"}}, "video"),
    ],
)
def test_bids_typed_by_meta_then_by_imp(bid, kind):
    answer, errors = bids_for(ADAPTER, REQUEST, _answer(**bid))
    assert not errors and answer is not None and answer.currency == "EUR"
    assert answer.bids[0].bid_type == kind
    out = answer.bids[0].bid
    assert out["id"] == "req" and out["w"] == 300 and "h" not in out and "auid" not in out


@pytest.mark.parametrize(
    ("impid", "message"),
    [("n", 'Unknown impression type for ID: "n"'), ("x", 'Failed to find impression for ID: "x"')],
)
def test_an_untyped_bid_fails_the_answer(impid, message):
    answer, errors = bids_for(ADAPTER, REQUEST, _answer(impid=impid))
    assert answer is None and [(e.message, e.code) for e in errors] == [(message, ErrorCode.BAD_SERVER_RESPONSE)]


@pytest.mark.parametrize(
    ("body", "fails"),
    [({"seatbid": [{"bid": [{"impid": "b", "w": -1}]}]}, True), ({"seatbid": [{"bid": [{"auid": "x"}]}]}, True),
     ({"id": 5, "seatbid": []}, False), (b"null", False)],
)  # fmt: skip
def test_visx_answer_decodes_its_own_struct(body, fails):
    answer, errors = bids_for(ADAPTER, REQUEST, body)
    assert (answer is None and len(errors) == 1) if fails else (answer is not None and not errors)


def test_statuses():
    assert bids_for(ADAPTER, REQUEST, b"", status=204) == (None, [])
    assert bids_for(ADAPTER, REQUEST, b"", status=400)[1][0].code == ErrorCode.BAD_INPUT
    assert bids_for(ADAPTER, REQUEST, b"", status=500)[1][0].code == ErrorCode.BAD_SERVER_RESPONSE
