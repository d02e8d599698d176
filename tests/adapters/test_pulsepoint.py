"""PulsePoint adapter: ``cp``/``ct`` as jsonutil.StringInt, the publisher id, bid typing, answer wording."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.common import JsonShapeError
from hbserver.adapters.pulsepoint import build, string_int
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "http://bidder.pulsepoint.com"
ADAPTER = build(AdapterConfig("pulsepoint", ENDPOINT))
INFO = RequestInfo(bidder="pulsepoint")


def imp(imp_id: str, params: Any, media: str = "banner") -> dict[str, Any]:
    return {"id": imp_id, media: {}, "ext": {"bidder": params}}


@pytest.mark.parametrize(
    ("value", "want"),
    [(12, 12), ("12", 12), ("-7", -7), ("", 0), ("-", 0), ("007", 7), (-(2**63), -(2**63))],
)
def test_string_int(value, want):
    assert string_int(value, "x") == want


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("ab1", "can't find its end"),
        ("+1", "can't find its end"),
        (1.5, "can't find its end"),
        (True, "can't find its end"),
        (None, "can't find its end"),
        ("9" * 30, "overflowed"),
        (2**63, "overflowed"),
    ],
)
def test_string_int_refused(value, problem):
    with pytest.raises(JsonShapeError, match=problem):
        string_int(value, "x")


@pytest.mark.parametrize(
    ("imps", "want_tagids", "want_pub", "want_errors"),
    [
        ([imp("a", {"cp": 1, "ct": "2"})], ["2"], "1", []),
        ([imp("a", {"ct": 2}), imp("b", {"cp": 5, "ct": 3})], ["3"], "5", ["param not found - pubID"]),
        ([imp("a", {"cp": 5}), imp("b", {"ct": 3})], ["3"], "5", ["param not found - tagID"]),
        ([imp("a", {"CP": 5, "CT": 6})], ["6"], "5", []),
        ([imp("a", {"cp": 5, "ct": "x"})], [], None,
         ["cannot unmarshal openrtb_ext.ExtImpPulsePoint.TagID: "
          "Value looks like Number/Boolean/None, but can't find its end: ',' or '}' symbol"]),
    ],
)  # fmt: skip
def test_tagid_and_publisher(imps, want_tagids, want_pub, want_errors):
    request = {"id": "r", "imp": imps, "site": {"page": "p", "publisher": {"id": "old", "name": "n"}}, "app": {}}
    calls, bodies, errors = requests_of(ADAPTER, request, INFO)
    assert [e.message for e in errors] == want_errors
    assert all(e.code == ErrorCode.BAD_INPUT for e in errors)
    assert [i["tagid"] for body in bodies for i in body["imp"]] == want_tagids
    if want_pub is not None:
        assert bodies[0]["site"]["publisher"] == {"id": want_pub, "name": "n"}
        assert bodies[0]["app"] == {}
    else:
        assert calls == []


def test_app_publisher_when_no_site():
    _, bodies, _ = requests_of(ADAPTER, {"id": "r", "imp": [imp("a", {"cp": 9, "ct": 1})], "app": {"id": "x"}}, INFO)
    assert bodies[0]["app"] == {"id": "x", "publisher": {"id": "9"}}


@pytest.mark.parametrize(
    ("media", "impid", "want"),
    [("banner", "a", ["banner"]), ("video", "a", ["video"]), ("audio", "a", ["audio"]), ("native", "a", ["native"]),
     ("banner", "zz", [])],
)  # fmt: skip
def test_bid_type_from_the_imp(media, impid, want):
    request = {"id": "r", "imp": [imp("a", {}, media)]}
    answer = {"id": "r", "cur": "EUR", "seatbid": [{"bid": [{"id": "b", "impid": impid, "price": 1}]}]}
    response, errors = bids_for(ADAPTER, request, answer)
    assert errors == [] and response is not None and response.currency == "USD"
    assert [typed.bid_type for typed in response.bids] == want


@pytest.mark.parametrize(
    ("status", "want", "code"),
    [
        (400, "Bad user input: HTTP status 400", ErrorCode.BAD_INPUT),
        (503, "Bad server response: HTTP status 503", ErrorCode.BAD_SERVER_RESPONSE),
    ],
)
def test_failed_answer(status, want, code):
    response, errors = bids_for(ADAPTER, {"imp": []}, b"", status=status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == [(want, code)]
