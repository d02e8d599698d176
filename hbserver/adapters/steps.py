"""The shared steps recipes are made of (:mod:`hbserver.adapters.recipe`), each a small table of named
behaviours PBS-Go's adapters repeat with other names: reading the params struct and checking it,
filling endpoint macros, rewriting ``imp.ext``, header sets, the wording of a failed answer, typing a
bid and rewriting it."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, quote_plus

import orjson

from hbserver.adapters.base import (
    JSON_HEADERS,
    MTYPE_TO_TYPE,
    BidderError,
    BidderResponse,
    ErrorCode,
    ResponseData,
    TypedBid,
    bad_input,
    bad_server_response,
)
from hbserver.adapters.common import (
    UNEXPECTED_STATUS,
    AnswerWording,
    JsonShapeError,
    expect_object,
    expect_string,
    first_media_type,
    found,
    resolve_macros,
)
from hbserver.adapters.golike import (
    ABSENT_OBJECT,
    GO_HTML_ESCAPES,
    GO_SPACE,
    NOT_AN_OBJECT,
    GoAnswer,
    GoKind,
    ImpExtError,
    go_answer,
    go_field,
    go_fields,
    go_float_text,
    go_int,
    go_json_object,
    go_members,
    go_quote,
    go_value,
    imp_bidder_params,
)

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


def checked_text(text: str, where: str, *args: Any, **kwargs: Any) -> str:
    """``text`` when it formats with the placeholders its step fills, else StepError naming them."""
    try:
        text.format(*args, **kwargs)
    except (KeyError, IndexError, ValueError) as exc:
        fills = ", ".join(["{}"] * len(args) + [f"{{{name}}}" for name in kwargs]) or "none"
        raise StepError(f"{where}: {text!r} has a placeholder other than {fills} ({exc})") from None
    return text


def error_class_name(name: Any, where: str) -> str:
    """``name`` when it is one of :data:`ERROR_CLASSES`; StepError naming ``where`` otherwise."""
    if name not in ERROR_CLASSES:
        raise StepError(f"{where}: unknown error class {name!r} (one of {sorted(ERROR_CLASSES)})")
    return str(name)


# --- params ----------------------------------------------------------------------------------------

_GO_ZERO: Mapping[str, Any] = {
    "string": "", "int": 0, "float64": 0, "bool": False, "[]string": None, "[]int": None,
    "json.RawMessage": None, "string_int": 0, "json.Number": "", "uint64": 0, "map": None,
}  # fmt: skip
_GO_KINDS = {kind.value: kind for kind in GoKind}
_MALFORMED = "Value looks like Number/Boolean/None, but can't find its end: ',' or '}' symbol"
_INT_TEXT = re.compile(r"-?[0-9]+")


def _string_int(value: Any, where: str) -> int | None:
    """``jsonutil.StringInt``: an int, or a string of one ("" is 0); else jsonparser's text. Its
    UnmarshalJSON is called with ``null`` too (json-iterator does not skip it for a value field), and
    jsonparser.ParseInt refuses that."""
    if value == "":
        return None
    if isinstance(value, str) and _INT_TEXT.fullmatch(value):
        digits = value.lstrip("-").lstrip("0") or "0"
        sign = -1 if value.startswith("-") else 1
        value = sign * int(digits) if len(digits) <= 19 else 2**64  # past 19 digits int64 overflows
    if isinstance(value, int) and not isinstance(value, bool):
        if -(2**63) <= value < 2**63:
            return value
        raise JsonShapeError(f"cannot unmarshal {where}: Value is number, but overflowed while parsing")
    raise JsonShapeError(f"cannot unmarshal {where}: {_MALFORMED}")


def _json_number(value: Any, where: str) -> str | None:
    """``json.Number`` as json-iterator reads it: a string as given, a number as its text."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value) if isinstance(value, int) else go_float_text(value)
    raise JsonShapeError(f"cannot unmarshal {where}: readNumberAsString: invalid number, found {found(value)}")


def _uint64(value: Any, where: str) -> int | None:
    """``uint64``: a whole number from 0 to 2**64-1, else JsonShapeError. Its text is not
    json-iterator's: use this kind with a ``params_error`` of the adapter's own fixed words."""
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**64):
        return value
    raise JsonShapeError(f"cannot unmarshal {where}: not a uint64: {found(value)}")


def _map(value: Any, where: str) -> dict[str, Any] | None:
    """``map[string]interface{}``: an object, or null."""
    return None if value is None else expect_object(value, where)


_OWN_KINDS: Mapping[str, Callable[[Any, str], Any]] = {
    "map": _map,
    "string_int": _string_int,
    "json.Number": _json_number,
    "uint64": _uint64,
}
PARAM_KINDS = (*_GO_KINDS, *_OWN_KINDS)
_ITEM_ZERO = {"[]string": "", "[]int": 0}


def decode_kind(value: Any, kind: str, where: str) -> Any:
    """``value`` decoded as a Go field of ``kind`` (one of PARAM_KINDS); None for null."""
    if kind in _OWN_KINDS:
        return _OWN_KINDS[kind](value, where)
    decoded = go_value(value, _GO_KINDS[kind], where)
    if kind in _ITEM_ZERO and decoded is not None:  # a null item is the item's zero value
        return [_ITEM_ZERO[kind] if item is None else item for item in decoded]
    return decoded


@dataclass(frozen=True)
class ParamsSpec:
    """The bidder's params struct: ``struct`` (its Go name, for json-iterator's texts) and ``fields``
    (json name -> (Go field name, kind)). No fields: the params object is taken as it is. ``skip``:
    the adapter does not read params at all (``params: none``)."""

    struct: str = ""
    fields: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    null_is_absent: bool = False  # ``"ext": null`` / ``"bidder": null`` fail as absent objects do
    skip: bool = False
    bidder_only: bool = False  # the ext read as the adapter's own {bidder} struct: no prebid/ae, no bidder = {}

    @classmethod
    def of(cls, data: Mapping[str, Any] | str) -> ParamsSpec:
        if data == "none":
            return cls(skip=True)
        if not isinstance(data, Mapping):
            raise StepError(f"params: expected a mapping or none, got {data!r}")
        fields: dict[str, tuple[str, str]] = {}
        for name, spec in (data.get("fields") or {}).items():
            if not (isinstance(spec, list) and len(spec) == 2 and spec[1] in PARAM_KINDS):
                raise StepError(
                    f"params.fields.{name}: expected [GoField, kind] with kind one of {sorted(PARAM_KINDS)}"
                )
            fields[name] = (str(spec[0]), str(spec[1]))
        return cls(
            str(data.get("struct", "")),
            fields,
            bool(data.get("null_is_absent", False)),
            bidder_only=bool(data.get("bidder_only", False)),
        )

    def read(self, imp: Mapping[str, Any]) -> dict[str, Any]:
        """The imp's params as Go decodes them into the struct: every field, its zero value when
        absent or null, the last occurrence winning, keys matched case-insensitively. Raises
        ImpExtError (``imp.ext`` does not decode) or JsonShapeError (the params do not)."""
        if self.skip:
            return {}
        if self.null_is_absent and "ext" in imp and imp["ext"] is None:  # Go's imp.Ext is empty for null too
            raise ImpExtError(ABSENT_OBJECT)
        params = (
            _bidder_only_params(imp) if self.bidder_only else imp_bidder_params(imp, null_is_absent=self.null_is_absent)
        )
        if not self.fields:
            return params
        out = {name: _GO_ZERO[kind] for name, (_, kind) in self.fields.items()}
        members = list(go_members(params, *self.fields))
        for index, (name, value) in enumerate(members):
            go_name, kind = self.fields[name]
            where = f"{self.struct}.{go_name}"
            try:
                decoded = decode_kind(value, kind, where)
            except JsonShapeError as exc:
                if index + 1 < len(members) and _read_on_after_failure(value, kind):
                    raise JsonShapeError(str(exc).replace(where, go_name, 1)) from None
                raise
            out[name] = _GO_ZERO[kind] if decoded is None else decoded
        return out


