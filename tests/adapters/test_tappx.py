"""Tappx's own call over its recipe: the endpoint URL (new-style host or path, query with ts outside
tests), the request ext and floor from the first imp's params, refusals (bid typing and the answer's
wording are recipe steps, tested there)."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.tappx import build
from tests.adapters.helpers import requests_of

ADAPTER = build(AdapterConfig("tappx", "http://{{.Host}}"))
ADAPTER.now = lambda: 1700000000123
INFO = RequestInfo(bidder="tappx")


def imp(imp_id: str = "i", **params: Any) -> dict[str, Any]:
    return {"id": imp_id, "banner": {"w": 1}, "ext": {"bidder": {"tappxkey": "k", "endpoint": "ZZ1PS", **params}}}


@pytest.mark.parametrize(
    ("params", "test", "uri"),
    [
        ({}, 1, "http://ssp.api.tappx.com/rtb/v2/ZZ1PS?tappxkey=k&type_cnn=prebid&v=1.6"),
        ({}, 0, "http://ssp.api.tappx.com/rtb/v2/ZZ1PS?tappxkey=k&ts=1700000000123&type_cnn=prebid&v=1.6"),
        ({"endpoint": "zz123ps"}, 1, "http://zz123ps.pub.tappx.com/rtb/?tappxkey=k&type_cnn=prebid&v=1.6"),
        ({"endpoint": "vz999test"}, 1, "http://vz999test.pub.tappx.com/rtb/?tappxkey=k&type_cnn=prebid&v=1.6"),
        ({"endpoint": "zz12ps"}, 1, "http://ssp.api.tappx.com/rtb/v2/zz12ps?tappxkey=k&type_cnn=prebid&v=1.6"),
        ({"endpoint": "a b?"}, 1, "http://ssp.api.tappx.com/rtb/v2/a%20b%3F?tappxkey=k&type_cnn=prebid&v=1.6"),
        ({"tappxkey": "a&b c"}, 1, "http://ssp.api.tappx.com/rtb/v2/ZZ1PS?tappxkey=a%26b+c&type_cnn=prebid&v=1.6"),
    ],
)
def test_endpoint(params, test, uri):
    calls, _, errors = requests_of(ADAPTER, {"id": "r", "test": test, "imp": [imp(**params)]}, INFO)
    assert errors == []
    assert [c.uri for c in calls] == [uri]


@pytest.mark.parametrize(
    ("params", "ext"),
    [
        ({}, {"bidder": {"tappxkey": "k"}}),
        ({"mktag": "m", "bcid": ["c"], "bcrid": []}, {"bidder": {"tappxkey": "k", "mktag": "m", "bcid": ["c"]}}),
    ],
)
def test_request_ext(params, ext):
    _, bodies, _ = requests_of(ADAPTER, {"id": "r", "test": 1, "ext": {"x": 1}, "imp": [imp(**params)]}, INFO)
    assert bodies[0]["ext"] == ext


def test_floor_goes_to_the_first_imp_only():
    request = {"id": "r", "test": 1, "imp": [imp("a", bidfloor=1.5), imp("b", bidfloor=2)]}
    calls, bodies, _ = requests_of(ADAPTER, request, INFO)
    assert calls[0].imp_ids == ["a", "b"]
    assert [i.get("bidfloor") for i in bodies[0]["imp"]] == [1.5, None]


@pytest.mark.parametrize(
    ("imps", "error"),
    [
        ([], "No impression in the bid request"),
        ([{"id": "i", "ext": "x"}], "Error parsing bidderExt object"),
        ([{"id": "i", "ext": {"bidder": 1}}], "Error parsing tappxExt parameters"),
        ([imp(bidfloor="1")], "Error parsing tappxExt parameters"),
        ([imp(endpoint="")], "Tappx endpoint undefined"),
        ([imp(tappxkey="")], "Tappx key undefined"),
    ],
)
def test_refused(imps, error):
    calls, _, errors = requests_of(ADAPTER, {"id": "r", "imp": imps}, INFO)
    assert calls == []
    assert [(e.message, e.code) for e in errors] == [(error, ErrorCode.BAD_INPUT)]
