"""What the adapter sweep (tests/adapters/test_sweep.py) and the adapter fuzz test
(tests/fuzz/test_adapters.py) share: every built-in adapter, enumerated from the registry so an
adapter added later is covered with no change here; a params object its schema accepts, made from
the schema itself; the params fields the schema names; hostile values for them; hostile bidder
answers; and one call of an adapter that fails the test when anything escapes it or is logged with
a traceback.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import orjson

from hbserver import __version__
from hbserver.adapters import build_adapter
from hbserver.adapters.base import (
    Adapter,
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
)
from hbserver.adapters.params import compile_schema, schema_of, validate_params
from hbserver.bidders.registry import build_registry
from tests.conftest import make_config

ENDPOINT = "http://127.0.0.1:9/bid"

# Text that breaks naive text-to-number code: str.isdigit() takes "²" (int() refuses it), int() takes
# "٣", fullwidth "1", "1_000" and " 1" (no wire format does), refuses more than 4,300 digits; and numbers past
# int64 / uint64 (orjson cannot write an integer past 64 bits).
HOSTILE_NUMBER_TEXT: tuple[str, ...] = (
    "²", "-²", "²³", "٣", "\uff11", "1_000", " 1", "1 ", "+1", "-1", "0x10", "1e3", "1.5", "", "-", "+",
    "9" * 5000, "-" + "9" * 5000, "0" * 5000 + "1", "99999999999999999999", "18446744073709551616",
    "9223372036854775808", "-9223372036854775809", "4294967296", "2147483648", "NaN", "Infinity", "1e309",
    "١٢٣٤", "\u0661", "\U0001d7d9", "a" * 5000,
)
# JSON numbers at and past the edges (orjson reads integers up to uint64; beyond, a float).
HOSTILE_NUMBERS: tuple[Any, ...] = (
    2**63, 2**64 - 1, -(2**63), 2**63 - 1, 2**31, 2**32, -1, 0, 1e20, -1e20, 1.5, -0.0, 1e308, 5e-324,
)
# Wrong types and shapes for any field.
HOSTILE_SHAPES: tuple[Any, ...] = (
    None, True, False, [], {}, [1], ["1"], {"a": 1}, [[[[[]]]]], {"x": {"y": {"z": ["²"]}}}, [None], "x" * 5000,
)
HOSTILE_VALUES: tuple[Any, ...] = HOSTILE_NUMBER_TEXT + HOSTILE_NUMBERS + HOSTILE_SHAPES

# Answer headers: any name an adapter asks for gets the value; these are the names it can iterate.
_HEADER_NAMES = ("Content-Type", "Content-Length", "X-Nbr", "X-Smt-Adtype", "X-Smt-Expires", "Cache-Control")


class AnyHeaders(Mapping[str, str]):
    """Answer headers in which every name holds ``value`` (case-insensitive lookups included)."""

    def __init__(self, value: str) -> None:
        self.value = value

    def __getitem__(self, name: str) -> str:
        return self.value

    def __contains__(self, name: object) -> bool:
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(_HEADER_NAMES)

    def __len__(self) -> int:
        return len(_HEADER_NAMES)


@dataclass(frozen=True)
class BuiltIn:
    """One built-in adapter as the auction builds it (with the extras core.py hands it)."""

    code: str
    config: AdapterConfig

    def build(self) -> Adapter:
        return build_adapter(self.code, self.config)


@cache
def built_in_adapters() -> tuple[BuiltIn, ...]:
    """Every built-in adapter of the registry (aliases run one of these), sorted by code."""
    registry = build_registry(make_config())
    out = []
    for code, bidder in sorted(registry.bidders.items()):
        if bidder.alias_of:
            continue
        extra = {
            "external_url": "http://127.0.0.1:8000", "pbs_version": __version__, "gvl_id": 0, "datacenter": "",
            "extra_info": bidder.extra_info, "platform_id": bidder.platform_id,
        }
        out.append(BuiltIn(code, AdapterConfig(code, ENDPOINT, extra)))
    return tuple(out)


# --- params a schema accepts, and the fields it names -------------------------------------------------

_SCALARS: tuple[Any, ...] = (
    "123", 123, 1.5, True, "example.com", "a1b2c3d4-0000-4000-8000-0123456789ab", "net", "abc",
    "abc123",  # six characters (axis's integration and token)
    "abcdef0123456789",  # sixteen letters and digits (bluesea's token pattern)
)


def _alternatives(schema: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The schema's oneOf/anyOf/allOf branches (one empty branch when it has none)."""
    branches = [b for key in ("oneOf", "anyOf", "allOf") for b in schema.get(key, ()) if isinstance(b, dict)]
    return branches or [{}]