def _read_on_after_failure(value: Any, kind: str) -> bool:
    """Whether json-iterator goes on reading the struct's members after ``value`` failed to decode as
    ``kind``: ReadString has consumed the value's first character, and a one-character value (a digit)
    leaves the ``,`` before the next member. Each field decoded after that wraps the error in its Go
    name, so PBS-Go's text then names the failing field alone (``cannot unmarshal PubID: ...``),
    without the struct (smartrtb's bad-pub-value fixture)."""
    return kind == "string" and type(value) is int and 0 <= value <= 9


def _bidder_only_params(imp: Mapping[str, Any]) -> dict[str, Any]:
    """``imp.ext.bidder`` of an ext decoded as ``{Bidder T}`` alone: ImpExtError when the ext is absent
    or no object; an absent or null bidder is empty; JsonShapeError when it is no object."""
    if "ext" not in imp:
        raise ImpExtError(ABSENT_OBJECT)
    try:
        ext = expect_object(imp["ext"], "")
    except JsonShapeError as exc:
        raise ImpExtError(str(exc)) from None
    return expect_object(go_field(ext, "bidder"), "")


_SAFE_HOST = re.compile(r"[a-zA-Z0-9.-]+(:[0-9]+)?")


def is_safe_host(host: Any) -> bool:
    """PBS-Go's ``urlutil.IsSafeHost``: letters, digits, dots and dashes, an optional port."""
    return isinstance(host, str) and _SAFE_HOST.fullmatch(host) is not None


def _uuid_length(value: Any) -> bool:
    """A text of 32 to 36 bytes (a UUID/GUID with or without dashes, as Go's ``len`` counts)."""
    return isinstance(value, str) and 32 <= len(value.encode()) <= 36


