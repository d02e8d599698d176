"""Criteo adapter: the request passes unchanged without headers, bid types and network names from
``ext.prebid``, Protected Audience configs from ``ext.igi``, statuses."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.criteo import build
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "https://ssp-bidder.criteo.com/openrtb/pbs/auction/request?profile=230"


def test_request_passes_unchanged_in_one_call():
    request = {"id": "r", "imp": [{"id": "a", "banner": {}}, {"id": "b", "video": {}}], "ext": {"x": 1}}
    calls, bodies, errors = requests_of(build(AdapterConfig("criteo", ENDPOINT)), request, RequestInfo(bidder="criteo"))
    assert errors == []
    assert [(call.method, call.uri, call.imp_ids) for call in calls] == [("POST", ENDPOINT, ["a", "b"])]
    assert dict(calls[0].headers) == {}
    assert bodies[0] == request


def bids_of(body: Any, status: int = 200, bidder: str = "criteo"):
    return bids_for(build(AdapterConfig(bidder, ENDPOINT)), {}, body, status)


@pytest.mark.parametrize(
    ("ext", "want_type", "want_meta"),
    [
        ({"prebid": {"type": "video"}}, "video", None),
        ({"prebid": {"type": "banner", "networkName": "Criteo"}}, "banner", {"networkName": "Criteo"}),
        ({"prebid": {"type": "native", "networkName": ""}}, "native", None),
        ({"prebid": {}}, "", None),
        ({}, "", None),
    ],
)
def test_bid_type_and_network(ext, want_type, want_meta):
    response, errors = bids_of(
        {"cur": "EUR", "seatbid": [{"bid": [{"id": "1", "impid": "i", "price": 1, "ext": ext}]}]}
    )
    assert errors == []
    assert response.currency == "EUR"
    assert [(b.bid_type, b.bid_meta) for b in response.bids] == [(want_type, want_meta)]


@pytest.mark.parametrize("ext", [None, "x", {"prebid": 1}, {"prebid": {"type": 2}}, {"prebid": {"networkName": 1}}])
def test_bid_ext_that_does_not_decode_fails_the_answer(ext):
    bids = [{"id": "0", "impid": "ok", "price": 1, "ext": {"prebid": {"type": "banner"}}}, {"id": "1", "impid": "i"}]
    if ext is not None:
        bids[1]["ext"] = ext
    response, errors = bids_of({"seatbid": [{"bid": bids}]})
    assert response is None
    assert [(e.code, e.message) for e in errors] == [
        (ErrorCode.BAD_SERVER_RESPONSE, "Missing ext.prebid.type in bid for impression : i.")
    ]


@pytest.mark.parametrize(
    ("ext", "bidder", "want"),
    [
        (None, "criteo", None),
        ({}, "criteo", None),
        ({"igi": []}, "criteo", None),
        ({"igi": [{}]}, "criteo", None),
        ({"igi": [{"impid": "1", "igs": []}]}, "criteo", None),
        ({"igi": [{"impid": "1", "igs": [{}]}]}, "criteo", None),
        (
            {"igi": [{"impid": "1", "igs": [{"config": {"a": 1}}, {"config": {"b": 2}}]}, {"impid": "2"}]},
            "criteo",
            [{"impid": "1", "bidder": "criteo", "config": {"a": 1}}],
        ),
        (
            {"igi": [{"impid": "1", "igs": [{"config": {"a": 1}}]}]},
            "criteoalias",
            [{"impid": "1", "bidder": "criteoalias", "config": {"a": 1}}],
        ),
        ({"igi": [{"impid": 1, "igs": [{"config": {"a": 1}}]}]}, "criteo", None),
        ({"igi": {"impid": "1"}}, "criteo", None),
    ],
)
def test_fledge_configs(ext, bidder, want):
    body: dict[str, Any] = {"seatbid": []}
    if ext is not None:
        body["ext"] = ext
    response, errors = bids_of(body, bidder=bidder)
    assert errors == []
    assert response.fledge_auction_configs == want


@pytest.mark.parametrize(
    ("status", "want_errors"),
    [
        (204, []),
        (400, [(ErrorCode.BAD_INPUT, "Unexpected status code: 400. Run with request.debug = 1 for more info.")]),
        (
            500,
            [(ErrorCode.BAD_SERVER_RESPONSE, "Unexpected status code: 500. Run with request.debug = 1 for more info.")],
        ),
    ],
)
def test_statuses(status, want_errors):
    response, errors = bids_of(b"", status)
    assert response is None
    assert [(e.code, e.message) for e in errors] == want_errors


def test_body_that_is_not_json():
    response, errors = bids_of(b"{")
    assert response is None and len(errors) == 1