def _candidates(schema: Any) -> Iterator[Any]:
    """Values that may satisfy ``schema`` (checked by the caller), the likeliest first."""
    if not isinstance(schema, dict):
        yield from _SCALARS
        return
    if "const" in schema:
        yield schema["const"]
    yield from schema.get("enum", ())
    types = schema.get("type", [])
    types = [types] if isinstance(types, str) else types
    if "object" in types or "properties" in schema or "required" in schema:
        properties = schema.get("properties", {})
        for branch in _alternatives(schema):
            names = [*schema.get("required", ()), *branch.get("required", ())]
            props = {**properties, **branch.get("properties", {})}
            yield {name: example(props.get(name, {})) for name in dict.fromkeys(names)}
    if "array" in types:
        item = example(schema.get("items", {}))
        yield [item] * max(1, schema.get("minItems", 1))
    for branch in _alternatives(schema):
        if branch:
            yield from _candidates(branch)
    for bound in ("minimum", "exclusiveMinimum"):
        if bound in schema:
            yield schema[bound] + (1 if bound == "exclusiveMinimum" else 0)
    yield from _SCALARS


def example(schema: Any) -> Any:
    """A value ``schema`` accepts (None when none of the candidates is one)."""
    check = compile_schema(schema)
    for candidate in _candidates(schema):
        if check(candidate) is None:
            return candidate
    return None


@cache
def valid_params(code: str) -> dict[str, Any] | None:
    """Params the adapter's schema accepts (``{}`` for a schemaless adapter); None when none found."""
    schema = schema_of(code)
    if schema is None:
        return {}
    for candidate in _candidates(schema):
        if isinstance(candidate, dict) and validate_params(code, candidate) is None:
            return candidate
    return None


