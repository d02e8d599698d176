"""The schema functions (PBS-Go ``rules/schema_functions.go``): each reads one fact of the request
as a string that a rule's condition at its level of the tree is compared with.

The ``...Available``/``...In`` functions answer ``"true"``/``"false"``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from hbserver.modules.rulesengine.args import (
    MISSING,
    field,
    int_list,
    is_int,
    require_object,
    string_list,
)

IntN = Callable[[int], int]  # Go's rand.Intn: a number in [0, n)

CHANNEL = "channel"
DATA_CENTER = "dataCenter"
DATA_CENTER_IN = "dataCenterIn"
DEVICE_COUNTRY = "deviceCountry"
DEVICE_COUNTRY_IN = "deviceCountryIn"
EID_AVAILABLE = "eidAvailable"
EID_IN = "eidIn"
FPD_AVAILABLE = "fpdAvailable"
GPP_SID_AVAILABLE = "gppSidAvailable"
GPP_SID_IN = "gppSidIn"
PERCENT = "percent"
TCF_IN_SCOPE = "tcfInScope"
USER_FPD_AVAILABLE = "userFpdAvailable"


class SchemaFunction(Protocol):
    """Reads one fact of the request (raises ValueError for a part of it it cannot read)."""

    name: str

    def __call__(self, request: Mapping[str, Any]) -> str: ...


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _obj(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _path(request: Mapping[str, Any], *keys: str) -> dict[str, Any] | None:
    node: Any = request
    for key in keys:
        node = _obj(node.get(key)) if isinstance(node, dict) else None
        if node is None:
            return None
    return node


def _device_geo(request: Mapping[str, Any]) -> dict[str, Any] | None:
    return _path(request, "device", "geo")


def _geo_string(request: Mapping[str, Any], key: str) -> str:
    geo = _device_geo(request)
    value = geo.get(key) if geo is not None else None
    return value if isinstance(value, str) else ""


def _ext(owner: Mapping[str, Any] | None, where: str) -> dict[str, Any]:
    """``owner.ext`` as an object: absent or null is empty; anything else cannot be read (Go's
    wrapper fails to unmarshal it)."""
    ext = owner.get("ext") if owner is not None else None
    if ext is None:
        return {}
    if not isinstance(ext, dict):
        raise ValueError(f"{where}.ext must be an object")
    return ext


def _non_empty_list(value: Any) -> bool:
    return isinstance(value, list) and len(value) > 0


@dataclass(frozen=True, slots=True)
class _Plain:
    """A function without args: ``name`` and the reader."""

    name: str
    read: Callable[[Mapping[str, Any]], str]

    def __call__(self, request: Mapping[str, Any]) -> str:
        return self.read(request)


def _device_country(request: Mapping[str, Any]) -> str:
    return _geo_string(request, "country")


def _data_center(request: Mapping[str, Any]) -> str:
    """PBS-Go reads the data center from ``device.geo.region``."""
    return _geo_string(request, "region")


def _channel(request: Mapping[str, Any]) -> str:
    prebid = _ext(request, "request").get("prebid")
    if prebid is None:
        return ""
    if not isinstance(prebid, dict):
        raise ValueError("request.ext.prebid must be an object")
    channel = prebid.get("channel")
    if channel is None:
        return ""
    if not isinstance(channel, dict) or not isinstance(channel.get("name", ""), str):
        raise ValueError("request.ext.prebid.channel must be an object with a string name")
    name: str = channel.get("name") or ""
    return "web" if name == "pbjs" else name


def _eids(request: Mapping[str, Any]) -> list[Any]:
    user = _obj(request.get("user"))
    eids = user.get("eids") if user is not None else None
    return eids if isinstance(eids, list) else []


def _eid_available(request: Mapping[str, Any]) -> str:
    return _bool(len(_eids(request)) > 0)


def _ext_data_present(ext: Mapping[str, Any]) -> bool:
    """``ext.data`` is an array with at least one element."""
    return _non_empty_list(ext.get("data"))


def user_fpd(request: Mapping[str, Any]) -> str:
    """``user.data`` or ``user.ext.data`` has an element (PBS-Go ``checkUserDataAndUserExtData``)."""
    user = _obj(request.get("user"))
    if user is not None and _non_empty_list(user.get("data")):
        return "true"
    return _bool(_ext_data_present(_ext(user, "request.user")))


def _site_or_app_fpd(request: Mapping[str, Any], kind: str) -> bool:
    """``<kind>.content.data`` or ``<kind>.ext.data`` has an element (an unreadable ext: no)."""
    owner = _obj(request.get(kind))
    if owner is None:
        return False
    content = _obj(owner.get("content"))
    if content is not None and _non_empty_list(content.get("data")):
        return True
    try:
        return _ext_data_present(_ext(owner, f"request.{kind}"))
    except ValueError:
        return False


def _fpd_available(request: Mapping[str, Any]) -> str:
    if _site_or_app_fpd(request, "site") or _site_or_app_fpd(request, "app"):
        return "true"
    return user_fpd(request)


def _gpp_sids(request: Mapping[str, Any]) -> list[int]:
    regs = _obj(request.get("regs"))
    sids = regs.get("gpp_sid") if regs is not None else None
    return [sid for sid in sids if is_int(sid)] if isinstance(sids, list) else []


def _has_gpp_sids(request: Mapping[str, Any]) -> bool:
    return any(sid > 0 for sid in _gpp_sids(request))


def _gpp_sid_available(request: Mapping[str, Any]) -> str:
    return _bool(_has_gpp_sids(request))


def _tcf_in_scope(request: Mapping[str, Any]) -> str:
    regs = _obj(request.get("regs"))
    gdpr = regs.get("gdpr") if regs is not None else None
    return _bool(is_int(gdpr) and gdpr == 1)


@dataclass(frozen=True, slots=True)
class _GeoIn:
    """``deviceCountryIn`` / ``dataCenterIn``: the geo field is one of a set."""

    name: str
    geo_key: str
    values: frozenset[str]

    def __call__(self, request: Mapping[str, Any]) -> str:
        value = _geo_string(request, self.geo_key)
        return _bool(bool(value) and value in self.values)


@dataclass(frozen=True, slots=True)
class _EidIn:
    sources: frozenset[str]
    name: str = EID_IN

    def __call__(self, request: Mapping[str, Any]) -> str:
        sources = (eid.get("source") for eid in _eids(request) if isinstance(eid, dict))
        return _bool(any(isinstance(source, str) and source in self.sources for source in sources))


@dataclass(frozen=True, slots=True)
class _GppSidIn:
    sids: frozenset[int]
    name: str = GPP_SID_IN

    def __call__(self, request: Mapping[str, Any]) -> str:
        if not self.sids or not _has_gpp_sids(request):
            return "false"
        return _bool(any(sid in self.sids for sid in _gpp_sids(request)))


@dataclass(frozen=True, slots=True)
class Percent:
    """``true`` for about ``pct`` percent of requests (PBS-Go: ``Intn(100) <= pct``)."""

    pct: int
    intn: IntN
    name: str = PERCENT

    def __call__(self, request: Mapping[str, Any]) -> str:
        if self.pct <= 0:
            return "false"
        if self.pct >= 100:
            return "true"
        return _bool(self.intn(100) <= self.pct)


def check_no_args(args: Any, func: str) -> None:
    """PBS-Go ``checkNilArgs``: absent, null or ``{}`` only."""
    if args is MISSING or args is None or (isinstance(args, Mapping) and not args):
        return
    raise ValueError(f"{func} expects 0 arguments")


_PLAIN: dict[str, Callable[[Mapping[str, Any]], str]] = {
    DEVICE_COUNTRY: _device_country,
    DATA_CENTER: _data_center,
    CHANNEL: _channel,
    EID_AVAILABLE: _eid_available,
    USER_FPD_AVAILABLE: user_fpd,
    FPD_AVAILABLE: _fpd_available,
    GPP_SID_AVAILABLE: _gpp_sid_available,
    TCF_IN_SCOPE: _tcf_in_scope,
}


def _country_in(args: Any) -> SchemaFunction:
    countries = string_list(require_object(args, DEVICE_COUNTRY_IN), "countries", DEVICE_COUNTRY_IN)
    if not countries:
        raise ValueError("Missing countries argument for deviceCountryIn schema function")
    return _GeoIn(DEVICE_COUNTRY_IN, "country", frozenset(countries))


def _data_center_in(args: Any) -> SchemaFunction:
    centers = string_list(require_object(args, DATA_CENTER_IN), "datacenters", DATA_CENTER_IN)
    if not centers:
        raise ValueError("Empty datacenter argument in dataCenterIn schema function")
    return _GeoIn(DATA_CENTER_IN, "region", frozenset(centers))


def _eid_in(args: Any) -> SchemaFunction:
    sources = string_list(require_object(args, EID_IN), "sources", EID_IN)
    if not sources:
        raise ValueError("Empty sources argument in eidIn schema function")
    return _EidIn(frozenset(sources))


def _gpp_sid_in(args: Any) -> SchemaFunction:
    sids = int_list(require_object(args, GPP_SID_IN), "sids", GPP_SID_IN, -128, 127)
    if not sids:
        raise ValueError("Empty GPPSIDs list argument in gppSidIn schema function")
    return _GppSidIn(frozenset(sids))


def new_percent(args: Any, intn: IntN) -> Percent:
    """``pct`` defaults to 5 and is clamped to 0..100."""
    pct = field(require_object(args, PERCENT), "pct")
    if pct is MISSING or pct is None:
        pct = 5
    elif not is_int(pct):
        raise ValueError("percent: args.pct must be an integer")
    return Percent(min(max(pct, 0), 100), intn)


def new_schema_function(name: str, args: Any, intn: IntN) -> SchemaFunction:
    """PBS-Go ``NewRequestSchemaFunction`` (``args``: the config's value or MISSING)."""
    plain = _PLAIN.get(name)
    if plain is not None:
        check_no_args(args, name)
        return _Plain(name, plain)
    if name == PERCENT:
        return new_percent(args, intn)
    with_args = {
        DEVICE_COUNTRY_IN: _country_in,
        DATA_CENTER_IN: _data_center_in,
        EID_IN: _eid_in,
        GPP_SID_IN: _gpp_sid_in,
    }.get(name)
    if with_args is None:
        raise ValueError(f"Schema function {name} was not created")
    return with_args(args)


SCHEMA_FUNCTION_NAMES = tuple(
    sorted(
        [*_PLAIN, PERCENT, DEVICE_COUNTRY_IN, DATA_CENTER_IN, EID_IN, GPP_SID_IN],
        key=str.lower,
    )
)
