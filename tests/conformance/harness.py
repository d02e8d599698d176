"""Runs one fixture through an adapter the way PBS-Go's ``adapterstest`` harness does (README §2).

Each bidder's set-up comes from its ``go-test-setup.yaml`` (the values its Go test builds the
adapter with): the endpoint, ``extra_adapter_info`` (``AdapterConfig.extra["extra_info"]``) and the
server config (``external_url``, ``gvl_id``, ``datacenter``). ``GO_TEST_FACTS`` adds what a Go test
does beyond that and the file cannot show (README §5): appnexus's constant random numbers and
rubicon's XAPI credentials. The Go tests run with an empty PBS version (``pbs_version``).

A bidder whose Go test runs no JSON test (``GoTestFacts.no_json_test``, the reason) keeps JSON files
that are no fixtures: ucfunnel's ``ucfunnel.json`` is a bare bid request that ``ucfunnel_test.go``
never reads. Such a file is checked for what it is (:func:`run_bare_request`): fed to the adapter as
the request an auction gives it, it must give what PBS-Go's adapter gives, one call to the URI the
facts name for it (``bare_request_uris``) carrying every imp id, and no error.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import orjson
import yaml

from hbserver.adapters import UnknownAdapter, adapter_module, build_adapter
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
from hbserver.auction.common.iso4217 import iso4217_problem
from hbserver.bidders import DEFINITIONS
from tests.conformance.compare import compare_bid_responses, compare_errors, compare_requests
from tests.conformance.loader import Fixture, fixture_paths

REPO = Path(__file__).resolve().parents[2]
FIXTURES_ENV = "HBSERVER_PBS_FIXTURES"
SETUP_FILE = "go-test-setup.yaml"


def fixtures_root() -> Path:
    """``<repo>/../shared/fixtures/pbs-adapters`` unless ``HBSERVER_PBS_FIXTURES`` names another."""
    override = os.environ.get(FIXTURES_ENV)
    return Path(override) if override else REPO.parent / "shared" / "fixtures" / "pbs-adapters"


def _constant_random(adapter: Adapter) -> None:
    """The appnexus Go test's fake random generator: every number is 10."""
    adapter.random_int = lambda: 10  # type: ignore[attr-defined]


def _cadent_testing(adapter: Adapter) -> None:
    """The cadent_aperture_mx Go test switches the adapter to its fixed query (``?t=1000&ts=2060541160``)."""
    adapter.testing = True  # type: ignore[attr-defined]


def _eplanning_testing(adapter: Adapter) -> None:
    """The eplanning Go test sets the adapter's ``testing`` flag: no cache buster, a body of ``{}``."""
    adapter.testing = True  # type: ignore[attr-defined]


def _adnuntius_clock(adapter: Adapter) -> None:
    """The adnuntius Go test fixes the adapter's clock at 2016-01-01 12:30:15 UTC."""
    adapter.now = lambda: datetime(2016, 1, 1, 12, 30, 15, tzinfo=UTC)  # type: ignore[attr-defined]


def _flipp_uuid(adapter: Adapter) -> None:
    """The flipp Go test's UUID generator: always the same user key."""
    adapter.new_uuid = lambda: "30470a14-2949-4110-abce-b62d57304ad5"  # type: ignore[attr-defined]


def _yieldlab_testing(adapter: Adapter) -> None:
    """The yieldlab Go test's cache buster ("testing") and ISO week ("33")."""
    adapter.cache_buster = lambda: "testing"  # type: ignore[attr-defined]
    adapter.week = lambda: "33"  # type: ignore[attr-defined]


def _sspbc_go_test(adapter: Adapter) -> None:
    """PBS-Go's JSON test framework leaves an auction's request type (PbsEntryPoint) empty."""
    adapter.auction_types = False  # type: ignore[attr-defined]


def _smaato_clock(adapter: Adapter) -> None:
    """The smaato Go test fixes the adapter's clock at 2021-06-25 10:00:00 UTC."""
    adapter.now = lambda: datetime(2021, 6, 25, 10, 0, 0, tzinfo=UTC)  # type: ignore[attr-defined]


# The huaweiads Go test builds the adapter with two package-name rules (its extra info is one Go
# string written in ten pieces; go-test-setup.yaml shows only the first).
HUAWEIADS_EXTRA_INFO = (
    '{"pkgNameConvert":[{"convertedPkgName":"com.example.pkgname1",'
    '"unconvertedPkgNames":["com.example.p1","com.example.p2"],'
    '"unconvertedPkgNameKeyWords":["p3","p4"],'
    '"unconvertedPkgNamePrefixs":["com.example1","com.example2"],'
    '"exceptionPkgNames":["com.example.p7","com.example.p8"]},'
    '{"convertedPkgName":"com.example.pkgname2",'
    '"unconvertedPkgNames":["com.example.p9","com.example.p10"],'
    '"unconvertedPkgNameKeyWords":["p11","p12"],'
    '"unconvertedPkgNamePrefixs":["com.example3","com.example4"],'
    '"exceptionPkgNames":["com.example.p15","com.example3.unchanged"]}]}'
)