def _above_zero(value: Any) -> bool:
    """A number of at least 1 (Go's ``x < 1`` refusal of an int param)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 1


PARAM_CHECKS: Mapping[str, Callable[[Any], bool]] = {
    "nonempty": bool,  # Go's len(x) > 0 / x != 0
    "above_zero": _above_zero,
    "safe_host": is_safe_host,
    "uuid_length": _uuid_length,
    "empty_or_safe_host": lambda value: value == "" or is_safe_host(value),  # only a set host is checked
}


@dataclass(frozen=True)
class ParamCheck:
    """A rule (``PARAM_CHECKS``) every one of ``params`` must pass, else the imp fails with ``error``."""

    rule: str
    params: tuple[str, ...]
    error: str
    error_class: str = "bad_input"

    @classmethod
    def of(cls, data: Any) -> ParamCheck:
        if not (isinstance(data, Mapping) and data.get("rule") in PARAM_CHECKS and isinstance(data.get("error"), str)):
            raise StepError(f"checks: expected {{rule, params, error}} with rule one of {sorted(PARAM_CHECKS)}")
        params = data.get("params") or []
        if not isinstance(params, list) or not all(isinstance(name, str) for name in params):
            raise StepError("checks: params is a list of param names")
        error_class = error_class_name(data.get("class", "bad_input"), "checks")
        return cls(data["rule"], tuple(params), data["error"], error_class)

    def failure(self, params: Mapping[str, Any]) -> BidderError | None:
        rule = PARAM_CHECKS[self.rule]
        if all(rule(params.get(name)) for name in self.params):
            return None
        return _ERROR_MAKERS[self.error_class](self.error)


def _banner_or_video(imp: Mapping[str, Any]) -> bool:
    return imp.get("banner") is not None or imp.get("video") is not None


def _banner_format_set(imp: Mapping[str, Any]) -> bool:
    """No banner, or one whose ``format`` is not null (Go: ``Format != nil``)."""
    banner = imp.get("banner")
    return not isinstance(banner, Mapping) or banner.get("format") is not None


def _banner_format_nonempty(imp: Mapping[str, Any]) -> bool:
    """No banner, or one with at least one format."""
    banner = imp.get("banner")
    return not isinstance(banner, Mapping) or bool(banner.get("format"))


IMP_CHECKS: Mapping[str, Callable[[Mapping[str, Any]], bool]] = {
    "banner_or_video": _banner_or_video,
    "banner_format_set": _banner_format_set,
    "banner_format_nonempty": _banner_format_nonempty,
}


REQUEST_CHECKS: Mapping[str, Callable[[Mapping[str, Any]], bool]] = {
    "device": lambda request: request.get("device") is not None,
    "site_or_app": lambda request: request.get("site") is not None or request.get("app") is not None,
    "app": lambda request: request.get("app") is not None,
}


@dataclass(frozen=True)
class ImpCheck:
    """A rule (``IMP_CHECKS``) the imp must pass before its params are read, else it fails with ``error``."""

    rule: str
    error: str
    error_class: str = "bad_input"

    @classmethod
    def of(cls, data: Any, where: str = "imp_checks", rules: Mapping[str, Any] = IMP_CHECKS) -> ImpCheck:
        """``{rule, error, class}``; ``where`` and ``rules``: ``request_checks`` and REQUEST_CHECKS too."""
        if not (isinstance(data, Mapping) and data.get("rule") in rules and isinstance(data.get("error"), str)):
            raise StepError(f"{where}: expected {{rule, error}} with rule one of {sorted(rules)}")
        checked_text(data["error"], where, id="")
        return cls(data["rule"], data["error"], error_class_name(data.get("class", "bad_input"), where))

    def failure(self, imp: Mapping[str, Any], rules: Mapping[str, Any] = IMP_CHECKS) -> BidderError | None:
        """None when the imp (or, with REQUEST_CHECKS, the request) passes, else the error (``{id}``:
        its id)."""
        if rules[self.rule](imp):
            return None
        return _ERROR_MAKERS[self.error_class](self.error.format(id=imp.get("id", "")))


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


_PATH_SAFE = "$&+:=@"  # what Go's url.PathEscape leaves besides letters, digits and -_.~
MACRO_ESCAPES: Mapping[str, Callable[[str], str]] = {
    "none": lambda text: text,
    "path": lambda text: quote(text, safe=_PATH_SAFE),  # url.PathEscape
    "query": lambda text: quote_plus(text, safe=""),  # url.QueryEscape
}


@dataclass(frozen=True)
class MacroSpec:
    """How one endpoint macro is filled: from ``param``; ``trim``: white space taken off its ends
    (Go's ``strings.TrimSpace``); through ``map`` (a value not in it becomes ``default`` when one is
    given, else stays); an empty value becomes ``default``; then ``escape`` (``MACRO_ESCAPES``)."""

    param: str
    map: Mapping[str, str] = field(default_factory=dict)
    default: str | None = None
    escape: str = "none"
    trim: bool = False

    @classmethod
    def of(cls, data: Any) -> MacroSpec:
        if isinstance(data, MacroSpec):
            return data
        if isinstance(data, str):
            return cls(data)
        if not (isinstance(data, Mapping) and isinstance(data.get("param"), str)):
            raise StepError("endpoint.macros: expected Macro: param or {param, map, default, escape}")
        mapping = data.get("map") or {}
        if not isinstance(mapping, Mapping) or data.get("escape", "none") not in MACRO_ESCAPES:
            raise StepError(f"endpoint.macros: map is value: text, escape one of {sorted(MACRO_ESCAPES)}")
        if not isinstance(data.get("trim", False), bool):
            raise StepError("endpoint.macros: trim is true or false")
        default = data.get("default")
        escape = str(data.get("escape", "none"))
        return cls(
            data["param"],
            {str(k): str(v) for k, v in mapping.items()},
            None if default is None else str(default),
            escape,
            data.get("trim", False),
        )

    def text(self, params: Mapping[str, Any]) -> str:
        text = macro_text(params.get(self.param))
        if self.trim:
            text = text.strip(GO_SPACE)
        if self.map:
            text = self.map.get(text, text if self.default is None else self.default)
        elif not text and self.default is not None:
            text = self.default
        return MACRO_ESCAPES[self.escape](text)


@dataclass(frozen=True)
class EndpointSpec:
    """``macros``: Go template macro -> how it is filled (``{Host: env}``, or a :class:`MacroSpec`);
    none: the configured endpoint is used as it is."""

    macros: Mapping[str, MacroSpec] = field(default_factory=dict)
    required: bool = False  # an empty configured endpoint is refused when the adapter is built
    format: str = ""  # the URI as Go's Sprintf makes it: {endpoint}, {param} and {Macro} placeholders
    default: str = ""  # the endpoint when none is configured

    def __post_init__(self) -> None:  # a bare param name is a MacroSpec of that param
        specs = {macro: MacroSpec.of(spec) for macro, spec in self.macros.items()}
        object.__setattr__(self, "macros", specs)

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> EndpointSpec:
        macros = data.get("macros") or {}
        if not isinstance(macros, Mapping):
            raise StepError("endpoint.macros: expected Macro: param names")
        specs = {str(macro): MacroSpec.of(spec) for macro, spec in macros.items()}
        return cls(
            specs, bool(data.get("required", False)), str(data.get("format") or ""), str(data.get("default") or "")
        )

    def resolve(self, template: str, params: Mapping[str, Any]) -> str:
        template = template or self.default
        if self.format:
            texts = {name: macro_text(value) for name, value in params.items()}
            texts.update((macro, spec.text(params)) for macro, spec in self.macros.items())
            template = self.format.format_map({**texts, "endpoint": template})
        if not self.macros:
            return template
        return resolve_macros(template, {macro: spec.text(params) for macro, spec in self.macros.items()})


# --- imp.ext ---------------------------------------------------------------------------------------


def _keep(imp: dict[str, Any], params: Mapping[str, Any], param: str = "") -> dict[str, Any]:
    return imp


def _teqblaze_type(imp: dict[str, Any], params: Mapping[str, Any], param: str = "") -> dict[str, Any]:
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


def _teqblaze_type_or_keep(imp: dict[str, Any], params: Mapping[str, Any], param: str = "") -> dict[str, Any]:
    """``teqblaze_type``, but with neither a placementId nor an endpointId the imp's ext is kept."""
    if params.get("placementId") or params.get("endpointId"):
        return _teqblaze_type(imp, params)
    return imp


def _drop(imp: dict[str, Any], params: Mapping[str, Any], param: str = "") -> dict[str, Any]:
    """No ``ext`` at all (Go sets ``imp.Ext = nil``)."""
    return {key: value for key, value in imp.items() if key != "ext"}


def _params(imp: dict[str, Any], params: Mapping[str, Any], param: str = "") -> dict[str, Any]:
    """The params struct itself as the ``ext`` (Go re-encodes the decoded struct: every field)."""
    return {**imp, "ext": dict(params)}


def _stored_request(imp: dict[str, Any], params: Mapping[str, Any], param: str = "") -> dict[str, Any]:
    """``adapters.ExtImpBidder`` written again with ``bidder: {}`` and ``prebid`` replaced by the
    stored request named by ``param``; a non-zero ``ae`` kept."""
    ext: dict[str, Any] = {"bidder": {}, "prebid": {"storedrequest": {"id": macro_text(params.get(param))}}}
    ae = go_field(imp["ext"], "ae") if isinstance(imp.get("ext"), Mapping) else None
    if ae:
        ext["ae"] = ae
    return {**imp, "ext": ext}


def _param_member(imp: dict[str, Any], params: Mapping[str, Any], param: str = "") -> dict[str, Any]:
    """``{param: <its value>}`` as the ext; no ext when the param is null or absent."""
    out = _drop(imp, params)
    if params.get(param) is not None:
        out["ext"] = {param: params[param]}
    return out


def _bidder(imp: dict[str, Any], params: Mapping[str, Any], param: str = "") -> dict[str, Any]:
    """The ext's ``bidder`` member, as it came, as the whole ext (Go: ``imp.Ext = bidderExt.Bidder``)."""
    ext = imp.get("ext")
    return {**imp, "ext": go_field(ext, "bidder") if isinstance(ext, Mapping) else None}


def _params_under(imp: dict[str, Any], params: Mapping[str, Any], param: str = "") -> dict[str, Any]:
    """The params struct under one key as the whole ext (``{"<bidder>": {...}}``; ``param`` names the key)."""
    return {**imp, "ext": {param: dict(params)}}


