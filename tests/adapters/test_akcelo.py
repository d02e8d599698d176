"""Akcelo's rules: each imp's ext as {"akcelo": params}, the publisher's parentAccount the first
imp's siteId, bids typed by mtype, else ext.prebid.type."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, RequestInfo
from tests.adapters.helpers import bids_for, requests_of


def adapter() -> Any:
    return build_adapter("akcelo", AdapterConfig("akcelo", "https://example.com/bid"))


def imp(imp_id: str, ext: Any) -> dict[str, Any]:
    return {"id": imp_id, "banner": {"w": 1, "h": 1}, "ext": ext}


@pytest.mark.parametrize(
    ("imps", "site", "exts", "parent", "errors"),
    [
        ([imp("a", {"bidder": {"siteId": 456}})], None, [{"akcelo": {"siteId": 456}}], "456", []),
        ([imp("a", {"bidder": {"siteId": "s"}})], {"publisher": {"name": "n", "ext": {"x": 1}}},
         [{"akcelo": {"siteId": "s"}}], "s", []),
        ([imp("a", {"bidder": {"siteId": 1}}), imp("b", "bad")], None, [{"akcelo": {"siteId": 1}}, "bad"], "1",
         ["Unsupported imp : b"]),
        ([imp("a", {"bidder": {}})], None, None, None, ["Cannot find valid siteId"]),
        ([imp("a", "bad")], None, None, None, ["Cannot find valid siteId"]),
        ([], None, None, None, ["No valid Imp"]),
    ],
)  # fmt: skip
def test_requests(imps: list[Any], site: Any, exts: Any, parent: Any, errors: list[str]) -> None:
    request = {"id": "r", "imp": imps, **({"site": site} if site else {})}
    _, bodies, got = requests_of(adapter(), request, RequestInfo("akcelo"))
    assert [error.message for error in got] == errors
    if exts is None:
        assert bodies == []
        return
    assert [sent.get("ext") for sent in bodies[0]["imp"]] == exts
    publisher = bodies[0]["site"]["publisher"]
    assert publisher["ext"] == {"prebid": {"parentAccount": parent}}
    assert publisher.get("name") == (site or {}).get("publisher", {}).get("name")


@pytest.mark.parametrize(
    ("bid", "kind", "error"),
    [
        ({"mtype": 2}, "video", None),
        ({"mtype": 3}, None, "unable to get media type 3"),
        ({"ext": {"prebid": {"type": "native"}}}, "native", None),
        ({"ext": {"prebid": {"type": "x"}}}, None, "invalid BidType: x"),
        ({"ext": {}}, None, "missing media type for bid: b"),
        ({}, None, "missing media type for bid: b"),
    ],
)
def test_bid_types(bid: dict[str, Any], kind: str | None, error: str | None) -> None:
    body = {"seatbid": [{"bid": [{"id": "b", "impid": "a", "price": 1, **bid}]}], "cur": "EUR"}
    answer, errors = bids_for(adapter(), {"id": "r", "imp": []}, body)
    assert answer is not None and answer.currency == "USD"
    assert [typed.bid_type for typed in answer.bids] == ([kind] if kind else [])
    assert [e.message for e in errors] == ([error] if error else [])
