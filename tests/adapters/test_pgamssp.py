"""PGAM SSP adapter: a floor is converted to USD when it can be, else sent as it came."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.pgamssp import build
from tests.adapters.helpers import converter, requests_of

INFO = RequestInfo(bidder="pgamssp", convert_currency=converter("EUR", 2.0))


@pytest.mark.parametrize(
    ("floor", "want"),
    [
        ({"bidfloor": 1.5, "bidfloorcur": "EUR"}, {"bidfloor": 3.0, "bidfloorcur": "USD"}),
        ({"bidfloor": 1.5, "bidfloorcur": "GBP"}, {"bidfloor": 1.5, "bidfloorcur": "GBP"}),  # no rate: kept
        ({"bidfloor": 1.5, "bidfloorcur": "usd"}, {"bidfloor": 1.5, "bidfloorcur": "usd"}),
        ({"bidfloor": 1.5}, {"bidfloor": 1.5, "bidfloorcur": None}),
    ],
    ids=["converted", "no-rate", "usd", "no-currency"],
)
def test_floor(floor: dict[str, Any], want: dict[str, Any]) -> None:
    imp = {"id": "a", "banner": {"w": 1, "h": 1}, "ext": {"bidder": {"placementId": "p"}}, **floor}
    calls, bodies, errors = requests_of(build(AdapterConfig("pgamssp", "https://p.example")), {"imp": [imp]}, INFO)
    assert errors == []
    assert len(calls) == 1
    sent = bodies[0]["imp"][0]
    assert {key: sent.get(key) for key in want} == want
    assert sent["ext"] == {"bidder": {"type": "publisher", "placementId": "p"}}