def _params_under_omitempty(imp: dict[str, Any], params: Mapping[str, Any], param: str = "") -> dict[str, Any]:
    """``params_under`` with the struct's omitempty fields: a zero (empty) value left out."""
    return {**imp, "ext": {param: {name: value for name, value in params.items() if value not in ("", 0, None)}}}


def _params_omitempty(imp: dict[str, Any], params: Mapping[str, Any], param: str = "") -> dict[str, Any]:
    """``params`` with the struct's omitempty fields: a zero (empty) value left out."""
    return {**imp, "ext": {name: value for name, value in params.items() if value not in ("", 0, None)}}


def _publisher_type(imp: dict[str, Any], params: Mapping[str, Any], param: str = "") -> dict[str, Any]:
    """``{"bidder": {"type": "publisher", "placementId": ...}}``, the placement left out when empty."""
    bidder = {"type": "publisher"}
    if params.get("placementId"):
        bidder["placementId"] = params["placementId"]
    return {**imp, "ext": {"bidder": bidder}}


# (imp, params, the recipe's ``imp_ext_param``) -> the imp with its ext rewritten
IMP_EXT_REWRITES: Mapping[str, Callable[[dict[str, Any], Mapping[str, Any], str], dict[str, Any]]] = {
    "keep": _keep,
    "teqblaze_type": _teqblaze_type,
    "drop": _drop,
    "params": _params,
    "stored_request": _stored_request,
    "param_member": _param_member,
    "params_under": _params_under,
    "params_under_omitempty": _params_under_omitempty,
    "params_omitempty": _params_omitempty,
    "teqblaze_type_or_keep": _teqblaze_type_or_keep,
    "publisher_type": _publisher_type,
    "bidder": _bidder,
}


# --- imp rewrites ----------------------------------------------------------------------------------


def _sized_from_format(imp: dict[str, Any], sized: Callable[[Mapping[str, Any]], bool]) -> dict[str, Any]:
    """``imp`` with a banner that is not ``sized`` given its first format's ``w`` and ``h``."""
    banner = imp.get("banner")
    if not isinstance(banner, dict) or sized(banner):
        return imp
    formats = banner.get("format")
    if not (isinstance(formats, list) and formats):
        return imp
    first = formats[0] if isinstance(formats[0], dict) else {}
    return {**imp, "banner": {**banner, "w": first.get("w") or 0, "h": first.get("h") or 0}}


def _banner_size(imp: dict[str, Any]) -> dict[str, Any]:
    """A banner without ``w`` or ``h`` sized from its first format (Go: ``W == nil || H == nil``)."""
    return _sized_from_format(imp, lambda banner: banner.get("w") is not None and banner.get("h") is not None)


def _banner_size_nonzero(imp: dict[str, Any]) -> dict[str, Any]:
    """A banner whose ``w`` or ``h`` is absent or 0 sized from its first format."""
    return _sized_from_format(imp, lambda banner: bool(banner.get("w")) and bool(banner.get("h")))


def _banner_size_unsized(imp: dict[str, Any]) -> dict[str, Any]:
    """A banner with neither ``w`` nor ``h`` sized from its first format (Go: ``W == nil && H == nil``)."""
    return _sized_from_format(imp, lambda banner: banner.get("w") is not None or banner.get("h") is not None)


def is_rewarded(imp: Mapping[str, Any]) -> bool:
    """Whether the imp's ``ext.prebid.is_rewarded_inventory`` is 1 (False when its ext does not decode)."""
    try:
        prebid = expect_object(go_field(expect_object(imp.get("ext"), ""), "prebid"), "")
        return go_int(go_field(prebid, "is_rewarded_inventory"), "") == 1
    except JsonShapeError:
        return False


def _rewarded_video_ext(imp: dict[str, Any]) -> dict[str, Any]:
    """A rewarded imp's video gets ``ext: {"rewarded": 1}`` (its own ext replaced)."""
    video = imp.get("video")
    if not isinstance(video, dict) or not is_rewarded(imp):
        return imp
    return {**imp, "video": {**video, "ext": {"rewarded": 1}}}


def _banner_size_always(imp: dict[str, Any]) -> dict[str, Any]:
    """A banner with formats sized from its first one, its own ``w``/``h`` replaced."""
    return _sized_from_format(imp, lambda banner: False)


IMP_REWRITES: Mapping[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "banner_size_always": _banner_size_always,
    "rewarded_video_ext": _rewarded_video_ext,
    "banner_size": _banner_size,
    "banner_size_unsized": _banner_size_unsized,
    "banner_size_nonzero": _banner_size_nonzero,
    "drop_ext": lambda imp: _drop(imp, {}),  # every imp sent without its ext (Go: imp.Ext = nil for each)
    # every imp's floor currency USD, whatever it was (after ``floors: usd_first`` converted a floor; tpmn)
    "floorcur_usd": lambda imp: {**imp, "bidfloorcur": "USD"},
}


