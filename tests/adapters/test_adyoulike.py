"""Adyoulike's own rules over its recipe: floors converted to USD (no rate: that error alone), each
imp's tagid its placement (any imp without one fails the request, every such imp reported)."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, RequestInfo
from tests.adapters.helpers import converter, requests_of


def imp(imp_id: str, params: Any, **fields: Any) -> dict[str, Any]:
    return {"id": imp_id, "banner": {"w": 1, "h": 1}, "ext": {"bidder": params}, **fields}


def run(*imps: dict[str, Any]) -> tuple[list[Any], list[str]]:
    adapter = build_adapter("adyoulike", AdapterConfig("adyoulike", "https://example.com/bid"))
    info = RequestInfo("adyoulike", convert_currency=converter("EUR", 2.0))
    _, bodies, errors = requests_of(adapter, {"id": "r", "imp": list(imps)}, info)
    return bodies, [error.message for error in errors]


@pytest.mark.parametrize(
    ("imps", "tagids", "errors"),
    [
        ([imp("a", {"placement": "p"}), imp("b", {"placement": ""})], ["p", None], []),
        ([imp("a", {}), imp("b", {"placement": 5})], None, ["Key path not found", "Value is not a string: 5"]),
        ([imp("a", {}), imp("b", {"placement": "p"}, bidfloor=1, bidfloorcur="JPY")], None,
         ["Currency conversion rate not found: 'JPY' => 'USD'"]),
    ],
)  # fmt: skip
def test_tagid_is_the_placement(imps: list[Any], tagids: list[Any] | None, errors: list[str]) -> None:
    bodies, got = run(*imps)
    assert got == errors
    assert [sent.get("tagid") for sent in bodies[0]["imp"]] == tagids if tagids else bodies == []


def test_floors_in_usd_and_the_request_asks_for_usd() -> None:
    bodies, errors = run(imp("a", {"placement": "p"}, bidfloor=1.5, bidfloorcur="EUR"))
    assert errors == [] and bodies[0]["cur"] == ["USD"]
    assert (bodies[0]["imp"][0]["bidfloor"], bodies[0]["imp"][0]["bidfloorcur"]) == (3.0, "USD")