def _field_paths(schema: Any, prefix: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    if not isinstance(schema, dict):
        return
    props: dict[str, Any] = dict(schema.get("properties", {}))
    for branch in _alternatives(schema):
        props.update(branch.get("properties", {}))
        props.update({name: {} for name in branch.get("required", ()) if name not in props})
    props.update({name: {} for name in schema.get("required", ()) if name not in props})
    for name, sub in props.items():
        yield (*prefix, name)
        yield from _field_paths(sub, (*prefix, name))
        if isinstance(sub, dict) and isinstance(sub.get("items"), dict):
            yield from _field_paths(sub["items"], (*prefix, name, "0"))


@cache
def param_fields(code: str) -> tuple[tuple[str, ...], ...]:
    """Every field the adapter's schema names, at any depth (array items as ``0``), plus one it does
    not; a schemaless adapter gets a few common names."""
    schema = schema_of(code)
    paths = list(dict.fromkeys(_field_paths(schema, ()))) if schema is not None else [
        ("placementId",), ("siteId",), ("bidfloor",),
    ]
    return (*paths, ("notInTheSchema",))


def with_value(params: Any, path: tuple[str, ...], value: Any) -> Any:
    """``params`` with ``value`` at ``path``, made where missing (a list index as a one-item list)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if head == "0":
        inner = params[0] if isinstance(params, list) and params else {}
        return [with_value(inner, rest, value)]
    base = dict(params) if isinstance(params, dict) else {}
    base[head] = with_value(base.get(head), rest, value)
    return base


# --- requests and answers -----------------------------------------------------------------------------

_MEDIA: dict[str, dict[str, Any]] = {
    "banner": {"banner": {"w": 300, "h": 250, "format": [{"w": 300, "h": 250}, {"w": 728, "h": 90}]}},
    "video": {"video": {"mimes": ["video/mp4"], "w": 640, "h": 480, "protocols": [2, 3], "minduration": 1,
                        "maxduration": 30, "placement": 1, "plcmt": 1, "startdelay": 0}},
    "native": {"native": {"request": '{"ver":"1.2","assets":[{"id":1,"required":1,"title":{"len":90}}]}',
                          "ver": "1.2"}},
    "audio": {"audio": {"mimes": ["audio/mp4"], "minduration": 1, "maxduration": 30}},
}


def auction_request(code: str, params: Any, media: tuple[str, ...] = ("banner", "video"), app: bool = False) -> dict:
    """An OpenRTB request as the exchange hands it to one bidder: one imp per media type, each
    with ``params`` as ``imp.ext.bidder``."""
    imps = [
        {"id": f"imp-{kind}", **_MEDIA[kind], "tagid": "slot-1", "bidfloor": 0.5, "bidfloorcur": "USD",
         "ext": {"bidder": params, "prebid": {"bidder": {code: params}}}}
        for kind in media
    ]
    request: dict[str, Any] = {
        "id": "req-1", "imp": imps, "tmax": 500, "cur": ["USD"], "source": {"tid": "tid-1"},
        "device": {"ua": "Mozilla/5.0", "ip": "192.0.2.1", "w": 375, "h": 667, "language": "en", "dnt": 0},
        "user": {"id": "user-1", "buyeruid": "buyer-1"}, "regs": {"ext": {"gdpr": 0}},
    }
    if app:
        request["app"] = {"id": "app-1", "bundle": "com.example.app", "publisher": {"id": "pub-1"}}
    else:
        request["site"] = {"page": "https://example.com/page", "domain": "example.com", "publisher": {"id": "pub-1"}}
    return request


BASE_BID = {"id": "bid-1", "impid": "imp-banner", "price": 1.25, "adm": "<div>ad</div>", "crid": "cr-1",
            "w": 300, "h": 250, "mtype": 1, "adomain": ["example.com"], "ext": {"prebid": {"type": "banner"}}}
BASE_ANSWER = {"id": "req-1", "cur": "USD", "seatbid": [{"seat": "s", "bid": [BASE_BID]}]}


def _answer_paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield (*prefix, key)
            yield from _answer_paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield (*prefix, index)
            yield from _answer_paths(value, (*prefix, index))


ANSWER_PATHS: tuple[tuple[Any, ...], ...] = tuple(_answer_paths(BASE_ANSWER))


def put(node: Any, path: tuple[Any, ...], value: Any) -> Any:
    """``node`` with ``value`` at ``path``; a path through a value that is no longer a container
    (an earlier change replaced it) leaves ``node`` as it is."""
    if not path:
        return value
    key, rest = path[0], path[1:]
    if isinstance(node, list) and isinstance(key, int) and key < len(node):
        return [put(item, rest, value) if i == key else item for i, item in enumerate(node)]
    if isinstance(node, dict) and key in node:
        return {**node, key: put(node[key], rest, value)}
    return node


def answer_with(path: tuple[Any, ...], value: Any) -> Any:
    """BASE_ANSWER with ``value`` at ``path``."""
    return put(BASE_ANSWER, path, value)


def _raw_answers() -> Iterator[tuple[int, bytes]]:
    for status in (204, 200, 400, 404, 500, 503, 302, 0, 999):
        yield status, b""
    for body in (b"null", b"[]", b"{}", b'""', b"1", b"{", b"\xff\xfe\x00", b"[" * 2000 + b"]" * 2000,
                 b'{"seatbid":null}', b'{"seatbid":"x"}', b'{"seatbid":[null]}', b'{"seatbid":[{"bid":"x"}]}',
                 b'{"seatbid":[{"bid":[null,1,"x"]}]}', b'{"id":"req-1","seatbid":[],"nbr":"\xc2\xb2"}',
                 b'{"seatbid":[{"bid":[{"price":1e400}]}]}', b'{"seatbid":[{"bid":[{"price":' + b"9" * 5000 + b"}]}]}",
                 b"<VAST></VAST>", orjson.dumps(BASE_ANSWER)):
        for status in (200, 400, 500):
            yield status, body


def hostile_answers() -> Iterator[tuple[int, bytes, Mapping[str, str]]]:
    """(status, body, headers): empty and malformed bodies, every field of an OpenRTB answer set
    to each hostile value (unknown imp ids included), hostile header values."""
    plain: Mapping[str, str] = {"Content-Type": "application/json"}
    for status, body in _raw_answers():
        yield status, body, plain
    for path in ANSWER_PATHS:
        for value in (*HOSTILE_VALUES, "imp-unknown"):
            yield 200, orjson.dumps(answer_with(path, value)), plain
    good = orjson.dumps(BASE_ANSWER)
    for value in HOSTILE_NUMBER_TEXT:
        for status in (200, 204, 400):
            yield status, good, AnyHeaders(value)


# --- calling an adapter -----------------------------------------------------------------------------


class Escaped(AssertionError):
    """Something other than a clean bidder error came out of an adapter."""


def _check_errors(where: str, errors: Any) -> None:
    if not isinstance(errors, list) or not all(
        isinstance(e, BidderError) and isinstance(e.message, str) for e in errors
    ):
        raise Escaped(f"{where}: errors are not a list of BidderError: {errors!r}"[:600])


def _check_logged(where: str, records: list[logging.LogRecord]) -> None:
    traced = [r for r in records if r.exc_info]
    if traced:
        raise Escaped(f"{where}: logged a traceback: {traced[0].getMessage()}")


def run_safely(where: str, call: Callable[[], Any], records: list[logging.LogRecord]) -> Any:
    """``call()``; Escaped (naming ``where`` and the input) when it raises or logs a traceback."""
    start = len(records)
    try:
        result = call()
    except Exception as exc:
        raise Escaped(f"{where}: {type(exc).__name__}: {str(exc)[:300]}") from exc
    _check_logged(where, records[start:])
    return result


def make_requests(adapter: Adapter, request: dict, info: RequestInfo, where: str,
                  records: list[logging.LogRecord]) -> list[RequestData]:
    """The adapter's calls; Escaped when make_requests raises, logs a traceback, answers in the
    wrong shape or builds a body that is not JSON-encodable bytes."""
    calls, errors = run_safely(where, lambda: adapter.make_requests(request, info), records)
    _check_errors(where, errors)
    for call in calls:
        if not isinstance(call, RequestData) or not isinstance(call.body, bytes | None):
            raise Escaped(f"{where}: a call is not RequestData with a bytes body: {call!r}"[:600])
    return calls


def make_bids(adapter: Adapter, request: dict, call: RequestData, answer: ResponseData, where: str,
              records: list[logging.LogRecord]) -> None:
    """make_bids on one answer; Escaped when it raises, logs a traceback or answers in the wrong shape."""
    response, errors = run_safely(where, lambda: adapter.make_bids(request, call, answer), records)
    _check_errors(where, errors)
    if response is not None and not (
        isinstance(response, BidderResponse) and all(isinstance(b, TypedBid) for b in response.bids)
    ):
        raise Escaped(f"{where}: not a BidderResponse of TypedBids: {response!r}"[:600])


class Records(logging.Handler):
    """Every record logged while installed (the sweep runs outside pytest's caplog, per call)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