@dataclass(frozen=True)
class GoTestFacts:
    """What a Go test sets beyond its go-test-setup.yaml."""

    extra: Mapping[str, Any] = field(default_factory=dict)
    prepare: Callable[[Adapter], None] | None = None
    endpoint: str = ""  # a Go test go-test-setup.yaml does not show (a test not named TestJsonSamples)
    # why PBS-Go runs no JSON test for the bidder: its JSON files are bare requests (run_bare_request)
    no_json_test: str = ""
    bare_request_uris: Mapping[str, str] = field(default_factory=dict)  # file name -> the one call's URI


GO_TEST_FACTS: dict[str, GoTestFacts] = {
    "appnexus": GoTestFacts(prepare=_constant_random),
    "rubicon": GoTestFacts({"xapi": {"username": "xuser", "password": "xpass", "tracker": "pbs-test-tracker"}}),
    "smaato": GoTestFacts(prepare=_smaato_clock),
    "flipp": GoTestFacts(prepare=_flipp_uuid),
    "adnuntius": GoTestFacts(prepare=_adnuntius_clock),
    "cadent_aperture_mx": GoTestFacts(prepare=_cadent_testing),
    "eplanning": GoTestFacts(prepare=_eplanning_testing),
    "huaweiads": GoTestFacts({"extra_info": HUAWEIADS_EXTRA_INFO}),
    # audienceNetwork's Go test builds it with a platform id and an app secret
    "audienceNetwork": GoTestFacts({"platform_id": "test-platform-id", "app_secret": "test-app-secret"}),
    # nativo's JSON test is TestBidderNativo, which go-test-setup.yaml (empty) does not show
    "nativo": GoTestFacts(
        {"external_url": "http://hosturl.com", "gvl_id": 1, "datacenter": "2"}, endpoint="https://foo.io/?src=prebid"
    ),
    # blue's JSON test is TestBidderBlue, which go-test-setup.yaml (empty) does not show
    "blue": GoTestFacts(
        {"external_url": "http://hosturl.com", "gvl_id": 1, "datacenter": "2"}, endpoint="https://foo.io/?src=prebid"
    ),
    # yieldlab's Go test builds it in a helper (newTestYieldlabBidder) with its own endpoint
    "yieldlab": GoTestFacts(prepare=_yieldlab_testing, endpoint="https://ad.yieldlab.net/testing/"),
    # scalibur's Go test builds it in a helper (newTestAdapter) go-test-setup.yaml does not read
    "scalibur": GoTestFacts(endpoint="https://srv.scalibur.io/adserver/ortb?type=prebid-server"),
    "sspBC": GoTestFacts(prepare=_sspbc_go_test),
    # mediasquare's JSON test is TestBidderMediasquare, which go-test-setup.yaml (empty) does not show
    "mediasquare": GoTestFacts(
        {"external_url": "https://pbs-front.mediasquare.fr/msq_prebid", "gvl_id": 1, "datacenter": "2"},
        endpoint="https://pbs-front.mediasquare.fr/msq_prebid",
    ),
    # ucfunnel_test.go has only unit tests (TestMakeRequests, TestMakeBids, their endpoint); its
    # ucfunnel.json is a bare bid request (no mockBidRequest, no httpCalls) no Go test reads
    "ucfunnel": GoTestFacts(
        endpoint="http://localhost/bid",
        no_json_test="ucfunnel_test.go runs no JSON test: ucfunnel.json is a bare bid request",
        bare_request_uris={"ucfunnel.json": "http://localhost/bid/par-2EDDB423AA24474188B843EE4842932/request"},
    ),
}


@dataclass(frozen=True)
class BidderSetup:
    endpoint: str
    extra: Mapping[str, Any] = field(default_factory=dict)
    prepare: Callable[[Adapter], None] | None = None


def go_string(text: str) -> str:
    """A Go string literal's value: backquoted raw text or a double-quoted string."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == "`":
        return text[1:-1]
    if len(text) >= 2 and text[0] == text[-1] == '"':
        value: str = orjson.loads(text)
        return value
    return text


def read_setup(path: Path, facts: GoTestFacts | None = None) -> BidderSetup:
    """The set-up of a bidder's JSON test from its go-test-setup.yaml (the TestJsonSamples entry)."""
    entries = yaml.safe_load(path.read_text(encoding="utf-8")) or [{}]  # empty: the facts say it all
    entry = next((e for e in entries if e.get("test") == "TestJsonSamples"), entries[0])
    server = entry.get("server") or {}

    def first(values: Any, default: str = "") -> str:
        return str(values[0]) if values else default

    facts = facts or GoTestFacts()
    extra: dict[str, Any] = {
        "external_url": first(server.get("external_url")),
        "gvl_id": int(first(server.get("gvl_id"), "0")),
        "datacenter": first(server.get("datacenter")),
        # a Go test's extra info written in pieces (huaweiads) comes whole from its facts
        "extra_info": facts.extra.get("extra_info") or go_string(first(entry.get("extra_adapter_info"))),
        "pbs_version": "",
    }
    extra.update(facts.extra)
    return BidderSetup(facts.endpoint or first(entry.get("endpoint")), extra, facts.prepare)


