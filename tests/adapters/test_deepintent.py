"""Deepintent's own imp over its recipe: tagid from tagId (an imp without one keeps the last one
given, as PBS-Go's shared struct does), the di_prebid display manager, a banner it must have, sized
from its first format when unsized."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from tests.adapters.helpers import requests_of

ENDPOINT = "https://prebid.deepintent.example.com/prebid"


def calls_for(*imps: dict[str, Any]) -> tuple[list[Any], list[Any], list[Any]]:
    adapter = build_adapter("deepintent", AdapterConfig("deepintent", ENDPOINT))
    return requests_of(adapter, {"id": "r", "imp": list(imps)}, RequestInfo(bidder="deepintent"))


def imp(imp_id: str, params: Any, banner: Any) -> dict[str, Any]:
    out = {"id": imp_id, "ext": {"bidder": params}}
    if banner is not None:
        out["banner"] = banner
    return out


FORMATS = {"format": [{"w": 300, "h": 250}, {"w": 728, "h": 90}]}


@pytest.mark.parametrize(
    ("banner", "want"),
    [
        (FORMATS, {**FORMATS, "w": 300, "h": 250}),
        ({**FORMATS, "w": 1}, {**FORMATS, "w": 1}),  # one of w, h set: left as it is
        ({"w": 5, "h": 6}, {"w": 5, "h": 6}),
    ],
)
def test_banner_sized_and_display_manager_set(banner, want):
    _, bodies, errors = calls_for(imp("a", {"tagId": "16"}, banner))
    assert errors == []
    sent = bodies[0]["imp"][0]
    assert (sent["banner"], sent["tagid"], sent["displaymanager"], sent["displaymanagerver"]) == (
        want,
        "16",
        "di_prebid",
        "2.0.0",
    )


@pytest.mark.parametrize(
    ("banner", "error"),
    [
        (None, "We need a Banner Object in the request"),
        ({"format": []}, "At least one size is required"),
    ],
)
def test_an_imp_without_a_usable_banner_is_dropped(banner, error):
    calls, _, errors = calls_for(imp("a", {"tagId": "1"}, banner), imp("b", {"tagId": "2"}, FORMATS))
    assert len(calls) == 1
    assert [(e.message, e.code) for e in errors] == [(error, ErrorCode.BAD_INPUT)]


def test_an_imp_without_tag_id_keeps_the_last_one():
    _, bodies, _ = calls_for(imp("a", {"tagId": "7"}, FORMATS), imp("b", {}, FORMATS), imp("c", {"tagId": ""}, FORMATS))
    assert [body["imp"][0].get("tagid") for body in bodies] == ["7", "7", None]
