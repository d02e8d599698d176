"""Ad Up Technology's own rules over its recipe: the builder requires a valid target currency in
extra_info, and positive floors in another currency are converted into it (through USD when no
direct rate is known) before the one call goes."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, ConversionError, RequestInfo
from tests.adapters.helpers import requests_of

ENDPOINT = "https://rtb.example.com/bid"
RATES = {("AUD", "USD"): 0.5, ("USD", "EUR"): 0.9, ("GBP", "EUR"): 1.2}


def convert(amount: float, source: str, target: str) -> float:
    if len(source) != 3:
        raise ConversionError("currency: tag is not well-formed")
    if source == target:
        return amount
    if (source, target) in RATES:
        return amount * RATES[source, target]
    raise ConversionError(f"Currency conversion rate not found: '{source}' => '{target}'")


def adapter(extra_info: str = '{"target_currency": "eur"}') -> Any:
    return build_adapter("aduptech", AdapterConfig("aduptech", ENDPOINT, {"extra_info": extra_info}))


@pytest.mark.parametrize(
    ("extra_info", "problem"),
    [
        ("", "TargetCurrency is empty"),
        ("{}", "TargetCurrency is empty"),
        ('{"target_currency": "EURO"}', "invalid TargetCurrency EURO"),
        ('{"target_currency": "XYZ"}', "invalid TargetCurrency XYZ"),
        ("{bad", "invalid extra info"),
    ],
)
def test_builder_needs_a_target_currency(extra_info: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        adapter(extra_info)


def imp(floor: Any = None, currency: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"id": "a", "banner": {"w": 1, "h": 1}, "ext": {"bidder": {"publisher": "p"}}}
    if floor is not None:
        out["bidfloor"] = floor
    if currency is not None:
        out["bidfloorcur"] = currency
    return out


@pytest.mark.parametrize(
    ("given", "floor", "currency", "error"),
    [
        (imp(), None, None, None),
        (imp(2.0), 2.0, None, None),  # no currency: left as it is
        (imp(2.0, "EUR"), 2.0, "EUR", None),
        (imp(2.0, "eur"), 2.0, "eur", None),  # the target in lower case counts
        (imp(0, "GBP"), None, "GBP", None),  # no positive floor
        (imp(2.0, "GBP"), 2.4, "EUR", None),  # direct rate
        (imp(2.0, "AUD"), 0.9, "EUR", None),  # through USD
        (imp(2.0, "JPY"), None, None, "from 'JPY' to 'EUR'. Error converting from 'JPY' to 'USD'"),
        (imp(2.0, "INVALID"), None, None, "currency: tag is not well-formed"),
    ],
)
def test_floors_go_in_the_target_currency(given, floor, currency, error) -> None:
    calls, bodies, errors = requests_of(
        adapter(), {"id": "r", "imp": [given]}, RequestInfo("aduptech", convert_currency=convert)
    )
    if error is not None:
        assert calls == [] and len(errors) == 1 and error in errors[0].message
        return
    assert errors == [] and calls[0].uri == ENDPOINT
    sent = bodies[0]["imp"][0]
    assert sent.get("bidfloor") == pytest.approx(floor) if floor is not None else "bidfloor" not in sent
    assert sent.get("bidfloorcur") == currency
