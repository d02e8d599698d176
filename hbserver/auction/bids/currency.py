"""Currency conversion of bid prices (PBS-Go ``currency`` package and ``requestBid``).

A rate table is ``{base: {quote: rate}}`` where ``1 base = rate quote``, the shape of the Prebid
currency file and of ``ext.prebid.currency.rates``. A rate from ``FROM`` to ``TO`` is looked up as
PBS-Go ``Rates.GetRate`` does: same currency = 1, then direct ``FROM→TO``, then the inverse
``1/(TO→FROM)``, then an intermediate ``rate(TO)/rate(FROM)`` inside the first base table holding
both. Unlike PBS-Go, codes are compared case-insensitively (the table's and the caller's codes
are upper-cased), and non-positive rates are dropped when a table is built so nothing divides by 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

# One exception class for "no rate" everywhere: adapters and the bid pipeline catch this one.
from hbserver.adapters.base import ConversionError
from hbserver.auction.common.iso4217 import iso4217_problem

__all__ = [
    "DEFAULT_CURRENCY",
    "AggregateRates",
    "ConstantRates",
    "ConversionError",
    "Converter",
    "RateTable",
    "Rates",
    "build_rates",
    "choose_currency",
    "convert",
    "validate_request_currency",
    "validate_request_rates",
]

DEFAULT_CURRENCY = "USD"

Rates = Mapping[str, Mapping[str, float]]


# Codes seen to parse, as spelled (a bid's currency is checked on every conversion).
_CHECKED: set[str] = set()
_CHECKED_MAX = 4096


def _check_codes(from_cur: str, to_cur: str) -> None:
    """PBS-Go's converters parse both codes first (x/text ``currency.ParseISO``), so an unknown code
    fails with that library's text even when both codes are the same."""
    if from_cur in _CHECKED and to_cur in _CHECKED:
        return
    problem = iso4217_problem(from_cur) or iso4217_problem(to_cur)
    if problem is not None:
        raise ConversionError(problem)
    if len(_CHECKED) < _CHECKED_MAX:  # bounded: 300 codes in at most 8 spellings each
        _CHECKED.update((from_cur, to_cur))


def _not_found(from_cur: str, to_cur: str) -> ConversionError:
    return ConversionError(f"Currency conversion rate not found: '{from_cur}' => '{to_cur}'")


class Converter:
    """Something that knows rates (PBS-Go ``currency.Conversions``)."""

    __slots__ = ()

    def get_rate(self, from_cur: str, to_cur: str) -> float:
        """The factor taking an amount in ``from_cur`` to ``to_cur``; raises ConversionError."""
        raise NotImplementedError

    def convert(self, amount: float, from_cur: str, to_cur: str) -> float:
        """``amount`` in ``to_cur``; the signature adapters expect for ``convert_currency``."""
        return amount * self.get_rate(from_cur, to_cur)


@dataclass(frozen=True, slots=True)
class RateTable(Converter):
    """A fixed rate table (PBS-Go ``currency.Rates``); build it with ``RateTable.of``."""

    conversions: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    @classmethod
    def of(cls, rates: Rates | None) -> RateTable:
        """Upper-case every code and keep only finite positive rates."""
        table: dict[str, dict[str, float]] = {}
        for base, quotes in (rates or {}).items():
            row = table.setdefault(base.upper(), {})
            for quote, rate in quotes.items():
                value = float(rate)
                if value > 0 and math.isfinite(value):
                    row[quote.upper()] = value
        return cls(table)

    def get_rate(self, from_cur: str, to_cur: str) -> float:
        f = from_cur.upper()
        t = to_cur.upper()
        if f == t == DEFAULT_CURRENCY:
            return 1.0
        _check_codes(from_cur, to_cur)
        if f == t:
            return 1.0
        conversions = self.conversions
        row = conversions.get(f)
        if row is not None and t in row:
            return row[t]
        row = conversions.get(t)
        if row is not None and f in row:
            return 1.0 / row[f]
        for quotes in conversions.values():
            to_rate = quotes.get(t)
            if to_rate is not None:
                from_rate = quotes.get(f)
                if from_rate is not None:
                    return to_rate / from_rate
        raise _not_found(f, t)


