"""Pangle adapter: the ad type of an imp, the ext Pangle gets, the type of a bid."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.common import JsonShapeError
from hbserver.adapters.pangle import ad_type, bid_type, build
from tests.adapters.helpers import requests_of

INFO = RequestInfo(bidder="pangle")
REWARDED = {"prebid": {"is_rewarded_inventory": 1}}


@pytest.mark.parametrize(
    ("imp", "want"),
    [
        ({"video": {}, "ext": REWARDED}, 7),
        ({"video": {}, "instl": 1}, 8),
        ({"video": {}, "banner": {}}, 1),  # a plain video with a banner: the banner's type
        ({"banner": {}, "instl": 1}, 2),
        ({"native": {"request": "{}"}}, 5),
        ({"native": {"request": ""}}, None),
        ({"video": {}}, None),
        ({"audio": {}}, None),
    ],
)
def test_ad_type(imp: dict[str, Any], want: int | None) -> None:
    assert ad_type(imp) == want


def run(params: dict[str, Any], **ext: Any) -> tuple[list[Any], list[Any], list[str]]:
    imp = {"id": "a", "banner": {"w": 1, "h": 1}, "ext": {"bidder": params, **ext}}
    calls, bodies, errors = requests_of(build(AdapterConfig("pangle", "https://p.example")), {"imp": [imp]}, INFO)
    return calls, bodies, [error.message for error in errors]


def test_the_ext_pangle_gets() -> None:
    calls, bodies, errors = run({"token": "t", "appid": "a", "placementid": "p"}, prebid={"adunitcode": ""})
    assert errors == []
    assert calls[0].headers["TOKEN"] == "t"
    assert bodies[0]["imp"][0]["ext"] == {
        "prebid": {},
        "bidder": {"token": "t", "appid": "a", "placementid": "p"},
        "adtype": 1,
        "is_prebid": True,
        "networkids": {"appid": "a", "placementid": "p"},
    }


def test_one_network_id_alone_drops_the_imp() -> None:
    assert run({"token": "t", "appid": "a"})[2] == ["only one of appid or placementid is provided"]


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"pangle": {"adtype": 2}}, "banner"),
        ({"pangle": {"adtype": 8}}, "video"),
        ({"pangle": {"adtype": 3}}, "unrecognized adtype in response"),
        ({"pangle": {}}, "missing pangleExt/adtype in bid ext"),
        ({}, "missing pangleExt/adtype in bid ext"),
        ({"pangle": {"adtype": "1"}}, "invalid bid ext"),
        (None, "invalid bid ext"),
    ],
)
def test_bid_type(ext: Any, want: str) -> None:
    bid = {"id": "b"} if ext is None else {"id": "b", "ext": ext}
    try:
        got = bid_type(bid)
    except JsonShapeError as exc:
        got = str(exc)
    assert got == want