def built_in_bidders(definitions: Path = DEFINITIONS) -> list[str]:
    """The codes hbserver builds an adapter for (its definitions that are no alias), sorted."""
    codes = []
    for path in sorted(definitions.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if not data.get("alias_of") and data["code"] != "generic":
            codes.append(data["code"])
    return codes


@cache
def bidder_setup(bidder: str) -> BidderSetup:
    return read_setup(fixtures_root() / bidder / SETUP_FILE, GO_TEST_FACTS.get(bidder))


def served_by(bidder: str) -> str:
    """The adapter code whose builder serves ``bidder``: its own, or for a code PBS-Go registers on
    another adapter's builder (mediafuse on appnexus's, emx_digital on cadent_aperture_mx's: no
    fixtures of their own) the code of the module its ``build`` comes from."""
    try:
        build = importlib.import_module(adapter_module(bidder)).build
    except ModuleNotFoundError:
        return bidder  # a recipe, or no adapter yet
    prefix = "hbserver.adapters."
    module = build.__module__
    return module[len(prefix) :].lstrip("_") if module.startswith(prefix) else bidder


def fixtures_source(bidder: str) -> str:
    """Whose fixtures and Go test set-up ``bidder`` runs: its own, else those of the adapter serving it."""
    return bidder if fixture_paths(fixtures_root(), bidder) else served_by(bidder)


BIDDERS = built_in_bidders()


def make_adapter(bidder: str) -> Adapter:
    """The adapter as the Go test builds it; UnknownAdapter when its module is missing."""
    setup = bidder_setup(fixtures_source(bidder))
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
        problem = iso4217_problem(from_currency) or iso4217_problem(to_currency)  # PBS-Go parses codes first
        if problem is not None:
            raise ConversionError(problem)
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
    return {name: ", ".join(values or ()) for name, values in raw.items()}  # null: no values (Go)


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


def bidder_request(request: Mapping[str, Any], bidder: str) -> dict[str, Any]:
    """``request`` as PBS core hands it to ``bidder``'s adapter: an imp whose ext names the bidder's
    params under its code (``imp.ext.<code>``, as an auction request may) and has no ``bidder`` gets
    them as ``imp.ext.bidder`` instead; every other imp and field as it is."""
    imps = []
    for imp in request.get("imp") or ():
        ext = imp.get("ext") if isinstance(imp, dict) else None
        if isinstance(ext, dict) and bidder in ext and "bidder" not in ext:
            others = {key: value for key, value in ext.items() if key != bidder}
            imp = {**imp, "ext": {"bidder": ext[bidder], **others}}
        imps.append(imp)
    return {**request, "imp": imps} if "imp" in request else dict(request)


def run_bare_request(fixture: Fixture, adapter: Adapter, facts: GoTestFacts) -> list[str]:
    """Every way the adapter's calls for a bare request file (a bidder with ``no_json_test``: the
    whole file is the request, ``fixture.request``) differ from PBS-Go's: exactly one call, to the
    URI ``facts.bare_request_uris`` names for the file, carrying every imp id, and no error."""
    uri = facts.bare_request_uris.get(fixture.path.name)
    if uri is None:
        return [f"{fixture.key}: no URI in GO_TEST_FACTS.bare_request_uris for this bare request"]
    request = bidder_request(fixture.request, fixture.bidder)
    snapshot = orjson.dumps(request)
    calls, errors = adapter.make_requests(request, request_info(fixture))
    problems = [f"MakeRequests error: {error.message!r}" for error in errors]
    if orjson.dumps(request) != snapshot:
        problems.append("MakeRequests changed the request it was given")
    if len(calls) != 1:
        return [*problems, f"expected 1 call, got {len(calls)}"]
    ids = sorted(imp.get("id", "") for imp in request.get("imp") or ())
    if calls[0].uri != uri:
        problems.append(f"uri: expected {uri!r}, got {calls[0].uri!r}")
    if sorted(calls[0].imp_ids) != ids:
        problems.append(f"impIDs: expected {ids}, got {sorted(calls[0].imp_ids)}")
    return problems


__all__ = [
    "BIDDERS",
    "UnknownAdapter",
    "fixtures_root",
    "make_adapter",
    "request_info",
    "run_bare_request",
    "run_fixture",
]
