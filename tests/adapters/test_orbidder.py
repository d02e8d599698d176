"""Orbidder adapter: every floor priced in EUR before the params are read."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ConversionError, RequestInfo
from hbserver.adapters.orbidder import build
from tests.adapters.helpers import requests_of

ENDPOINT = "https://orbidder.example/bid"


def to_eur(amount: float, source: str, target: str) -> float:
    if (source, target) == ("USD", "EUR"):
        return amount * 0.5
    raise ConversionError(f"Currency conversion rate not found: '{source}' => '{target}'")


INFO = RequestInfo(bidder="orbidder", convert_currency=to_eur)
PARAMS = {"accountId": "a", "placementId": "p"}


def imp(imp_id: str, **fields: Any) -> dict[str, Any]:
    return {"id": imp_id, "banner": {"w": 1, "h": 1}, "ext": {"bidder": PARAMS}, **fields}


@pytest.mark.parametrize(
    ("floor", "want"),
    [
        ({}, {"bidfloorcur": "EUR"}),
        ({"bidfloor": 2, "bidfloorcur": "USD"}, {"bidfloor": 1.0, "bidfloorcur": "EUR"}),
        ({"bidfloor": 2, "bidfloorcur": "eur"}, {"bidfloor": 2, "bidfloorcur": "EUR"}),
        ({"bidfloor": 2}, {"bidfloor": 2, "bidfloorcur": "EUR"}),  # no currency: taken as EUR
        ({"bidfloor": 0, "bidfloorcur": "GBP"}, {"bidfloor": 0, "bidfloorcur": "EUR"}),
    ],
    ids=["none", "usd", "eur-lower", "no-currency", "zero"],
)
def test_floor_in_eur(floor: dict[str, Any], want: dict[str, Any]) -> None:
    _calls, bodies, errors = requests_of(build(AdapterConfig("orbidder", ENDPOINT)), {"imp": [imp("a", **floor)]}, INFO)
    assert errors == []
    sent = bodies[0]["imp"][0]
    assert {key: sent.get(key) for key in want} == want


def test_an_imp_without_a_rate_is_dropped_with_the_conversion_error() -> None:
    request = {"imp": [imp("a", bidfloor=1, bidfloorcur="GBP"), imp("b"), imp("c", ext={"bidder": []})]}
    calls, _bodies, errors = requests_of(build(AdapterConfig("orbidder", ENDPOINT)), request, INFO)
    assert [call.imp_ids for call in calls] == [["b"]]
    assert errors[0].message == "Currency conversion rate not found: 'GBP' => 'EUR'"
    assert errors[1].message.startswith("Wrong orbidder bidder ext: ")
