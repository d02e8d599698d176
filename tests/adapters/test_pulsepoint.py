"""PulsePoint's own call over its recipe: ``cp``/``ct`` as jsonutil.StringInt and the publisher id (bid
typing and the answer's wording are recipe steps, tested there)."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.common import JsonShapeError
from hbserver.adapters.pulsepoint import build, string_int
from tests.adapters.helpers import requests_of

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
