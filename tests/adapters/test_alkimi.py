"""Alkimi's imps: the params struct written back into ext.bidder with adUnitCode the imp's id, the
floor from the params unless the imp has one with a currency, instl and exp from the params; any
imp that does not decode stops the request."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, RequestInfo
from tests.adapters.helpers import requests_of

ZERO = {"token": "", "bidFloor": 0, "instl": 0, "exp": 0}


def run(*imps: dict[str, Any]) -> tuple[list[Any], list[str]]:
    adapter = build_adapter("alkimi", AdapterConfig("alkimi", "https://example.com/bid"))
    _, bodies, errors = requests_of(adapter, {"id": "r", "imp": list(imps)}, RequestInfo("alkimi"))
    return bodies, [error.message for error in errors]


@pytest.mark.parametrize(
    ("imp", "want"),
    [
        ({"ext": {"bidder": {"token": "t", "bidFloor": 0.5, "instl": 1, "exp": 30}, "tid": "x"}},
         {"bidfloor": 0.5, "instl": 1, "exp": 30,
          "ext": {"bidder": {"token": "t", "bidFloor": 0.5, "instl": 1, "exp": 30, "adUnitCode": "a"}, "tid": "x"}}),
        ({"bidfloor": 2, "bidfloorcur": "EUR", "ext": {"bidder": {"bidFloor": 0.5}}},
         {"bidfloor": 2, "bidfloorcur": "EUR", "ext": {"bidder": {**ZERO, "bidFloor": 0.5, "adUnitCode": "a"}}}),
        ({"bidfloor": 2, "instl": 1, "ext": {"bidder": None}},
         {"ext": {"bidder": {**ZERO, "adUnitCode": "a"}}}),
    ],
)  # fmt: skip
def test_imp_rewritten(imp: dict[str, Any], want: dict[str, Any]) -> None:
    bodies, errors = run({"id": "a", "banner": {"w": 1, "h": 1}, **imp})
    assert errors == []
    assert bodies[0]["imp"][0] == {"id": "a", "banner": {"w": 1, "h": 1}, **want}


def test_any_bad_imp_stops_the_request() -> None:
    good = {"id": "a", "banner": {}, "ext": {"bidder": {}}}
    bodies, errors = run(good, {"id": "b", "banner": {}, "ext": {"bidder": {"instl": "x"}}}, {"id": "c"})
    assert bodies == [] and len(errors) == 2


def test_endpoint_required() -> None:
    with pytest.raises(ValueError):
        build_adapter("alkimi", AdapterConfig("alkimi", ""))
