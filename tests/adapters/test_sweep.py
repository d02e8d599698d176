"""Every built-in adapter (from the registry, so one added later is swept too) over hostile params and
hostile bidder answers: whatever comes in, each failure is a clean error for that bidder, never an
exception escaping the adapter nor a traceback in the log (the exchange would call that an adapter
failure and log a traceback per request)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from hbserver.adapters import RECIPE_DIR, adapter_module
from hbserver.adapters.base import RequestData, RequestInfo, ResponseData
from tests.adapters.hostile import (
    ENDPOINT,
    HOSTILE_SHAPES,
    HOSTILE_VALUES,
    BuiltIn,
    Escaped,
    Records,
    auction_request,
    built_in_adapters,
    hostile_answers,
    make_bids,
    make_requests,
    param_fields,
    valid_params,
    with_value,
)

ADAPTERS = built_in_adapters()
IDS = [built.code for built in ADAPTERS]
ADAPTER_DIR = Path(__file__).resolve().parents[2] / "hbserver" / "adapters"
MAX_SHOWN = 8  # failures listed per adapter


@pytest.fixture
def records() -> Iterator[list[logging.LogRecord]]:
    handler = Records()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield handler.records
    finally:
        root.removeHandler(handler)


def _infos(code: str) -> list[RequestInfo]:
    return [RequestInfo(bidder=code, adapter_code=code),
            RequestInfo(bidder=code, adapter_code=code, entry_point="openrtb2-amp")]



def test_the_sweep_covers_every_adapter_module_and_recipe():
    """Every module under hbserver/adapters that builds an adapter, and every recipe, is run by a
    registry code."""
    swept = {adapter_module(built.code) for built in ADAPTERS}
    on_disk = {f"hbserver.adapters.{path.stem}" for path in ADAPTER_DIR.glob("*.py")
               if "\ndef build(" in path.read_text()}
    assert on_disk and on_disk <= swept, sorted(on_disk - swept)
    recipes = {path.stem for path in RECIPE_DIR.glob("*.yaml")}
    assert recipes and recipes <= {built.code.lower() for built in ADAPTERS}, sorted(recipes)
    assert len(ADAPTERS) >= 47


@pytest.mark.parametrize("built", ADAPTERS, ids=IDS)
def test_schema_gives_valid_params(built: BuiltIn):
    assert valid_params(built.code) is not None, f"no params {built.code}'s schema accepts could be made"


def _param_attempts(built: BuiltIn) -> Iterator[tuple[str, dict]]:
    code = built.code
    params = valid_params(code) or {}
    for path in param_fields(code):
        for value in HOSTILE_VALUES:
            yield f"{'.'.join(path)}={value!r:.40}", auction_request(code, with_value(params, path, value))
    for value in HOSTILE_SHAPES:
        yield f"params={value!r:.40}", auction_request(code, value)


@pytest.mark.parametrize("built", ADAPTERS, ids=IDS)
def test_hostile_params(built: BuiltIn, records):
    """Each schema field (and one the schema does not name) set to each hostile value, the params
    object and imp.ext replaced by junk: make_requests answers with calls or bidder errors."""
    adapter = built.build()
    failures = []
    for label, request in _param_attempts(built):
        for info in _infos(built.code):
            try:
                make_requests(adapter, request, info, f"{built.code} {info.entry_point} {label}", records)
            except Escaped as exc:
                failures.append(str(exc))
    assert not failures, f"{len(failures)} escapes, the first:\n" + "\n".join(failures[:MAX_SHOWN])


def _calls(built: BuiltIn, records) -> Iterator[tuple[dict, RequestData]]:
    """(request, call) for each request shape: the adapter's own calls, or a plain POST when it
    makes none (the answers are read either way)."""
    adapter = built.build()
    params = valid_params(built.code) or {}
    for media, app in ((("banner", "video"), False), (("native", "audio"), True), (("banner",), True)):
        request = auction_request(built.code, params, media, app)
        calls = make_requests(adapter, request, _infos(built.code)[0], f"{built.code} base request", records)
        for call in calls[:2] or [RequestData("POST", ENDPOINT, orjson.dumps(request))]:
            yield request, call


@pytest.mark.parametrize("built", ADAPTERS, ids=IDS)
def test_hostile_answers(built: BuiltIn, records):
    """Empty, malformed and wrong-typed answers (every field of a bid), 204 and non-2xx statuses,
    hostile header values: make_bids answers with bids or bidder errors."""
    adapter = built.build()
    failures = []
    for request, call in _calls(built, records):
        for status, body, headers in hostile_answers():
            where = f"{built.code} {status} {body[:60]!r} headers={next(iter(headers.values()), '')[:12]!r}"
            try:
                make_bids(adapter, request, call, ResponseData(status, body, headers), where, records)
            except Escaped as exc:
                failures.append(str(exc))
    assert not failures, f"{len(failures)} escapes, the first:\n" + "\n".join(failures[:MAX_SHOWN])
