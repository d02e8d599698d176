"""Revcontent adapter: an app name or a site domain required, bids typed by their markup."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.revcontent import build, markup_type
from tests.adapters.helpers import bids_for, requests_of

INFO = RequestInfo(bidder="revcontent")
ADAPTER = build(AdapterConfig("revcontent", "https://r.example/rtb"))
IMP = {"id": "a", "native": {"request": "{}"}, "ext": {"bidder": {"size": {"width": 1}}}}


@pytest.mark.parametrize(
    ("fields", "calls"),
    [
        ({"app": {"name": "n"}}, 1),
        ({"site": {"domain": "d"}}, 1),
        ({"app": {"name": ""}, "site": {"domain": "d"}}, 1),
        ({"app": {"bundle": "b"}}, 0),
        ({"site": {"page": "p"}}, 0),
        ({}, 0),
    ],
)
def test_an_app_name_or_a_site_domain(fields: dict[str, Any], calls: int) -> None:
    made, _, errors = requests_of(ADAPTER, {"id": "r", "imp": [IMP], **fields}, INFO)
    assert len(made) == calls
    assert [e.message for e in errors] == (
        [] if calls else ["Impression is missing app name or site domain, and must contain one."]
    )


@pytest.mark.parametrize(
    ("adm", "want"), [("<div>", "banner"), ('{"ver":"1.1"}', "native"), ("", "native"), (None, "native")]
)
def test_markup_type(adm: Any, want: str) -> None:
    assert markup_type({} if adm is None else {"adm": adm}) == want


def test_the_answer() -> None:
    body = {"seatbid": [{"bid": [{"id": "x", "impid": "a", "price": 1, "adm": "<a>"}]}]}
    response, errors = bids_for(ADAPTER, {"id": "r", "site": {"domain": "d"}, "imp": [IMP]}, body)
    assert errors == []
    assert (response.currency, [b.bid_type for b in response.bids]) == ("USD", ["banner"])
