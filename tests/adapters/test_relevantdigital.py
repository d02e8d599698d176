"""Relevant Digital adapter: the host, the relay count and stored requests in ext, tmax less the
buffer, the imp's ext, bid typing by mtype or ext.prebid.type and the source seat."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.relevantdigital import build, merge_patch
from tests.adapters.helpers import bids_for, imp_with, requests_of

ENDPOINT = "https://{{.Host}}.relevant-digital.com/openrtb2/auction"
ADAPTER = build(AdapterConfig("relevantdigital", ENDPOINT))
INFO = RequestInfo(bidder="relevantdigital")
FAILED_EXT = "failed to create bidRequest, error: failed to unmarshal ext, "
PARAMS = {"accountId": "acc", "placementId": "pl", "pbsHost": "host"}


def imp(imp_id: str = "i", **params: Any) -> dict:
    return imp_with(imp_id, {**PARAMS, **params}, {}, {"banner": {}})


def run(request: dict):
    calls, bodies, errors = requests_of(ADAPTER, {"id": "r", **request}, INFO)
    return calls, bodies, [(e.message, e.code) for e in errors]


@pytest.mark.parametrize(
    ("host", "want"),
    [
        ("host", "https://host.relevant-digital.com/openrtb2/auction"),
        ("https://host.relevant-digital.com", "https://host.relevant-digital.com/openrtb2/auction"),
        ("http://a-b.c:8080", "https://a-b.c:8080.relevant-digital.com/openrtb2/auction"),
        ("evil.com/x", None),
        ("host\n", None),
        ("", None),
    ],
)
def test_host(host, want):
    calls, _, errors = run({"imp": [imp(pbsHost=host)]})
    if want is None:
        assert (calls, errors) == ([], [("Invalid Host", ErrorCode.BAD_INPUT)])
    else:
        assert [call.uri for call in calls] == [want]


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        (None, {"relevant": {"count": 1, "adapterType": "server"},
                "prebid": {"storedrequest": {"id": "acc"}, "debug": False}}),
        ({"relevant": {"count": 4}, "prebid": {"debug": True, "cache": {}, "targeting": {}, "aliases": {}, "k": 1},
          "o": 2},
         {"relevant": {"count": 5, "adapterType": "server"},
          "prebid": {"storedrequest": {"id": "acc"}, "debug": True, "k": 1}, "o": 2}),
    ],
)  # fmt: skip
def test_request_ext(ext, want):
    _, bodies, errors = run({"imp": [imp()], **({"ext": ext} if ext else {})})
    assert errors == []
    assert bodies[0]["ext"] == want


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"relevant": {"count": 5}}, "failed to create bidRequest, error: too many requests"),
        ({"relevant": {"count": "1"}}, FAILED_EXT + '{"relevant":{"count":"1"}}'),
        ({"prebid": {"debug": 1}}, FAILED_EXT + '{"prebid":{"debug":1}}'),
    ],
)  # fmt: skip
def test_request_ext_refused(ext, want):
    calls, _, errors = run({"imp": [imp()], "ext": ext})
    assert (calls, errors) == ([], [(want, ErrorCode.BAD_INPUT)])


@pytest.mark.parametrize(
    ("tmax", "buffer", "want"),
    [(None, None, 750), (2000, None, 1750), (300, None, 250), (1000, 600, 600), (1000, -100, 1000), (0, 100, 900)],
)
def test_tmax(tmax, buffer, want):
    params = {} if buffer is None else {"pbsBufferMs": buffer}
    _, bodies, _ = run({"imp": [imp(**params)], **({"tmax": tmax} if tmax is not None else {})})
    assert bodies[0]["tmax"] == want


def test_imp_ext_is_the_placement_and_relevant_exts_go():
    the_imp = {**imp(), "banner": {"ext": {"relevant": 1, "k": 2}}}
    calls, bodies, _ = run({"imp": [the_imp, imp("j", placementId="p2")]})
    assert [i["ext"] for i in bodies[0]["imp"]] == [
        {"prebid": {"storedrequest": {"id": "pl"}}},
        {"prebid": {"storedrequest": {"id": "p2"}}},
    ]
    assert bodies[0]["imp"][0]["banner"] == {"ext": {"k": 2}}
    assert calls[0].imp_ids == ["i", "j"]
    assert dict(calls[0].headers)["X-Openrtb-Version"] == "2.5"


def test_any_bad_imp_fails_the_request():
    _, _, errors = run({"imp": [imp(), {"id": "x", "banner": {}}, {"id": "y", "banner": {}, "ext": {"bidder": 1}}]})
    assert errors == [("imp.ext not provided", ErrorCode.BAD_INPUT), ("ext.bidder not provided", ErrorCode.BAD_INPUT)]


@pytest.mark.parametrize(
    ("bid", "want_type", "want_error"),
    [
        ({"mtype": 3}, "audio", None),
        ({"ext": {"prebid": {"type": "native"}}}, "native", None),
        ({"ext": {"prebid": {"type": "invalid"}}}, None, "invalid BidType: invalid"),
        ({"ext": {"prebid": {"type": 1}}}, None, "failed to parse bid type, missing ext: i"),
        ({"ext": {"other": 1}}, None, "failed to parse bid type, missing ext: i"),
        ({}, None, "failed to parse bid type, missing ext: i"),
    ],
)
def test_bid_type(bid, want_type, want_error):
    answer = {"seatbid": [{"seat": "s", "bid": [{"id": "b", "impid": "i", "price": 1, **bid}]}]}
    response, errors = bids_for(ADAPTER, {"id": "r", "imp": [imp()]}, answer)
    assert response is not None
    assert [typed.bid_type for typed in response.bids] == ([want_type] if want_type else [])
    assert [e.message for e in errors] == ([want_error] if want_error else [])


@pytest.mark.parametrize(("flag", "want"), [(True, "s"), (False, "")])
def test_source_seat(flag, want):
    answer = {"seatbid": [{"seat": "s", "bid": [{"id": "b", "impid": "i", "price": 1, "mtype": 1}]}]}
    response, _ = bids_for(ADAPTER, {"id": "r", "imp": [imp(useSourceBidderCode=flag)]}, answer)
    assert response is not None and [typed.seat for typed in response.bids] == [want]


@pytest.mark.parametrize(
    ("target", "patch", "want"),
    [
        ({"a": {"b": 1, "c": 2}}, {"a": {"b": 3}}, {"a": {"b": 3, "c": 2}}),
        ({"a": 1}, {"a": None}, {}),
        (None, {"a": 1}, {"a": 1}),
    ],
)
def test_merge_patch(target, patch, want):
    assert merge_patch(target, patch) == want