@dataclass(frozen=True, slots=True)
class ConstantRates(Converter):
    """No server rates (no `currency.fetch_url`, or no good file yet): only same-currency "conversions".

    The error is the usual "rate not found" text rather than PBS-Go's "Constant rates doesn't
    proceed to any conversions", which tells a publisher less."""

    def get_rate(self, from_cur: str, to_cur: str) -> float:
        f = from_cur.upper()
        t = to_cur.upper()
        if f == t == DEFAULT_CURRENCY:
            return 1.0
        _check_codes(from_cur, to_cur)
        if f == t:
            return 1.0
        raise _not_found(f, t)


@dataclass(frozen=True, slots=True)
class AggregateRates(Converter):
    """Request rates first, then the server's (PBS-Go ``AggregateConversions``)."""

    request: Converter
    server: Converter

    def get_rate(self, from_cur: str, to_cur: str) -> float:
        try:
            return self.request.get_rate(from_cur, to_cur)
        except ConversionError:
            return self.server.get_rate(from_cur, to_cur)


def _as_converter(rates: Converter | Rates | None) -> Converter:
    if rates is None:
        return ConstantRates()
    if isinstance(rates, Converter):
        return rates
    return RateTable.of(rates)


def convert(amount: float, from_cur: str, to_cur: str, rates: Converter | Rates) -> float:
    """``amount`` from ``from_cur`` to ``to_cur`` with a converter or a raw rate table."""
    return amount * _as_converter(rates).get_rate(from_cur, to_cur)


def build_rates(
    request_rates: Rates | None,
    use_pbs_rates: bool | None,
    server_rates: Converter | Rates | None,
) -> Converter:
    """The converter for one auction (PBS-Go ``getAuctionCurrencyRates``).

    ``request_rates`` is ``ext.prebid.currency.rates``, ``use_pbs_rates`` its ``usepbsrates``
    (None = unset = true), ``server_rates`` the fetched currency file's conversions (None = not
    configured or no good file yet, so only identity conversions work; stale rates are still
    passed). With ``usepbsrates: false`` only the
    request rates are used; otherwise request rates win and server rates fill the gaps.
    """
    server = _as_converter(server_rates)
    if use_pbs_rates is False:
        return RateTable.of(request_rates)
    if not request_rates:
        return server
    return AggregateRates(RateTable.of(request_rates), server)


def choose_currency(
    request_cur: Sequence[str] | None,
    bid_currency: str | None,
    converter: Converter,
) -> tuple[str, float]:
    """The seat currency and the rate into it from ``bid_currency`` (PBS-Go ``requestBid``).

    The first code of ``request.cur`` (default ``["USD"]``) with a rate wins and is returned as the
    request spelled it; ``bid_currency`` defaults to USD. If none has a rate, the error for the last
    one tried is raised, as in PBS-Go.
    """
    source = bid_currency or DEFAULT_CURRENCY
    candidates = request_cur or (DEFAULT_CURRENCY,)
    for currency in candidates[:-1]:
        try:
            return currency, converter.get_rate(source, currency)
        except ConversionError:
            continue
    last = candidates[-1]
    return last, converter.get_rate(source, last)


def _is_code(value: object) -> bool:
    return isinstance(value, str) and len(value) == 3 and value.isascii() and value.isalpha()


def _is_positive_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0 and math.isfinite(value)


def validate_request_rates(rates: object, path: str = "request.ext.prebid.currency.rates") -> str | None:
    """The first problem with ``ext.prebid.currency.rates`` as an error text, or None if it is valid.

    It must be an object of objects of positive numbers keyed by 3-letter codes. The code check
    uses PBS-Go's text; only well-formedness is checked, not ISO 4217 membership.
    """
    if rates is None:
        return None
    if not isinstance(rates, Mapping):
        return f"{path} must be an object"
    for base, quotes in rates.items():
        if not _is_code(base):
            return f"currency code {base} is not recognized or malformed"
        if not isinstance(quotes, Mapping):
            return f"{path}.{base} must be an object"
        for quote, rate in quotes.items():
            if not _is_code(quote):
                return f"currency code {quote} is not recognized or malformed"
            if not _is_positive_number(rate):
                return f"{path}.{base}.{quote} must be a positive number"
    return None


def validate_request_currency(currency: object, path: str = "request.ext.prebid.currency") -> str | None:
    """The first problem with the whole ``ext.prebid.currency`` object, or None if it is valid."""
    if currency is None:
        return None
    if not isinstance(currency, Mapping):
        return f"{path} must be an object"
    use_pbs_rates = currency.get("usepbsrates")
    if use_pbs_rates is not None and not isinstance(use_pbs_rates, bool):
        return f"{path}.usepbsrates must be a boolean"
    return validate_request_rates(currency.get("rates"), f"{path}.rates")
