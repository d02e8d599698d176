"""UNICORN adapter: privacy refusals, the imp ext rewrite and stored-request placement, the app,
source and request ext, and bid typing."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.unicorn import build
from tests.adapters.helpers import bids_for, imp_with, requests_of

ENDPOINT = "https://ds.uncn.jp"
ADAPTER = build(AdapterConfig("unicorn", ENDPOINT))
INFO = RequestInfo(bidder="unicorn")
PARAMS = {"accountId": 1, "placementId": "pl", "mediaId": "m", "publisherId": "pub"}


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    return imp_with(imp_id, PARAMS if params is None else params, fields, {"banner": {}})


def run(request: dict):
    calls, bodies, errors = requests_of(ADAPTER, {"id": "r", "app": {"id": "a"}, **request}, INFO)
    return calls, bodies, [(e.message, e.code) for e in errors]


@pytest.mark.parametrize(
    ("regs", "want"),
    [
        ({"coppa": 1}, "COPPA is not supported"),
        ({"ext": {"gdpr": 1}}, "GDPR is not supported"),
        ({"ext": {"us_privacy": "1YNN"}}, "CCPA is not supported"),
    ],
)
def test_privacy_refused(regs, want):
    calls, _, errors = run({"imp": [imp()], "regs": regs})
    assert (calls, errors) == ([], [(want, ErrorCode.BAD_INPUT)])


@pytest.mark.parametrize(
    ("ext", "want_ext", "want_tagid"),
    [
        ({"bidder": PARAMS, "prebid": {"x": 1}, "gpid": "g"}, {"bidder": PARAMS}, "pl"),
        ({"bidder": {**PARAMS, "placementId": ""}, "prebid": {"storedrequest": {"id": "s"}}},
         {"bidder": {**PARAMS, "placementId": "s"}}, "s"),
        ({"bidder": PARAMS, "context": {"data": {"k": 1}}}, {"bidder": PARAMS, "context": {"data": {"k": 1}}}, "pl"),
        ({"bidder": PARAMS, "context": {}}, {"bidder": PARAMS, "context": {}}, "pl"),
    ],
)  # fmt: skip
def test_imp_rewrite(ext, want_ext, want_tagid):
    _, bodies, errors = run({"imp": [imp(ext=ext, tagid="old")]})
    assert errors == []
    sent = bodies[0]["imp"][0]
    assert (sent["ext"], sent.get("tagid"), sent["secure"]) == (want_ext, want_tagid, 1)


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"bidder": {"accountId": 1}},
         "Error get StoredRequestImpID from imp[0]: stored request id not found: Key path not found"),
        ({"bidder": {"accountId": 1}, "prebid": {"storedrequest": {"id": 5}}},
         "Error get StoredRequestImpID from imp[0]: stored request id not found: Value is not a string: 5"),
        ({"bidder": {"accountId": "x"}},
         "Error while decoding imp[0].ext: cannot unmarshal openrtb_ext.ExtImpUnicorn.AccountID: "
         "unexpected character: \ufffd"),
    ],
)  # fmt: skip
def test_imp_refused(ext, want):
    calls, _, errors = run({"imp": [imp(ext=ext)]})
    assert (calls, errors) == ([], [(want, ErrorCode.BAD_INPUT)])


@pytest.mark.parametrize(
    ("params", "want_app"),
    [
        (PARAMS, {"id": "m", "publisher": {"id": "pub", "name": "n"}}),
        ({"accountId": 1, "placementId": "pl"}, {"id": "a", "publisher": {"id": "old", "name": "n"}}),
    ],
)
def test_app(params, want_app):
    _, bodies, _ = run({"imp": [imp(params=params)], "app": {"id": "a", "publisher": {"id": "old", "name": "n"}}})
    assert bodies[0]["app"] == want_app


def test_app_and_account_required():
    calls, errors = ADAPTER.make_requests({"id": "r", "imp": [imp()]}, INFO)
    assert (calls, [e.message for e in errors]) == ([], ["request app is required"])
    calls, _, errors = run({"imp": [imp(params={"placementId": "p"})]})
    assert (calls, errors) == ([], [("accountId field is required", ErrorCode.UNKNOWN)])


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        (None, {"accountId": 1}),
        ({"prebid": {"storedrequest": {"id": "t"}, "targeting": {}, "cache": {}}, "other": 1},
         {"prebid": {"storedrequest": {"id": "t"}}, "accountId": 1}),
        ({"prebid": "x"}, {"accountId": 1}),
    ],
)  # fmt: skip
def test_request_ext_and_source(ext, want):
    _, bodies, _ = run({"imp": [imp()], **({"ext": ext} if ext else {}), "source": {"tid": "t"}})
    assert bodies[0]["ext"] == want
    assert bodies[0]["source"] == {"tid": "t", "ext": {"stype": "prebid_server_uncn", "bidder": "unicorn"}}


@pytest.mark.parametrize(("impid", "want"), [("i", "banner"), ("v", ""), ("none", "")])
def test_bid_type(impid, want):
    request = {"id": "r", "imp": [imp(), imp("v", video={})]}
    answer = {"cur": "JPY", "seatbid": [{"bid": [{"id": "b", "impid": impid, "price": 1}]}]}
    response, errors = bids_for(ADAPTER, request, answer)
    assert errors == [] and response is not None
    assert (response.currency, [t.bid_type for t in response.bids]) == ("JPY", [want])


@pytest.mark.parametrize(
    ("status", "want"),
    [(400, [("Unexpected http status code: 400", 2)]), (500, [("Unexpected http status code: 500", 3)]), (204, [])],
)
def test_status(status, want):
    response, errors = bids_for(ADAPTER, {"id": "r", "imp": [imp()]}, b"", status)
    assert response is None
    assert [(e.message, int(e.code)) for e in errors] == want
