"""Runs one fixture through an adapter the way PBS-Go's ``adapterstest`` harness does (README §2).

``BIDDERS`` holds each bidder's test set-up, taken from its Go ``<bidder>_test.go``: the endpoint
the Go test builds the adapter with, the host settings (``AdapterConfig.extra``) and any change
the Go test makes after building (appnexus replaces its random numbers with a constant 10).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from hbserver.adapters import UnknownAdapter, build_adapter
from hbserver.adapters.base import (
    Adapter,
    AdapterConfig,
    BidderError,
    BidderResponse,
    ConversionError,
    RequestData,
    RequestInfo,
    ResponseData,
)
from tests.conformance.compare import compare_bid_responses, compare_errors, compare_requests
from tests.conformance.loader import Fixture

REPO = Path(__file__).resolve().parents[2]
FIXTURES_ENV = "HBSERVER_PBS_FIXTURES"

# The Go tests' server config, the same for all six bidders (only rubicon reads it).
SERVER = {"external_url": "http://hosturl.com", "gvl_id": 1, "datacenter": "2"}


def fixtures_root() -> Path:
    """``<repo>/../shared/fixtures/pbs-adapters`` unless ``HBSERVER_PBS_FIXTURES`` names another."""
    override = os.environ.get(FIXTURES_ENV)
    return Path(override) if override else REPO.parent / "shared" / "fixtures" / "pbs-adapters"


def _constant_random(adapter: Adapter) -> None:
    """The appnexus Go test's fake random generator: every number is 10."""
    adapter.random_int = lambda: 10  # type: ignore[attr-defined]


@dataclass(frozen=True)
class BidderSetup:
    endpoint: str
    extra: Mapping[str, Any] = field(default_factory=dict)
    prepare: Callable[[Adapter], None] | None = None


BIDDERS: dict[str, BidderSetup] = {
    "appnexus": BidderSetup("http://ib.adnxs.com/openrtb2", SERVER, _constant_random),
    "rubicon": BidderSetup("uri", {
        **SERVER, "xapi": {"username": "xuser", "password": "xpass", "tracker": "pbs-test-tracker"},
    }),
    "pubmatic": BidderSetup("https://hbopenbid.pubmatic.com/translator?source=prebid-server", SERVER),
    "ix": BidderSetup("http://host/endpoint", SERVER),
    "openx": BidderSetup("http://rtb.openx.net/prebid", SERVER),
    "triplelift": BidderSetup("http://tlx.3lift.net/s2s/auction?sra=1&supplier_id=20", SERVER),
}


def make_adapter(bidder: str) -> Adapter:
    """The adapter as the Go test builds it; UnknownAdapter when ``hbserver.adapters.<bidder>`` is missing."""
    setup = BIDDERS[bidder]
    adapter = build_adapter(bidder, AdapterConfig(bidder, setup.endpoint, setup.extra))
    if setup.prepare is not None:
        setup.prepare(adapter)
    return adapter


def rates_converter(request: Mapping[str, Any]) -> Callable[[float, str, str], float] | None:
    """A converter from ``ext.prebid.currency.rates`` alone (direct or inverse rate), None without rates."""
    ext = request.get("ext")
    prebid = ext.get("prebid") if isinstance(ext, dict) else None
    currency = prebid.get("currency") if isinstance(prebid, dict) else None
    rates = currency.get("rates") if isinstance(currency, dict) else None
    if not rates:
        return None

    def convert(amount: float, from_currency: str, to_currency: str) -> float:
        source, target = from_currency.upper(), to_currency.upper()
        if source == target:
            return amount
        if target in rates.get(source, {}):
            return amount * rates[source][target]
        if source in rates.get(target, {}):
            return amount / rates[target][source]
        raise ConversionError(f"Currency conversion rate not found: '{source}' => '{target}'")

    return convert


def request_info(fixture: Fixture) -> RequestInfo:
    """Entry point from the folder; a currency converter only when the request carries rates."""
    convert = rates_converter(fixture.request)
    extra: dict[str, Any] = {"convert_currency": convert} if convert is not None else {}
    return RequestInfo(bidder=fixture.bidder, adapter_code=fixture.bidder, entry_point=fixture.entry_point, **extra)


def _headers(raw: Mapping[str, list[str]]) -> dict[str, str]:
    return {name: ", ".join(values) for name, values in raw.items()}


def run_fixture(fixture: Fixture, adapter: Adapter, check_error_text: bool = True) -> list[str]:
    """Every way the adapter's answers differ from the fixture's; [] when it conforms.

    ``check_error_text=False`` (fixtures listed in EXCEPTIONS.md) still checks the number of errors
    at each stage and everything else, only not their wording.
    """
    problems: list[str] = []
    if not fixture.errors_allowed and (fixture.make_requests_errors or fixture.make_bids_errors):
        return [f"{fixture.folder} fixtures may not expect errors"]
    request = fixture.request
    snapshot = orjson.dumps(request)

    requests, errors = adapter.make_requests(request, request_info(fixture))
    problems += compare_errors("MakeRequests", fixture.make_requests_errors, errors, check_error_text)
    problems += compare_requests(fixture.calls, requests)
    if orjson.dumps(request) != snapshot:
        problems.append("MakeRequests changed the request it was given")
    if problems and len(requests) != len(fixture.calls):
        return problems

    responses: list[BidderResponse] = []
    bid_errors: list[BidderError] = []
    for call in fixture.calls:
        sent = RequestData("POST", call.uri, call.body_raw)
        answer = ResponseData(call.status, call.response_body, _headers(call.response_headers))
        response, errors = adapter.make_bids(request, sent, answer)
        bid_errors += errors
        if response is not None:
            responses.append(response)
    if orjson.dumps(request) != snapshot:
        problems.append("MakeBids changed the request it was given")
    problems += compare_errors("MakeBids", fixture.make_bids_errors, bid_errors, check_error_text)
    problems += compare_bid_responses(fixture.bid_responses, responses)
    return problems


__all__ = ["BIDDERS", "UnknownAdapter", "fixtures_root", "make_adapter", "request_info", "run_fixture"]
