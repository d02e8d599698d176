"""The shared steps recipes are made of (:mod:`hbserver.adapters.recipe`), each a small table of named
behaviours PBS-Go's adapters repeat with other names: reading the params struct, filling endpoint
macros, rewriting ``imp.ext``, header sets, the wording of a failed answer and typing a bid."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hbserver.adapters.base import (
    JSON_HEADERS,
    MTYPE_TO_TYPE,
    BidderError,
    ErrorCode,
    bad_input,
    bad_server_response,
)
from hbserver.adapters.common import UNEXPECTED_STATUS, AnswerWording, first_media_type, resolve_macros
from hbserver.adapters.golike import NOT_AN_OBJECT, GoKind, go_float_text, go_members, go_value, imp_bidder_params

ERROR_CLASSES: Mapping[str, ErrorCode] = {
    "generic": ErrorCode.UNKNOWN,  # a plain Go error (fmt.Errorf, jsonutil's decoding errors)
    "bad_input": ErrorCode.BAD_INPUT,
    "bad_server_response": ErrorCode.BAD_SERVER_RESPONSE,
}
_ERROR_MAKERS: Mapping[str, Callable[[str], BidderError]] = {
    "generic": BidderError,
    "bad_input": bad_input,
    "bad_server_response": bad_server_response,
}


class StepError(ValueError):
    """A recipe value a step cannot take (the recipe loader adds the file's name)."""


def _class_of(name: Any, where: str) -> str:
    if name not in ERROR_CLASSES:
        raise StepError(f"{where}: unknown error class {name!r} (one of {sorted(ERROR_CLASSES)})")
    return str(name)


# --- params ----------------------------------------------------------------------------------------

_GO_ZERO: Mapping[GoKind, Any] = {
    GoKind.STRING: "", GoKind.INT: 0, GoKind.FLOAT: 0, GoKind.BOOL: False,
    GoKind.STRINGS: None, GoKind.INTS: None, GoKind.RAW: None,
}  # fmt: skip
_KINDS = {kind.value: kind for kind in GoKind}


@dataclass(frozen=True)
class ParamsSpec:
    """The bidder's params struct: ``struct`` (its Go name, for json-iterator's texts) and ``fields``
    (json name -> (Go field name, kind)). No fields: the params object is taken as it is."""

    struct: str = ""
    fields: Mapping[str, tuple[str, GoKind]] = field(default_factory=dict)
    null_is_absent: bool = False  # ``"bidder": null`` fails as an absent object does

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> ParamsSpec:
        fields: dict[str, tuple[str, GoKind]] = {}
        for name, spec in (data.get("fields") or {}).items():
            if not (isinstance(spec, list) and len(spec) == 2 and spec[1] in _KINDS):
                raise StepError(f"params.fields.{name}: expected [GoField, kind] with kind one of {sorted(_KINDS)}")
            fields[name] = (str(spec[0]), _KINDS[spec[1]])
        return cls(str(data.get("struct", "")), fields, bool(data.get("null_is_absent", False)))

    def read(self, imp: Mapping[str, Any]) -> dict[str, Any]:
        """The imp's params as Go decodes them into the struct: a field's zero value when null, the
        last occurrence winning, keys matched case-insensitively. Raises ImpExtError (``imp.ext``
        does not decode) or JsonShapeError (the params do not)."""
        params = imp_bidder_params(imp, null_is_absent=self.null_is_absent)
        if not self.fields:
            return params
        out: dict[str, Any] = {}
        for name, value in go_members(params, *self.fields):
            go_name, kind = self.fields[name]
            decoded = go_value(value, kind, f"{self.struct}.{go_name}")
            out[name] = _GO_ZERO[kind] if decoded is None else decoded
        return out


# --- endpoint --------------------------------------------------------------------------------------


def macro_text(value: Any) -> str:
    """A param as Go's ``fmt`` writes it into a string macro (ints as digits, floats as strconv's
    shortest form, booleans as true/false, null as nothing)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float_text(value)
    return str(value)


@dataclass(frozen=True)
class EndpointSpec:
    """``macros``: Go template macro -> the param that fills it (``{Host: env}``); none: the
    configured endpoint is used as it is."""

    macros: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> EndpointSpec:
        macros = data.get("macros") or {}
        if not isinstance(macros, Mapping) or not all(isinstance(v, str) for v in macros.values()):
            raise StepError("endpoint.macros: expected Macro: param names")
        return cls(dict(macros))

    def resolve(self, template: str, params: Mapping[str, Any]) -> str:
        if not self.macros:
            return template
        return resolve_macros(template, {macro: macro_text(params.get(param)) for macro, param in self.macros.items()})


# --- imp.ext ---------------------------------------------------------------------------------------


def _keep(imp: dict[str, Any], params: Mapping[str, Any]) -> dict[str, Any]:
    return imp


def _teqblaze_type(imp: dict[str, Any], params: Mapping[str, Any]) -> dict[str, Any]:
    """``{"bidder": {"type": "publisher", "placementId": ...}}`` for a placement, ``"network"`` with
    the ``endpointId`` else, ``{"type": ""}`` with neither (TeqBlaze's white-label family)."""
    placement, endpoint = params.get("placementId", ""), params.get("endpointId", "")
    if placement:
        bidder = {"type": "publisher", "placementId": placement}
    elif endpoint:
        bidder = {"type": "network", "endpointId": endpoint}
    else:
        bidder = {"type": ""}
    return {**imp, "ext": {"bidder": bidder}}


IMP_EXT_REWRITES: Mapping[str, Callable[[dict[str, Any], Mapping[str, Any]], dict[str, Any]]] = {
    "keep": _keep,
    "teqblaze_type": _teqblaze_type,
}


# --- headers ---------------------------------------------------------------------------------------


def _json(headers: dict[str, str], request: Mapping[str, Any]) -> None:
    headers.update(JSON_HEADERS)


def _content_type(headers: dict[str, str], request: Mapping[str, Any]) -> None:
    headers["Content-Type"] = JSON_HEADERS["Content-Type"]


def _openrtb_25(headers: dict[str, str], request: Mapping[str, Any]) -> None:
    headers["X-Openrtb-Version"] = "2.5"


def _device(headers: dict[str, str], request: Mapping[str, Any]) -> None:
    """``User-Agent`` and ``X-Forwarded-For`` (IPv6, then IPv4: Go adds both values) from the device."""
    device = request.get("device")
    if not isinstance(device, Mapping):
        return
    if isinstance(device.get("ua"), str) and device["ua"]:
        headers["User-Agent"] = device["ua"]
    addresses = [device[key] for key in ("ipv6", "ip") if isinstance(device.get(key), str) and device[key]]
    if addresses:
        headers["X-Forwarded-For"] = ", ".join(addresses)


HEADER_SETS: Mapping[str, Callable[[dict[str, str], Mapping[str, Any]], None]] = {
    "json": _json,
    "content_type": _content_type,
    "openrtb_25": _openrtb_25,
    "device": _device,
}


# --- the answer ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AnswerSpec:
    """How a failed answer is worded: ``status`` ({} = the status), whether a 400 is bad input,
    ``body_class`` (the error class of a body that does not decode) and ``body_text`` ({} = the
    decoder's message, json-iterator's words)."""

    status: str = UNEXPECTED_STATUS
    bad_request_is_input: bool = True
    body_class: str = "generic"
    body_text: str = "{}"

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> AnswerSpec:
        return cls(
            str(data.get("status", UNEXPECTED_STATUS)),
            bool(data.get("bad_request_is_input", True)),
            _class_of(data.get("body_class", "generic"), "answer.body_class"),
            str(data.get("body_text", "{}")),
        )

    @property
    def wording(self) -> AnswerWording:
        return AnswerWording(
            status=self.status,
            bad_request_is_input=self.bad_request_is_input,
            not_an_object=NOT_AN_OBJECT,
            body_text=self.body_text,
            body_error=_ERROR_MAKERS[self.body_class],
        )


# --- bid types -------------------------------------------------------------------------------------


class UntypedBid(Exception):
    """A bid the recipe cannot type; ``error`` is the adapter's wording."""

    def __init__(self, error: BidderError) -> None:
        super().__init__(error.message)
        self.error = error


def _by_mtype(typer: BidTyper, bid: Mapping[str, Any], request: Mapping[str, Any]) -> str | None:
    kind = MTYPE_TO_TYPE.get(bid.get("mtype"))  # type: ignore[arg-type]
    return kind if kind in typer.types else None


def _by_imp(typer: BidTyper, bid: Mapping[str, Any], request: Mapping[str, Any]) -> str | None:
    for imp in request.get("imp") or ():
        if imp.get("id") == bid.get("impid"):
            return first_media_type(imp, typer.order)
    return None


def _by_mtype_then_imp(typer: BidTyper, bid: Mapping[str, Any], request: Mapping[str, Any]) -> str | None:
    return _by_mtype(typer, bid, request) or _by_imp(typer, bid, request)


BID_TYPERS: Mapping[str, Callable[[BidTyper, Mapping[str, Any], Mapping[str, Any]], str | None]] = {
    "mtype": _by_mtype,
    "imp": _by_imp,
    "mtype_then_imp": _by_mtype_then_imp,
}
_ALL_TYPES = ("banner", "video", "audio", "native")


@dataclass(frozen=True)
class BidTyper:
    """``source``: where a bid's type comes from (``BID_TYPERS``); ``types``: the mtypes taken;
    ``order``: the imp's media objects in the order they are looked at; ``error``: the text for a
    bid without a type (``{impid}``, ``{mtype}``) and its ``error_class``."""

    source: str = "mtype"
    types: tuple[str, ...] = _ALL_TYPES
    order: tuple[str, ...] = ("banner", "video", "native", "audio")
    error: str = "Unsupported MType {mtype}"
    error_class: str = "generic"

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> BidTyper:
        source = data.get("source", "mtype")
        if source not in BID_TYPERS:
            raise StepError(f"bid_type.source: unknown {source!r} (one of {sorted(BID_TYPERS)})")
        types, order = tuple(data.get("types", _ALL_TYPES)), tuple(data.get("order", cls.order))
        if not set(types) | set(order) <= set(_ALL_TYPES):
            raise StepError(f"bid_type: media types are {_ALL_TYPES}")
        error = str(data.get("error", cls.error))
        return cls(source, types, order, error, _class_of(data.get("error_class", "generic"), "bid_type.error_class"))

    def type_of(self, bid: Mapping[str, Any], request: Mapping[str, Any]) -> str:
        kind = BID_TYPERS[self.source](self, bid, request)
        if kind is None:
            text = self.error.format(impid=bid.get("impid", ""), mtype=bid.get("mtype", 0))
            raise UntypedBid(_ERROR_MAKERS[self.error_class](text))
        return kind
