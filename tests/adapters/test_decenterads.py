"""DecenterAds' own reading of the imp over its recipe: the ext's bidder member, whatever JSON it
is, becomes the whole ext; an ext that is no object or lacks bidder drops the imp."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from tests.adapters.helpers import requests_of

ENDPOINT = "http://decenterads.example.com/?c=o&m=ortb"
ABSENT = object()


def calls_for(ext: Any) -> tuple[list[Any], list[Any], list[Any]]:
    imp: dict[str, Any] = {"id": "a", "banner": {"w": 1, "h": 1}}
    if ext is not ABSENT:
        imp["ext"] = ext
    adapter = build_adapter("decenterads", AdapterConfig("decenterads", ENDPOINT))
    return requests_of(adapter, {"id": "r", "imp": [imp]}, RequestInfo(bidder="decenterads"))


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"bidder": {"placementId": "1"}, "prebid": 5}, {"placementId": "1"}),  # prebid unchecked
        ({"bidder": "text"}, "text"),
        ({"bidder": [1]}, [1]),
    ],
)
def test_the_bidder_member_becomes_the_ext(ext, want):
    calls, bodies, errors = calls_for(ext)
    assert errors == []
    assert [call.uri for call in calls] == [ENDPOINT]
    assert bodies[0]["imp"][0]["ext"] == want


@pytest.mark.parametrize(
    ("ext", "error"),
    [
        ({}, "bidder parameters required"),
        ({"Bidder": {}}, "bidder parameters required"),  # map keys match exactly
        ("", 'unable to parse bidder parameers: expect { or n, but found "'),
        (ABSENT, "unable to parse bidder parameers: expect { or n, but found \x00"),
    ],
)
def test_an_ext_without_bidder_drops_the_imp(ext, error):
    calls, _, errors = calls_for(ext)
    assert calls == []
    assert [(e.message, e.code) for e in errors] == [(error, ErrorCode.UNKNOWN)]
