"""Adtarget adapter: Adtelligent's with its own names (the ext's key, the params struct, the error
words) and a 400 answer that is bad input."""

from __future__ import annotations

import pytest

from hbserver.adapters.adtarget import build
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "http://ghb.console.adtarget.com.tr/pbs/ortb"


def adapter():
    return build(AdapterConfig("adtarget", ENDPOINT))


def test_calls_by_source_with_the_adtarget_ext():
    imps = [
        {"id": "a", "banner": {}, "ext": {"bidder": {"aid": 5, "bidFloor": 1.5}}},
        {"id": "b", "video": {"mimes": ["v"]}, "ext": {"bidder": {"aid": "6", "siteId": 2}}},
    ]
    calls, bodies, errors = requests_of(adapter(), {"id": "r", "imp": imps}, RequestInfo(bidder="adtarget"))
    assert errors == []
    assert [(c.uri, c.imp_ids) for c in calls] == [(ENDPOINT + "?aid=5", ["a"]), (ENDPOINT + "?aid=6", ["b"])]
    assert [body["imp"][0]["ext"] for body in bodies] == [
        {"adtarget": {"aid": 5, "bidFloor": 1.5}},
        {"adtarget": {"aid": 6, "siteId": 2}},
    ]
    assert bodies[0]["imp"][0]["bidfloor"] == 1.5


@pytest.mark.parametrize(
    ("imp", "want"),
    [
        ({"id": "x", "native": {}, "ext": {}}, "ignoring imp id=x, Adtarget supports only Video and Banner"),
        (
            {"id": "x", "banner": {}, "ext": {"bidder": {"aid": True}}},
            "ignoring imp id=x, error while decoding impExt, err: cannot unmarshal openrtb_ext.ExtImpAdtarget.SourceId",
        ),
        (
            {"id": "x", "banner": {}, "ext": {"bidder": {"aid": "x"}}},
            'ignoring imp id=x, error while encoding impExt, err: json: invalid number literal "x"',
        ),
    ],
)
def test_bad_imps_in_adtargets_words(imp, want):
    calls, _, errors = requests_of(adapter(), {"imp": [imp]}, RequestInfo(bidder="adtarget"))
    assert calls == []
    assert [e.code for e in errors] == [ErrorCode.BAD_INPUT]
    assert errors[0].message.startswith(want)


@pytest.mark.parametrize(
    ("status", "want"),
    [
        (400, [(ErrorCode.BAD_INPUT, "Unexpected status code: 400. Run with request.debug = 1 for more info")]),
        (500, [(ErrorCode.BAD_SERVER_RESPONSE, "error while decoding response, err: expect { or n, but found \x00")]),
    ],
)
def test_failed_answers(status, want):
    response, errors = bids_for(adapter(), {"imp": [{"id": "a", "banner": {}}]}, b"", status)
    assert response is None
    assert [(e.code, e.message) for e in errors] == want
