"""Reads PBS-Go adapter fixtures the way Go's ``encoding/json`` decodes them into the harness's struct.

Go behaviour copied here (README §1):

* keys match struct fields case-insensitively, an exact-case match preferred; later keys win;
* unknown keys (such as ``"//"`` comments) are ignored;
* ``mockResponse.body`` and ``expectedRequest.body`` are ``json.RawMessage``: the adapter gets the
  raw bytes of the value exactly as written in the file, indentation included. So values are cut
  out of the file text by position rather than re-serialised.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from json.decoder import scanstring
from pathlib import Path
from typing import Any

import orjson

from hbserver.adapters.golike import RawObject

# Folders the Go harness runs, and for each: whether expected errors are allowed, the entry point.
FOLDERS: dict[str, tuple[bool, str]] = {
    "exemplary": (False, "openrtb2-auction"),
    "supplemental": (True, "openrtb2-auction"),
    "amp": (True, "openrtb2-amp"),
    "video": (False, "openrtb2-video"),
    "videosupplemental": (True, "openrtb2-video"),
}

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")


class FixtureFormatError(ValueError):
    """The fixture file is not JSON the Go harness could decode."""


@dataclass(slots=True)
class ExpectedError:
    value: str
    comparison: str = ""


@dataclass(slots=True)
class HttpCall:
    uri: str = ""
    body: Any = None  # parsed expectedRequest.body (None when absent)
    body_raw: bytes = b""  # as written in the file: what MakeBids receives as the call body
    headers: dict[str, list[str]] | None = None
    imp_ids: list[str] = field(default_factory=list)
    status: int = 0
    response_body: bytes = b""
    response_headers: dict[str, list[str]] = field(default_factory=dict)


@dataclass(slots=True)
class ExpectedBid:
    bid: Any = None
    type: str = ""
    seat: str = ""
    video: dict[str, Any] | None = None


@dataclass(slots=True)
class ExpectedBidResponse:
    currency: str = ""
    bids: list[ExpectedBid] = field(default_factory=list)
    fledge: list[Any] | None = None  # None = the key was absent


@dataclass(slots=True)
class Fixture:
    bidder: str
    folder: str
    path: Path
    request: dict[str, Any] = field(default_factory=dict)
    calls: list[HttpCall] = field(default_factory=list)
    bid_responses: list[ExpectedBidResponse] = field(default_factory=list)
    make_requests_errors: list[ExpectedError] = field(default_factory=list)
    make_bids_errors: list[ExpectedError] = field(default_factory=list)

    @property
    def key(self) -> str:
        """``<bidder>/<folder>/<file>``: the id used in test names and EXCEPTIONS.md."""
        return f"{self.bidder}/{self.folder}/{self.path.name}"

    @property
    def errors_allowed(self) -> bool:
        return FOLDERS[self.folder][0]

    @property
    def entry_point(self) -> str:
        return FOLDERS[self.folder][1]


# --- raw JSON spans ------------------------------------------------------------------------------


def _ws(text: str, i: int) -> int:
    return _WHITESPACE.match(text, i).end()  # type: ignore[union-attr]


def _skip_value(text: str, i: int) -> int:
    """The index just past the JSON value starting at ``i``."""
    ch = text[i : i + 1]
    if ch == '"':
        return scanstring(text, i + 1)[1]
    if ch == "{":
        members = _members(text, i)
        return members[1]
    if ch == "[":
        return _elements(text, i)[1]
    match = _SCALAR.match(text, i)
    if match is None:
        raise FixtureFormatError(f"bad JSON value at offset {i}")
    return match.end()


def _members(text: str, i: int) -> tuple[list[tuple[str, int, int]], int]:
    """(key, value start, value end) of the object at ``i``, and the index past it."""
    out: list[tuple[str, int, int]] = []
    i = _ws(text, i + 1)
    if text[i : i + 1] == "}":
        return out, i + 1
    while True:
        if text[i : i + 1] != '"':
            raise FixtureFormatError(f"expected a key at offset {i}")
        key, i = scanstring(text, i + 1)
        i = _ws(text, i)
        if text[i : i + 1] != ":":
            raise FixtureFormatError(f"expected ':' at offset {i}")
        start = _ws(text, i + 1)
        end = _skip_value(text, start)
        out.append((key, start, end))
        i = _ws(text, end)
        if text[i : i + 1] == ",":
            i = _ws(text, i + 1)
            continue
        if text[i : i + 1] == "}":
            return out, i + 1
        raise FixtureFormatError(f"expected ',' or '}}' at offset {i}")


def _elements(text: str, i: int) -> tuple[list[tuple[int, int]], int]:
    out: list[tuple[int, int]] = []
    i = _ws(text, i + 1)
    if text[i : i + 1] == "]":
        return out, i + 1
    while True:
        end = _skip_value(text, i)
        out.append((i, end))
        i = _ws(text, end)
        if text[i : i + 1] == ",":
            i = _ws(text, i + 1)
            continue
        if text[i : i + 1] == "]":
            return out, i + 1
        raise FixtureFormatError(f"expected ',' or ']' at offset {i}")


class _Raw:
    """A JSON value of the file text, read lazily: its raw text, its parsed form, its parts."""

    __slots__ = ("end", "start", "text")

    def __init__(self, text: str, start: int, end: int) -> None:
        self.text, self.start, self.end = text, start, end

    @property
    def kind(self) -> str:
        return self.text[self.start]

    def raw(self) -> bytes:
        return self.text[self.start : self.end].encode()

    def value(self) -> Any:
        raw = self.raw()
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:  # e.g. an integer beyond 64 bits, which orjson refuses
            return json.loads(raw)

    def fields(self, names: tuple[str, ...]) -> dict[str, _Raw]:
        """Members matched to struct field names as Go does (exact, else case-insensitive; last wins)."""
        if self.kind != "{":
            raise FixtureFormatError(f"expected an object at offset {self.start}")
        folded = {name.casefold(): name for name in names}
        out: dict[str, _Raw] = {}
        for key, start, end in _members(self.text, self.start)[0]:
            name = key if key in names else folded.get(key.casefold())
            if name is not None:
                out[name] = _Raw(self.text, start, end)
        return out

    def items(self) -> Iterator[_Raw]:
        if self.kind == "n":  # null: an absent list
            return
        if self.kind != "[":
            raise FixtureFormatError(f"expected an array at offset {self.start}")
        for start, end in _elements(self.text, self.start)[0]:
            yield _Raw(self.text, start, end)


# --- the harness's struct ------------------------------------------------------------------------


def _errors(raw: _Raw | None) -> list[ExpectedError]:
    if raw is None:
        return []
    out = []
    for item in raw.items():
        parts = item.fields(("value", "comparison"))
        out.append(ExpectedError(
            _string(parts.get("value")), _string(parts.get("comparison"))
        ))
    return out


def _string(raw: _Raw | None) -> str:
    value = raw.value() if raw is not None else None
    return value if isinstance(value, str) else ""


def _headers(raw: _Raw | None) -> dict[str, list[str]] | None:
    value = raw.value() if raw is not None else None
    return value if isinstance(value, dict) else None


def _call(raw: _Raw) -> HttpCall:
    parts = raw.fields(("expectedRequest", "mockResponse"))
    call = HttpCall()
    if "expectedRequest" in parts:
        req = parts["expectedRequest"].fields(("method", "uri", "body", "headers", "impIDs"))
        call.uri = _string(req.get("uri"))
        if "body" in req:
            call.body = req["body"].value()
            call.body_raw = req["body"].raw()
        call.headers = _headers(req.get("headers"))
        if "impIDs" in req:
            call.imp_ids = [_string(item) for item in req["impIDs"].items()]
    if "mockResponse" in parts:
        resp = parts["mockResponse"].fields(("status", "body", "headers"))
        if "status" in resp:
            call.status = int(resp["status"].value() or 0)
        if "body" in resp:
            call.response_body = resp["body"].raw()
        call.response_headers = _headers(resp.get("headers")) or {}
    return call


def _bid_response(raw: _Raw) -> ExpectedBidResponse:
    parts = raw.fields(("currency", "bids", "fledgeauctionconfigs"))
    out = ExpectedBidResponse(currency=_string(parts.get("currency")))
    for item in parts["bids"].items() if "bids" in parts else ():
        bid = item.fields(("bid", "type", "seat", "video"))
        video = bid["video"].value() if "video" in bid else None
        out.bids.append(ExpectedBid(
            bid=bid["bid"].value() if "bid" in bid else None,
            type=_string(bid.get("type")),
            seat=_string(bid.get("seat")),
            video=video if isinstance(video, dict) else None,
        ))
    if "fledgeauctionconfigs" in parts and parts["fledgeauctionconfigs"].kind != "n":
        out.fledge = parts["fledgeauctionconfigs"].value()
    return out


def _with_ext_text(raw: _Raw, value: Any) -> Any:
    """``value`` (``raw`` parsed) with every object under an ``ext`` key a RawObject keeping its text:
    the request's ``ext`` fields are ``json.RawMessage`` in Go's model, written back as they were read."""
    if raw.kind == "{" and isinstance(value, dict):
        spans = {key: (start, end) for key, start, end in _members(raw.text, raw.start)[0]}  # the last wins
        for key, (start, end) in spans.items():
            child = _Raw(raw.text, start, end)
            item = _with_ext_text(child, value[key])
            value[key] = RawObject(item, child.raw().decode()) if key == "ext" and isinstance(item, dict) else item
    elif raw.kind == "[" and isinstance(value, list):
        for index, (start, end) in enumerate(_elements(raw.text, raw.start)[0]):
            value[index] = _with_ext_text(_Raw(raw.text, start, end), value[index])
    return value


def load_fixture(path: Path, bidder: str, folder: str) -> Fixture:
    text = path.read_text(encoding="utf-8")
    start = _ws(text, 0)
    top = _Raw(text, start, _skip_value(text, start)).fields((
        "mockBidRequest", "httpCalls", "expectedBidResponses",
        "expectedMakeRequestsErrors", "expectedMakeBidsErrors",
    ))
    fixture = Fixture(bidder, folder, path)
    if "mockBidRequest" in top:
        raw_request = top["mockBidRequest"]
        fixture.request = _with_ext_text(raw_request, raw_request.value())
    if "httpCalls" in top:
        fixture.calls = [_call(item) for item in top["httpCalls"].items()]
    if "expectedBidResponses" in top:
        fixture.bid_responses = [_bid_response(item) for item in top["expectedBidResponses"].items()]
    fixture.make_requests_errors = _errors(top.get("expectedMakeRequestsErrors"))
    fixture.make_bids_errors = _errors(top.get("expectedMakeBidsErrors"))
    return fixture


def load_bare_request(path: Path, bidder: str, folder: str) -> Fixture:
    """A JSON file that is no fixture but a bare bid request (a bidder PBS-Go runs no JSON test for,
    ``GoTestFacts.no_json_test``): the whole file is the request, its ``ext`` texts kept; no calls
    and no expectations."""
    text = path.read_text(encoding="utf-8")
    start = _ws(text, 0)
    raw = _Raw(text, start, _skip_value(text, start))
    if raw.kind != "{":
        raise FixtureFormatError(f"{path.name}: a bare request must be a JSON object")
    return Fixture(bidder, folder, path, request=_with_ext_text(raw, raw.value()))


def fixture_paths(root: Path, bidder: str) -> list[tuple[str, Path]]:
    """(folder, path) of every ``.json`` file the Go harness would run for a bidder, sorted."""
    found = []
    for path in sorted((root / bidder).rglob("*.json")):
        if path.parent.name in FOLDERS:
            found.append((path.parent.name, path))
    return found