def _go_interface(value: Any) -> Any:
    """A JSON value decoded into Go's ``interface{}`` (numbers are float64), ready to be written again:
    a whole float below 1e21 written, as Go writes it, without a fraction."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**53:
        value = float(value)
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    if isinstance(value, list):
        return [_go_interface(item) for item in value]
    if isinstance(value, dict):
        return {key: _go_interface(item) for key, item in value.items()}
    return value


def native_wrapped(imp: dict[str, Any]) -> dict[str, Any]:
    """The imp with its native request wrapped in ``{"native": ...}`` (yeahmobi, zmaticoo), written
    again as Go writes a map (keys sorted, HTML escaped); the imp as it is without a native object or
    when the request already has a ``native`` member. JsonShapeError (json-iterator's words) when the
    request does not decode as an object or null."""
    native = imp.get("native")
    if not isinstance(native, Mapping):
        return imp
    request = go_json_object(native.get("request") or "")
    if not (request is None or isinstance(request, dict)):
        raise JsonShapeError("ReadMapCB: expect { or n, but found " + found(request))
    if request and "native" in request:
        return imp
    wrapped = orjson.dumps({"native": _go_interface(request)}, option=orjson.OPT_SORT_KEYS).decode()
    return {**imp, "native": {**native, "request": wrapped.translate(GO_HTML_ESCAPES)}}


# --- the request -----------------------------------------------------------------------------------


def with_publisher_id(request: Mapping[str, Any], publisher: str) -> dict[str, Any]:
    """The request with ``publisher.id`` set in its app when it has one, else in its site (one is
    made when it has neither); the publisher's other fields kept."""
    holder = "app" if request.get("app") is not None else "site"
    place = request.get(holder)
    place = dict(place) if isinstance(place, Mapping) else {}
    existing = place.get("publisher")
    place["publisher"] = {**(existing if isinstance(existing, Mapping) else {}), "id": publisher}
    return {**request, holder: place}


# --- headers ---------------------------------------------------------------------------------------


def _json(headers: dict[str, str], request: Mapping[str, Any]) -> None:
    headers.update(JSON_HEADERS)


def _content_type(headers: dict[str, str], request: Mapping[str, Any]) -> None:
    headers["Content-Type"] = JSON_HEADERS["Content-Type"]


def _content_type_plain(headers: dict[str, str], request: Mapping[str, Any]) -> None:
    headers["Content-Type"] = "application/json"


def _json_spaced(headers: dict[str, str], request: Mapping[str, Any]) -> None:
    headers.update({"Content-Type": "application/json; charset=utf-8", "Accept": "application/json"})


def _json_plain(headers: dict[str, str], request: Mapping[str, Any]) -> None:
    headers.update({"Content-Type": "application/json", "Accept": "application/json"})


def _component_id(headers: dict[str, str], request: Mapping[str, Any]) -> None:
    headers["Componentid"] = "prebid-go"


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


def _forwarded_for(headers: dict[str, str], request: Mapping[str, Any]) -> None:
    """``X-Forwarded-For``: the device's IPv6, then its IPv4 (Go adds both values)."""
    addresses = [_text_at(request, "device", key) for key in ("ipv6", "ip")]
    _set_if(headers, "X-Forwarded-For", ", ".join(filter(None, addresses)))


def _forwarded_for_v4_first(headers: dict[str, str], request: Mapping[str, Any]) -> None:
    """``X-Forwarded-For``: the device's IPv4, then its IPv6 (Go adds both values)."""
    addresses = [_text_at(request, "device", key) for key in ("ip", "ipv6")]
    _set_if(headers, "X-Forwarded-For", ", ".join(filter(None, addresses)))


def _text_at(request: Mapping[str, Any], holder: str, name: str) -> str:
    """``request[holder][name]`` when it is a string, else ""."""
    place = request.get(holder)
    value = place.get(name) if isinstance(place, Mapping) else None
    return value if isinstance(value, str) else ""


def _set_if(headers: dict[str, str], header: str, value: str) -> None:
    if value:
        headers[header] = value


def _user_agent(headers: dict[str, str], request: Mapping[str, Any]) -> None:
    _set_if(headers, "User-Agent", _text_at(request, "device", "ua"))


def _ip_v4_first(headers: dict[str, str], request: Mapping[str, Any]) -> None:
    """One ``X-Forwarded-For``: the device's IPv4, else its IPv6."""
    _set_if(headers, "X-Forwarded-For", _text_at(request, "device", "ip") or _text_at(request, "device", "ipv6"))


def _ip(headers: dict[str, str], request: Mapping[str, Any]) -> None:
    """``X-Forwarded-For``: the device's IPv4 alone."""
    _set_if(headers, "X-Forwarded-For", _text_at(request, "device", "ip"))


def _accept_language(headers: dict[str, str], request: Mapping[str, Any]) -> None:
    _set_if(headers, "Accept-Language", _text_at(request, "device", "language"))


def _dnt(headers: dict[str, str], request: Mapping[str, Any]) -> None:
    """``Dnt`` (Go's canonical ``DNT``): the device's ``dnt`` when set (0 too)."""
    device = request.get("device")
    dnt = device.get("dnt") if isinstance(device, Mapping) else None
    if isinstance(dnt, int) and not isinstance(dnt, bool):
        headers["Dnt"] = str(dnt)


def _openrtb_24(headers: dict[str, str], request: Mapping[str, Any]) -> None:
    headers["X-Openrtb-Version"] = "2.4"


def _referer(headers: dict[str, str], request: Mapping[str, Any]) -> None:
    _set_if(headers, "Referer", _text_at(request, "site", "page"))


def _site_referer(headers: dict[str, str], request: Mapping[str, Any]) -> None:
    """``Referer``: the site's page, sent (even empty) whenever there is a site."""
    if isinstance(request.get("site"), Mapping):
        headers["Referer"] = _text_at(request, "site", "page")


def _cookie_uids(headers: dict[str, str], request: Mapping[str, Any]) -> None:
    buyeruid = _text_at(request, "user", "buyeruid")
    _set_if(headers, "Cookie", buyeruid and "uids=" + buyeruid)


HEADER_SETS: Mapping[str, Callable[[dict[str, str], Mapping[str, Any]], None]] = {
    "user_agent": _user_agent,
    "ip_v4_first": _ip_v4_first,
    "referer": _referer,
    "ip": _ip,
    "accept_language": _accept_language,
    "dnt": _dnt,
    "openrtb_24": _openrtb_24,
    "site_referer": _site_referer,
    "cookie_uids": _cookie_uids,
    "json": _json,
    "json_plain": _json_plain,
    "json_spaced": _json_spaced,
    "component_id": _component_id,
    "content_type": _content_type,
    "content_type_plain": _content_type_plain,
    "openrtb_25": _openrtb_25,
    "device": _device,
    "forwarded_for": _forwarded_for,
    "forwarded_for_v4_first": _forwarded_for_v4_first,
    "ip_header": lambda headers, request: _set_if(headers, "Ip", _text_at(request, "device", "ip")),
    "origin": lambda headers, request: _set_if(headers, "Origin", _text_at(request, "site", "domain")),
    "site_ref": lambda headers, request: _set_if(headers, "Referer", _text_at(request, "site", "ref")),
    # one X-Forwarded-For: the device's IPv6, else its IPv4
    "ip_v6_first": lambda headers, request: _set_if(
        headers, "X-Forwarded-For", _text_at(request, "device", "ipv6") or _text_at(request, "device", "ip")
    ),
}


# --- the answer ------------------------------------------------------------------------------------


_STD_KINDS = {str: "string", bool: "bool", list: "array", int: "number", float: "number"}


def std_answer(body: bytes) -> GoAnswer:
    """``body`` decoded as Go's ``encoding/json`` decodes a bid response (a few adapters use it, not
    jsonutil): its texts for a body that is not JSON or not an object, json-iterator's beyond that."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        first = body.lstrip(b" \t\n\r")[:1].decode("latin-1")
        raise JsonShapeError(
            f"invalid character {first!r} looking for beginning of value" if first else "unexpected end of JSON input"
        ) from None
    if data is not None and not isinstance(data, dict):
        raise JsonShapeError(
            f"json: cannot unmarshal {_STD_KINDS[type(data)]} into Go value of type openrtb2.BidResponse"
        )
    return go_answer(body)


ANSWER_DECODERS: Mapping[str, Callable[[bytes], GoAnswer]] = {"jsoniter": go_answer, "encoding_json": std_answer}


@dataclass(frozen=True)
class AnswerSpec:
    """How an answer is read and a failed one worded: ``status`` ({} = the status, {body} = the
    answer's body), whether a 400 is bad input, ``status_class`` (the error class of any other failure
    status), ``statuses`` (a status's own text, or a range's: ``5xx``), ``input_statuses`` (the
    failure statuses that are bad input, instead of 400 alone; ``4xx`` for the range),
    ``no_bid_statuses`` (besides 204), ``body_class`` and ``body_text`` for a body that does not
    decode ({} = the decoder's message), ``empty_body`` (``decode``, or ``no_bids``: an empty 200 is
    no answer), the ``decoder`` (``ANSWER_DECODERS``) and ``no_content`` (``none``: a 204 is no
    answer; ``response``: an empty response; ``error``: a failure, worded as any other status) and
    ``read_statuses``: when given, the only statuses looked at, any other read as a 200 is (adman,
    beop: PBS-Go's adapters that check a few statuses and decode the body of the rest)."""

    status: str = UNEXPECTED_STATUS
    bad_request_is_input: bool = True
    body_class: str = "generic"
    body_text: str = "{}"
    status_class: str = "bad_server_response"
    statuses: Mapping[int | str, str] = field(default_factory=dict)
    empty_body: str = "decode"
    decoder: str = "jsoniter"
    input_statuses: frozenset[int] | None = None
    no_bid_statuses: frozenset[int] = frozenset()
    no_content: str = "none"
    read_statuses: frozenset[int] | None = None

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> AnswerSpec:
        statuses = data.get("statuses") or {}
        if not isinstance(statuses, Mapping) or not all(
            (isinstance(k, int) or (isinstance(k, str) and re.fullmatch(r"[1-5]xx", k))) and isinstance(v, str)
            for k, v in statuses.items()
        ):
            raise StepError("answer.statuses: expected status (or 4xx, 5xx): text")
        for text in (*statuses.values(), str(data.get("status", UNEXPECTED_STATUS))):
            checked_text(text, "answer.status", 0, body="")
        checked_text(str(data.get("body_text", "{}")), "answer.body_text", "")
        if data.get("empty_body", "decode") not in ("decode", "no_bids"):
            raise StepError("answer.empty_body: decode or no_bids")
        if data.get("decoder", "jsoniter") not in ANSWER_DECODERS:
            raise StepError(f"answer.decoder: one of {sorted(ANSWER_DECODERS)}")
        if data.get("no_content", "none") not in ("none", "response", "error"):
            raise StepError("answer.no_content: none, response or error")
        inputs, read = data.get("input_statuses"), data.get("read_statuses")
        return cls(
            str(data.get("status", UNEXPECTED_STATUS)),
            bool(data.get("bad_request_is_input", True)),
            error_class_name(data.get("body_class", "generic"), "answer.body_class"),
            str(data.get("body_text", "{}")),
            error_class_name(data.get("status_class", "bad_server_response"), "answer.status_class"),
            dict(statuses),
            str(data.get("empty_body", "decode")),
            str(data.get("decoder", "jsoniter")),
            None if inputs is None else _status_set(inputs, "answer.input_statuses"),
            _status_set(data.get("no_bid_statuses") or [], "answer.no_bid_statuses"),
            str(data.get("no_content", "none")),
            None if read is None else _status_set(read, "answer.read_statuses"),
        )

    @property
    def wording(self) -> AnswerWording:
        return AnswerWording(
            status=self.status,
            bad_request=self.statuses.get(400),
            bad_request_is_input=self.bad_request_is_input,
            status_error=_ERROR_MAKERS[self.status_class],
            not_an_object=NOT_AN_OBJECT,
            body_text=self.body_text,
            body_error=_ERROR_MAKERS[self.body_class],
        )

    def status_failure(self, response: ResponseData) -> list[BidderError] | None:
        """None for 200 (the body is read); [] for no bids (204, ``no_bid_statuses``); else the error."""
        status = response.status
        if status == 200 or (self.read_statuses is not None and status not in self.read_statuses):
            return None
        if (status == 204 and self.no_content != "error") or status in self.no_bid_statuses:
            return []
        if self.input_statuses is None:
            is_input = status == 400 and self.bad_request_is_input
        else:
            is_input = status in self.input_statuses
        text = self.statuses.get(status) or self.statuses.get(f"{status // 100}xx") or self.status
        text = text.format(status, body=response.body.decode(errors="replace"))
        return [bad_input(text) if is_input else _ERROR_MAKERS[self.status_class](text)]

    def decode(self, response: ResponseData) -> tuple[GoAnswer | None, list[BidderError]]:
        """The answer, or (None, [the error]) / (None, []) for no answer (a no-bid status, or an empty
        body when ``empty_body`` is ``no_bids``)."""
        failure = self.status_failure(response)
        if failure is not None:
            return None, failure
        if self.empty_body == "no_bids" and not response.body:
            return None, []
        try:
            return ANSWER_DECODERS[self.decoder](response.body), []
        except JsonShapeError as exc:
            return None, [self.wording.body_failure(str(exc))]


def _status_set(data: Any, where: str) -> frozenset[int]:
    """Statuses from a list of ints, or ``4xx``/``5xx`` for a range, ``any`` for every status."""
    if data == "any":
        return frozenset(range(100, 600))
    if isinstance(data, str) and re.fullmatch(r"[1-5]xx", data):
        start = int(data[0]) * 100
        return frozenset(range(start, start + 100))
    if isinstance(data, list) and all(isinstance(item, int) and not isinstance(item, bool) for item in data):
        return frozenset(data)
    raise StepError(f"{where}: expected a list of statuses or 4xx/5xx")


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
            return first_media_type(imp, typer.order) or typer.fallback
    if typer.no_imp_error is not None:
        raise typer.untyped(bid, typer.no_imp_error)
    return typer.fallback


def _by_single_imp(typer: BidTyper, bid: Mapping[str, Any], request: Mapping[str, Any]) -> str | None:
    """The one media object (of ``order``) of the bid's imps; None when they have none or several."""
    kinds = [
        kind
        for imp in request.get("imp") or ()
        if imp.get("id") == bid.get("impid")
        for kind in typer.order
        if imp.get(kind) is not None
    ]
    return kinds[0] if len(kinds) == 1 else None


def _by_ext_media_type(typer: BidTyper, bid: Mapping[str, Any], request: Mapping[str, Any]) -> str | None:
    """``bid.ext.<ext_field>`` (``mediaType`` unless the typer names another; a dotted name walks down
    the ext) when it names one of ``types``."""
    kind: Any = bid.get("ext")
    for name in typer.ext_field.split("."):
        kind = go_field(kind, name) if isinstance(kind, Mapping) else None
    return kind if kind in typer.types else None


def _by_ext_media_type_then_single_imp(
    typer: BidTyper, bid: Mapping[str, Any], request: Mapping[str, Any]
) -> str | None:
    return _by_ext_media_type(typer, bid, request) or _by_single_imp(typer, bid, request)


def _by_mtype_then_single_imp(typer: BidTyper, bid: Mapping[str, Any], request: Mapping[str, Any]) -> str | None:
    return _by_mtype(typer, bid, request) or _by_single_imp(typer, bid, request)


def _by_mtype_then_imp(typer: BidTyper, bid: Mapping[str, Any], request: Mapping[str, Any]) -> str | None:
    return _by_mtype(typer, bid, request) or _by_imp(typer, bid, request)


def _by_ext_media_type_then_imp(typer: BidTyper, bid: Mapping[str, Any], request: Mapping[str, Any]) -> str | None:
    return _by_ext_media_type(typer, bid, request) or _by_imp(typer, bid, request)


def ext_prebid_type(bid: Mapping[str, Any]) -> str | None:
    """``bid.ext.prebid.type`` as ``openrtb_ext.ExtBid`` decodes it: None without ``prebid``;
    JsonShapeError when ``ext`` is absent or does not decode."""
    if "ext" not in bid:
        raise JsonShapeError(ABSENT_OBJECT)
    prebid = go_field(expect_object(bid["ext"], ""), "prebid")
    if prebid is None:
        return None
    return expect_string(go_field(expect_object(prebid, "openrtb_ext.ExtBid.Prebid"), "type"), "BidType")


def _read_ext_type(typer: BidTyper, bid: Mapping[str, Any]) -> str | None:
    try:
        return ext_prebid_type(bid)
    except JsonShapeError:
        raise typer.untyped(bid, typer.ext_error) from None


def _by_ext_prebid(typer: BidTyper, bid: Mapping[str, Any], request: Mapping[str, Any]) -> str | None:
    """``ParseBidType(bid.ext.prebid.type)``: an unknown type fails in its own words."""
    kind = _read_ext_type(typer, bid)
    if kind is None:
        return None
    if kind not in _ALL_TYPES:
        raise UntypedBid(BidderError(f"invalid BidType: {kind}"))
    return kind


def _by_ext_prebid_as_is(typer: BidTyper, bid: Mapping[str, Any], request: Mapping[str, Any]) -> str | None:
    """``bid.ext.prebid.type`` unchecked by the adapter (a type hbserver does not know is untyped)."""
    kind = _read_ext_type(typer, bid)
    return kind if kind in _ALL_TYPES else None


def _by_ext_prebid_or_banner(typer: BidTyper, bid: Mapping[str, Any], request: Mapping[str, Any]) -> str | None:
    """``bid.ext.prebid.type``: video, native or audio as named, any other non-empty text banner."""
    kind = _read_ext_type(typer, bid)
    if not kind:
        return None
    return kind if kind in ("video", "native", "audio") else "banner"


def _by_imp_then_ext_prebid(typer: BidTyper, bid: Mapping[str, Any], request: Mapping[str, Any]) -> str | None:
    return _by_imp(typer, bid, request) or _by_ext_prebid(typer, bid, request)


def _fixed(typer: BidTyper, bid: Mapping[str, Any], request: Mapping[str, Any]) -> str | None:
    """Every bid has the one type ``types`` names."""
    return typer.types[0]


BID_TYPERS: Mapping[str, Callable[[BidTyper, Mapping[str, Any], Mapping[str, Any]], str | None]] = {
    "mtype": _by_mtype,
    "imp": _by_imp,
    "mtype_then_imp": _by_mtype_then_imp,
    "ext_media_type_then_imp": _by_ext_media_type_then_imp,
    "single_imp": _by_single_imp,
    "mtype_then_single_imp": _by_mtype_then_single_imp,
    "ext_media_type": _by_ext_media_type,
    "ext_media_type_then_single_imp": _by_ext_media_type_then_single_imp,
    "ext_prebid": _by_ext_prebid,
    "ext_prebid_as_is": _by_ext_prebid_as_is,
    "ext_prebid_or_banner": _by_ext_prebid_or_banner,
    "imp_then_ext_prebid": _by_imp_then_ext_prebid,
    "fixed": _fixed,
}
_ALL_TYPES = ("banner", "video", "audio", "native")
_UNTYPED_FILLS: Mapping[str, Any] = {"impid": "", "mtype": 0, "id": "", "quoted_impid": ""}


def _fallback(value: Any) -> str | None:
    if value is not None and value not in _ALL_TYPES:
        raise StepError(f"bid_type.fallback: one of {_ALL_TYPES}")
    return value


@dataclass(frozen=True)
class BidTyper:
    """``source``: where a bid's type comes from (``BID_TYPERS``); ``types``: the mtypes taken (for
    ``fixed``, the one type); ``order``: the imp's media objects in the order they are looked at;
    ``error``: the text for a bid without a type (``{impid}``, ``{mtype}``, ``{id}``,
    ``{quoted_impid}``: Go's %q) and its ``error_class``;
    ``ext_error``: the text when ``bid.ext`` does not decode (default ``error``); ``no_imp_error``: the
    text when no imp has the bid's impid (by imp; default ``error``); ``fallback``: the type of a bid
    the source leaves untyped (by imp: one whose imp has none of ``order``'s media objects, or that
    has no imp and no ``no_imp_error``; default: untyped); ``ext_field``: the ``bid.ext`` member that
    names the type (by ext media type)."""

    source: str = "mtype"
    types: tuple[str, ...] = _ALL_TYPES
    order: tuple[str, ...] = ("banner", "video", "native", "audio")
    error: str = "Unsupported MType {mtype}"
    error_class: str = "generic"
    ext_error: str | None = None
    no_imp_error: str | None = None
    fallback: str | None = None
    ext_field: str = "mediaType"

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> BidTyper:
        source = data.get("source", "mtype")
        if source not in BID_TYPERS:
            raise StepError(f"bid_type.source: unknown {source!r} (one of {sorted(BID_TYPERS)})")
        types, order = tuple(data.get("types", _ALL_TYPES)), tuple(data.get("order", cls.order))
        if not set(types) | set(order) <= set(_ALL_TYPES):
            raise StepError(f"bid_type: media types are {_ALL_TYPES}")
        error = checked_text(str(data.get("error", cls.error)), "bid_type.error", **_UNTYPED_FILLS)
        ext_error, no_imp_error = data.get("ext_error"), data.get("no_imp_error")
        for name, text in (("ext_error", ext_error), ("no_imp_error", no_imp_error)):
            if text is not None:
                checked_text(str(text), f"bid_type.{name}", **_UNTYPED_FILLS)
        if not isinstance(data.get("ext_field", cls.ext_field), str):
            raise StepError("bid_type.ext_field: the name of a bid.ext member")
        return cls(
            source,
            types,
            order,
            error,
            error_class_name(data.get("error_class", "generic"), "bid_type.error_class"),
            None if ext_error is None else str(ext_error),
            None if no_imp_error is None else str(no_imp_error),
            _fallback(data.get("fallback")),
            data.get("ext_field", cls.ext_field),
        )

    def untyped(self, bid: Mapping[str, Any], text: str | None = None) -> UntypedBid:
        """The recipe's error for ``bid`` (``text`` instead of ``error`` when given)."""
        impid = bid.get("impid", "")
        words = (text or self.error).format(
            impid=impid, mtype=bid.get("mtype", 0), id=bid.get("id", ""), quoted_impid=go_quote(str(impid))
        )
        return UntypedBid(_ERROR_MAKERS[self.error_class](words))

    def type_of(self, bid: Mapping[str, Any], request: Mapping[str, Any]) -> str:
        kind = BID_TYPERS[self.source](self, bid, request) or self.fallback
        if kind is None:
            raise self.untyped(bid)
        return kind


# --- bids ------------------------------------------------------------------------------------------


def _auction_price(bid: dict[str, Any]) -> dict[str, Any]:
    """``${AUCTION_PRICE}`` in ``nurl`` and ``adm`` replaced by the price as Go's 'f' -1 writes it."""
    price = go_float_text(bid.get("price") or 0)
    out = dict(bid)
    for key in ("nurl", "adm"):
        if isinstance(out.get(key), str):
            out[key] = out[key].replace("${AUCTION_PRICE}", price)
    return out


def _auction_price_burl(bid: dict[str, Any]) -> dict[str, Any]:
    """``${AUCTION_PRICE}`` replaced in ``burl`` too."""
    out = _auction_price(bid)
    if isinstance(out.get("burl"), str):
        out["burl"] = out["burl"].replace("${AUCTION_PRICE}", go_float_text(bid.get("price") or 0))
    return out


def _drop_ext(bid: dict[str, Any]) -> dict[str, Any]:
    """The bid without its ``ext`` (Go sets ``bid.Ext = nil``)."""
    return {key: value for key, value in bid.items() if key != "ext"}


def _impid_from_id(bid: dict[str, Any]) -> dict[str, Any]:
    """The bid's ``impid`` replaced by its own ``id`` (Go: ``bid.ImpID = bid.ID``)."""
    return {**bid, "impid": bid.get("id", "")}


BID_REWRITES: Mapping[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "auction_price": _auction_price,
    "impid_from_id": _impid_from_id,
    "drop_ext": _drop_ext,
    "auction_price_burl": _auction_price_burl,
}


def _cat_dur(bid: Mapping[str, Any]) -> dict[str, Any]:
    """The bid's first category as ``primary_category`` and a positive ``dur`` as ``duration``."""
    cat, dur = bid.get("cat"), bid.get("dur")
    primary = cat[0] if isinstance(cat, list) and cat and isinstance(cat[0], str) else ""
    duration = dur if isinstance(dur, int) and not isinstance(dur, bool) and dur > 0 else 0
    return {"primary_category": primary, "duration": duration}


_PREBID_VIDEO = {
    "duration": ("Duration", GoKind.INT),
    "primary_category": ("PrimaryCategory", GoKind.STRING),
    "vasttagid": ("VASTTagID", GoKind.STRING),
}


def _ext_prebid(bid: Mapping[str, Any]) -> dict[str, Any]:
    """``bid.ext.prebid`` as ``openrtb_ext.ExtBid`` decodes it ({} without one); JsonShapeError
    when it does not decode."""
    ext = bid.get("ext")
    prebid = None if ext is None else go_field(expect_object(ext, ""), "prebid")
    if prebid is None:
        return {}
    return go_fields(expect_object(prebid, "openrtb_ext.ExtBid.Prebid"), "meta", "video")


def _ext_prebid_video(bid: Mapping[str, Any]) -> dict[str, Any] | None:
    """``bid.ext.prebid.video`` as ``openrtb_ext.ExtBidPrebidVideo`` decodes it (None without one)."""
    video = _ext_prebid(bid).get("video")
    if video is None:
        return None
    members = go_fields(expect_object(video, "openrtb_ext.ExtBidPrebid.Video"), *_PREBID_VIDEO)
    out = {}
    for name, value in members.items():
        go_name, kind = _PREBID_VIDEO[name]
        out[name] = go_value(value, kind, f"openrtb_ext.ExtBidPrebidVideo.{go_name}")
    return out


def _ext_prebid_meta(bid: Mapping[str, Any]) -> dict[str, Any] | None:
    """``bid.ext.prebid.meta`` as it comes (None without one); JsonShapeError when not an object."""
    meta = _ext_prebid(bid).get("meta")
    return None if meta is None else expect_object(meta, "openrtb_ext.ExtBidPrebid.Meta")


def _nonpositive_price(bid: Mapping[str, Any]) -> bool:
    """A bid whose price is not above 0."""
    price = bid.get("price")
    return not (isinstance(price, int | float) and price > 0)


BID_SKIPS: Mapping[str, Callable[[Mapping[str, Any]], bool]] = {
    "nonpositive_price": _nonpositive_price,
    "zero_price": lambda bid: not bid.get("price"),  # Go's bid.Price == 0 (absent too)
}


# a bid's video facts / meta; JsonShapeError (worded by the recipe's ``bid_ext_error``) drops the bid
BID_VIDEO: Mapping[str, Callable[[Mapping[str, Any]], dict[str, Any] | None]] = {
    "cat_dur": _cat_dur,
    "ext_prebid": _ext_prebid_video,
}
BID_META: Mapping[str, Callable[[Mapping[str, Any]], dict[str, Any] | None]] = {
    "ext_prebid": _ext_prebid_meta,
    # ExtBidPrebidMeta{AdvertiserDomains: bid.ADomain}: always a meta, the domains when there are some
    "adomain": lambda bid: {"advertiserDomains": bid["adomain"]} if bid.get("adomain") else {},
}


def indexed_ext_prebid_bids(answer: GoAnswer) -> tuple[BidderResponse, list[BidderError]]:
    """Bids typed by ``ext.prebid.type`` as the lm_kiviads family of PBS-Go adapters type them
    (bematterfull, xeworks): a bid whose ext does not decode, or whose type ``ParseBidType`` refuses
    ("" too), is dropped with a bad server response naming its index in its seatbid. USD."""
    result, errors = BidderResponse(), []
    for _, bids in answer.seatbids:
        for index, bid in enumerate(bids):
            try:
                kind = ext_prebid_type(bid) or ""
            except JsonShapeError as exc:
                errors.append(bad_server_response(f"Failed to parse Bid[{index}].Ext: {exc}"))
                continue
            if kind not in _ALL_TYPES:
                errors.append(
                    bad_server_response(
                        f"Bid[{index}].Ext.Prebid.Type expects one of the following values: "
                        f"'banner', 'native', 'video', 'audio', got '{kind}'"
                    )
                )
                continue
            result.bids.append(TypedBid(bid, kind))
    return result, errors
