"""Currency: rate lookup (direct, inverse, intermediate), request/server rate aggregation, seat
currency choice (V56-V58) and the request-rate validation texts."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.auction.bids.currency import (
    AggregateRates,
    ConstantRates,
    ConversionError,
    RateTable,
    build_rates,
    choose_currency,
    convert,
    validate_request_currency,
    validate_request_rates,
)

GO_INTERMEDIATE = {"USD": {"SEK": 10.23842, "NOK": 10.47089}, "EUR": {"THB": 35.23842, "ZAR": 18.47089}}


def not_found(f: str, t: str) -> str:
    return f"Currency conversion rate not found: '{f}' => '{t}'"


# (id, request.cur, bid currency, request rates, usepbsrates, server rates, bid price,
#  expected (seat currency, price) or the exact error text)
CASES: list[tuple[str, list[str] | None, str, Any, bool | None, Any, float, tuple[str, float] | str]] = [
    # Reference vectors.
    ("V56", ["MXN"], "USD", None, None, {"USD": {"MXN": 2.0}}, 1.0, ("MXN", 2.0)),
    ("V57", None, "MXN", {"USD": {"MXN": 10}}, True, {"USD": {"MXN": 8}}, 20.0, ("USD", 2.0)),
    ("V58", ["MXN"], "USD", None, None, {"USD": {"GBP": 0.8}}, 1.0, not_found("USD", "MXN")),
    # Lookup rules.
    ("same-currency-no-rates", ["EUR"], "EUR", None, None, {}, 3.0, ("EUR", 3.0)),
    ("same-currency-server-not-loaded", None, "USD", None, None, None, 3.0, ("USD", 3.0)),
    ("bid-currency-defaults-to-usd", None, "", None, None, None, 3.0, ("USD", 3.0)),
    ("direct", ["MXN"], "USD", {"USD": {"MXN": 2.5}}, False, None, 2.0, ("MXN", 5.0)),
    ("inverse", ["USD"], "MXN", {"USD": {"MXN": 4.0}}, False, None, 2.0, ("USD", 0.5)),
    (
        "direct-wins-over-inverse",
        ["MXN"],
        "USD",
        {"USD": {"MXN": 2.0}, "MXN": {"USD": 0.25}},
        False,
        None,
        1.0,
        ("MXN", 2.0),
    ),
    ("intermediate-usd", ["SEK"], "NOK", GO_INTERMEDIATE, False, None, 1.0, ("SEK", 0.9777984488424574)),
    ("intermediate-usd-reverse", ["NOK"], "SEK", GO_INTERMEDIATE, False, None, 1.0, ("NOK", 1 / 0.9777984488424574)),
    ("intermediate-eur", ["ZAR"], "THB", GO_INTERMEDIATE, False, None, 1.0, ("ZAR", 0.5241690745498806)),
    ("intermediate-eur-reverse", ["THB"], "ZAR", GO_INTERMEDIATE, False, None, 1.0, ("THB", 1 / 0.5241690745498806)),
    ("intermediate-needs-one-table", ["ZAR"], "NOK", GO_INTERMEDIATE, False, None, 1.0, not_found("NOK", "ZAR")),
    ("case-insensitive-codes", ["mxn"], "usd", {"Usd": {"mXn": 2.0}}, False, None, 1.0, ("mxn", 2.0)),
    ("case-error-text-upper", ["mxn"], "usd", {}, False, None, 1.0, not_found("USD", "MXN")),
    # Rate sources.
    (
        "usepbsrates-false-ignores-server",
        ["MXN"],
        "USD",
        {"USD": {"EUR": 0.9}},
        False,
        {"USD": {"MXN": 8}},
        1.0,
        not_found("USD", "MXN"),
    ),
    (
        "usepbsrates-unset-falls-back-to-server",
        ["MXN"],
        "USD",
        {"USD": {"EUR": 0.9}},
        None,
        {"USD": {"MXN": 8}},
        1.0,
        ("MXN", 8.0),
    ),
    ("request-rate-wins", ["MXN"], "USD", {"USD": {"MXN": 10}}, None, {"USD": {"MXN": 8}}, 1.0, ("MXN", 10.0)),
    ("empty-request-rates-use-server", ["MXN"], "USD", {}, True, {"USD": {"MXN": 8}}, 1.0, ("MXN", 8.0)),
    (
        "server-not-loaded",
        ["MXN"],
        "USD",
        None,
        None,
        None,
        1.0,
        "Currency conversion rate not found: 'USD' => 'MXN'",
    ),
    # request.cur: the first currency with a rate wins; the error names the last one tried.
    (
        "first-cur-with-rate",
        ["JPY", "EUR", "MXN"],
        "USD",
        None,
        None,
        {"USD": {"EUR": 0.5, "MXN": 8}},
        2.0,
        ("EUR", 1.0),
    ),
    ("error-names-last-cur", ["JPY", "MXN"], "USD", None, None, {"USD": {"EUR": 0.5}}, 2.0, not_found("USD", "MXN")),
    ("empty-cur-defaults-to-usd", [], "EUR", None, None, {"EUR": {"USD": 2.0}}, 2.0, ("USD", 4.0)),
]


@pytest.mark.parametrize(
    ("request_cur", "bid_cur", "request_rates", "use_pbs", "server_rates", "price", "expected"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_currency(
    request_cur: list[str] | None,
    bid_cur: str,
    request_rates: Any,
    use_pbs: bool | None,
    server_rates: Any,
    price: float,
    expected: tuple[str, float] | str,
) -> None:
    converter = build_rates(request_rates, use_pbs, server_rates)
    if isinstance(expected, str):
        with pytest.raises(ConversionError) as info:
            choose_currency(request_cur, bid_cur, converter)
        assert str(info.value) == expected
    else:
        currency, rate = choose_currency(request_cur, bid_cur, converter)
        assert (currency, price * rate) == expected


def test_convert_with_table_or_converter() -> None:
    assert convert(3.0, "usd", "MXN", {"USD": {"MXN": 2.0}}) == 6.0
    assert convert(3.0, "EUR", "EUR", {}) == 3.0
    assert RateTable.of({"USD": {"MXN": 2.0}}).convert(3.0, "MXN", "USD") == 1.5
    with pytest.raises(ConversionError, match=r"^Currency conversion rate not found: 'USD' => 'GBP'$"):
        convert(1.0, "USD", "GBP", RateTable.of({"USD": {"MXN": 2.0}}))


def test_build_rates_shapes() -> None:
    server = RateTable.of({"USD": {"MXN": 8}})
    assert build_rates(None, None, server) is server
    assert isinstance(build_rates(None, None, None), ConstantRates)
    aggregate = build_rates({"USD": {"MXN": 10}}, None, server)
    assert isinstance(aggregate, AggregateRates)
    assert aggregate.convert(1.0, "USD", "MXN") == 10.0


def test_rate_table_drops_unusable_rates() -> None:
    table = RateTable.of({"usd": {"mxn": 0, "eur": -1, "gbp": 0.8}})
    assert table.conversions == {"USD": {"GBP": 0.8}}
    with pytest.raises(ConversionError):
        table.get_rate("MXN", "USD")


PATH = "request.ext.prebid.currency.rates"

# (id, rates, expected error text or None)
VALIDATIONS: list[tuple[str, Any, str | None]] = [
    ("absent", None, None),
    ("valid", {"USD": {"MXN": 2, "EUR": 0.9}}, None),
    ("empty", {}, None),
    ("not-object", [1], f"{PATH} must be an object"),
    ("base-not-object", {"USD": 2}, f"{PATH}.USD must be an object"),
    ("rate-zero", {"USD": {"MXN": 0}}, f"{PATH}.USD.MXN must be a positive number"),
    ("rate-negative", {"USD": {"MXN": -2}}, f"{PATH}.USD.MXN must be a positive number"),
    ("rate-string", {"USD": {"MXN": "2"}}, f"{PATH}.USD.MXN must be a positive number"),
    ("rate-boolean", {"USD": {"MXN": True}}, f"{PATH}.USD.MXN must be a positive number"),
    ("rate-null", {"USD": {"MXN": None}}, f"{PATH}.USD.MXN must be a positive number"),
    ("bad-base-code", {"USDX": {"MXN": 2}}, "currency code USDX is not recognized or malformed"),
    ("bad-quote-code", {"USD": {"M1N": 2}}, "currency code M1N is not recognized or malformed"),
]


@pytest.mark.parametrize(("rates", "expected"), [v[1:] for v in VALIDATIONS], ids=[v[0] for v in VALIDATIONS])
def test_validate_request_rates(rates: Any, expected: str | None) -> None:
    assert validate_request_rates(rates) == expected


def test_validate_request_currency() -> None:
    prefix = "request.ext.prebid.currency"
    assert validate_request_currency(None) is None
    assert validate_request_currency({"rates": {"USD": {"MXN": 2}}, "usepbsrates": False}) is None
    assert validate_request_currency("USD") == f"{prefix} must be an object"
    assert validate_request_currency({"usepbsrates": "no"}) == f"{prefix}.usepbsrates must be a boolean"
    bad_rate = {"rates": {"USD": {"MXN": -1}}}
    assert validate_request_currency(bad_rate) == f"{prefix}.rates.USD.MXN must be a positive number"
