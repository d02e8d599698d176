"""Request validation (PBS-Go's ``validateRequest`` and ``ValidateImp``, reference §3.1).

The checks run in PBS-Go's order and stop at the first fatal problem, whose text is PBS-Go's;
warnings are collected. Every field is type-checked before use, so a body of the wrong shape
gets a 400 naming the field, never a 500. The outcome also says, per imp, which bidders bid
with which params (legacy ``imp.ext.<bidder>`` promoted) and how each name resolves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hbserver.auction.bidadjust import validate_adjustment_factors
from hbserver.auction.currency import validate_request_currency
from hbserver.auction.fpd import validate_bidder_data
from hbserver.auction.messages import Message, WarningCode
from hbserver.auction.pricegranularity import GranularityError, parse_granularity, parse_media_type_granularity
from hbserver.bidders.registry import Bidder, Registry
from hbserver.floors.validate import validate_request_floors

# imp.ext keys that are never bidders (PBS-Go, case-sensitive)
RESERVED_IMP_EXT_KEYS = frozenset({"prebid", "data", "context", "gpid", "tid", "skadn", "ae", "igs"})
MAX_IMPS = 100  # a request with more imps than any page has is refused
MAX_BIDDERS_PER_IMP = 50

ParamsCheck = Callable[[str, object], "str | None"]


class RequestError(ValueError):
    """A fatal problem with the request: HTTP 400 ``Invalid request: <message>``."""


@dataclass(slots=True)
class ResolvedBidder:
    name: str  # as spelled in the request (targeting, seat, errors keys)
    bidder: Bidder  # the registry entry whose adapter runs (an alias resolves to its core bidder)


@dataclass(slots=True)
class Validated:
    imp_bidders: list[dict[str, Any]]  # per imp: bidder name as spelled -> params
    bidders: dict[str, ResolvedBidder]  # every bidder name used, in first-seen order
    aliases: dict[str, str]  # request aliases: name -> core bidder code
    warnings: list[Message] = field(default_factory=list)
    bidder_warnings: dict[str, list[Message]] = field(default_factory=dict)


def _obj(value: Any, path: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RequestError(f"{path} must be an object")
    return value


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def validate_request(request: dict[str, Any], registry: Registry, check_params: ParamsCheck) -> Validated:
    """Validate ``request`` (resolved stored data included); raises RequestError."""
    if not isinstance(request.get("id"), str) or not request["id"]:
        raise RequestError('request missing required field: "id"')
    tmax = request.get("tmax", 0)
    if tmax is not None and not _is_int(tmax):
        raise RequestError("request.tmax must be an integer")
    if tmax and tmax < 0:
        raise RequestError(f"request.tmax must be nonnegative. Got {tmax}")
    imps = request.get("imp")
    if imps is not None and not isinstance(imps, list):
        raise RequestError("request.imp must be an array")
    if not imps:
        raise RequestError("request.imp must contain at least one element.")
    if len(imps) > MAX_IMPS:
        raise RequestError(f"request.imp must not contain more than {MAX_IMPS} elements. Got {len(imps)}")
    warnings: list[Message] = []
    cur = request.get("cur")
    if cur is not None and (not isinstance(cur, list) or not all(isinstance(c, str) for c in cur)):
        raise RequestError("request.cur must be an array of strings")
    if cur and len(cur) > 1:
        warnings.append(
            Message(
                WarningCode.UNKNOWN,
                "A prebid request can only process one currency. "
                f"Taking the first currency in the list, {cur[0]}, as the active currency",
            )
        )

    ext = _obj(request.get("ext"), "request.ext")
    prebid = _obj(ext.get("prebid"), "request.ext.prebid")
    aliases = _aliases(prebid, registry)
    _check_alias_gvl_ids(prebid, aliases)
    _check_adjustment_factors(prebid, registry, aliases)
    bidder_data_problems = validate_bidder_data(request, registry, aliases)  # schains, eidpermissions, bidderconfig
    if bidder_data_problems:
        raise RequestError(bidder_data_problems[0])
    _check_targeting(prebid)
    currency_problem = validate_request_currency(prebid.get("currency"))
    if currency_problem is not None:
        raise RequestError(currency_problem)
    floors = prebid.get("floors")
    if floors is not None:
        floors_problem = validate_request_floors(floors, "request.ext.prebid.floors")
        if floors_problem is not None:
            raise RequestError(floors_problem)
    cache = prebid.get("cache")
    if cache is not None:
        if not isinstance(cache, dict) or ("bids" not in cache and "vastxml" not in cache):
            raise RequestError(
                'request.ext is invalid: request.ext.prebid.cache requires one of the "bids" or "vastxml" properties'
            )
        _check_cache_options(cache)
    channel = prebid.get("channel")
    if isinstance(channel, dict) and not channel.get("name"):
        raise RequestError("ext.prebid.channel.name can't be empty")

    _check_distribution_channel(request)
    _check_regs(request)
    _check_device(request)

    validated = Validated([], {}, aliases, warnings)
    seen_ids: dict[str, int] = {}
    for index, imp in enumerate(imps):
        if not isinstance(imp, dict):
            raise RequestError(f"request.imp[{index}] must be an object")
        imp_id = imp.get("id")
        if not isinstance(imp_id, str) or not imp_id:
            raise RequestError(f'request.imp[{index}] missing required field: "id"')
        if imp_id in seen_ids:
            raise RequestError(
                f'request.imp[{seen_ids[imp_id]}].id and request.imp[{index}].id are both "{imp_id}". '
                "Imp IDs must be unique."
            )
        seen_ids[imp_id] = index
        _check_imp_media(imp, index)
        validated.imp_bidders.append(_imp_bidders(imp, index, registry, aliases, check_params, validated))
    if not any(validated.imp_bidders):
        # every bidder named was unknown or disabled: nothing can bid (PBS-Go's text)
        raise RequestError("request.imp[0].ext.prebid.bidder must contain at least one bidder")
    return validated


def _aliases(prebid: dict[str, Any], registry: Registry) -> dict[str, str]:
    raw = _obj(prebid.get("aliases"), "request.ext.prebid.aliases")
    aliases: dict[str, str] = {}
    for alias, core in raw.items():
        if not isinstance(core, str):
            raise RequestError(f"request.ext.prebid.aliases.{alias} must be a string")
        if alias == core:
            raise RequestError(
                f"request.ext.prebid.aliases.{alias} defines a no-op alias. "
                "Choose a different alias, or remove this entry."
            )
        bidder = registry.lookup(core)
        if bidder is None:
            raise RequestError(f"request.ext.prebid.aliases.{alias} refers to unknown bidder: {core}")
        if bidder.disabled:
            raise RequestError(f"request.ext.prebid.aliases.{alias} refers to disabled bidder: {core}")
        aliases[alias] = bidder.code
    return aliases


def _check_cache_options(cache: dict[str, Any]) -> None:
    """Types of ``ext.prebid.cache``: ``bids``/``vastxml`` objects with ``returnCreative`` (boolean) and
    ``ttlseconds`` (a non-negative integer), ``winningonly`` a boolean (PBS-Java)."""
    for kind in ("bids", "vastxml"):
        options = cache.get(kind)
        if options is None:
            continue
        if not isinstance(options, dict):
            raise RequestError(f"request.ext.prebid.cache.{kind} must be an object")
        if "returnCreative" in options and not isinstance(options["returnCreative"], bool):
            raise RequestError(f"request.ext.prebid.cache.{kind}.returnCreative must be a boolean")
        ttl = options.get("ttlseconds")
        if ttl is not None and (not isinstance(ttl, int) or isinstance(ttl, bool) or ttl < 0):
            raise RequestError(f"request.ext.prebid.cache.{kind}.ttlseconds must be a non-negative integer")
    if "winningonly" in cache and not isinstance(cache["winningonly"], bool):
        raise RequestError("request.ext.prebid.cache.winningonly must be a boolean")


def _check_alias_gvl_ids(prebid: dict[str, Any], aliases: dict[str, str]) -> None:
    """PBS-Go validateAliasesGVLIDs: each ``aliasgvlids`` entry names a request alias and an id >= 1."""
    raw = _obj(prebid.get("aliasgvlids"), "request.ext.prebid.aliasgvlids")
    for alias, vendor_id in raw.items():
        if not isinstance(vendor_id, int) or isinstance(vendor_id, bool) or not 0 <= vendor_id <= 0xFFFF:
            raise RequestError(f"request.ext.prebid.aliasgvlids.{alias} must be an integer from 1 to 65535")
        if alias not in aliases:
            raise RequestError(
                f"request.ext.prebid.aliasgvlids. vendorId {vendor_id} refers to unknown bidder alias: {alias}"
            )
        if vendor_id < 1:
            raise RequestError(
                f"request.ext.prebid.aliasgvlids. Invalid vendorId {vendor_id} for alias: {alias}. "
                "Choose a different vendorId, or remove this entry."
            )


def _known(name: str, registry: Registry, aliases: dict[str, str]) -> bool:
    return name in aliases or registry.lookup(name) is not None


def _check_adjustment_factors(prebid: dict[str, Any], registry: Registry, aliases: dict[str, str]) -> None:
    """PBS-Go's validateBidAdjustmentFactors, plus PBS-Java's ``mediatypes`` factors."""
    problem = validate_adjustment_factors(prebid.get("bidadjustmentfactors"), registry.lookup, aliases)
    if problem is not None:
        raise RequestError(problem)


def _check_targeting(prebid: dict[str, Any]) -> None:
    targeting = prebid.get("targeting")
    if targeting is None:
        return
    if not isinstance(targeting, dict):
        raise RequestError("request.ext.prebid.targeting must be an object")
    try:
        if "pricegranularity" in targeting:
            parse_granularity(targeting["pricegranularity"])
        if "mediatypepricegranularity" in targeting:
            parse_media_type_granularity(targeting["mediatypepricegranularity"])
    except GranularityError as exc:
        raise RequestError(str(exc)) from None
    for flag in ("includewinners", "includebidderkeys", "includeformat", "preferdeals", "alwaysincludedeals"):
        if flag in targeting and not isinstance(targeting[flag], bool):
            raise RequestError(f"request.ext.prebid.targeting.{flag} must be a boolean")


def _check_distribution_channel(request: dict[str, Any]) -> None:
    present = [name for name in ("site", "app", "dooh") if request.get(name) is not None]
    if not present:
        raise RequestError("One of request.site or request.app or request.dooh must be defined")
    if len(present) > 1:
        raise RequestError("No more than one of request.site or request.app or request.dooh can be defined")
    name = present[0]
    channel = _obj(request[name], f"request.{name}")
    if name == "site":
        if not channel.get("id") and not channel.get("page"):
            raise RequestError("request.site should include at least one of request.site.id or request.site.page.")
        amp = _obj(channel.get("ext"), "request.site.ext").get("amp")
        if amp is not None and amp not in (0, 1):
            raise RequestError("request.site.ext.amp must be either 1, 0, or undefined")
    for key in ("publisher", "content"):
        value = channel.get(key)
        if value is not None and not isinstance(value, dict):
            raise RequestError(f"request.{name}.{key} must be an object")


def _check_regs(request: dict[str, Any]) -> None:
    regs = _obj(request.get("regs"), "request.regs")
    gdpr = regs.get("gdpr")
    if gdpr is not None and gdpr not in (0, 1):
        raise RequestError("request.regs.gdpr must be either 0 or 1")
    gdpr = _obj(regs.get("ext"), "request.regs.ext").get("gdpr")
    if gdpr is not None and gdpr not in (0, 1):
        raise RequestError("request.regs.ext.gdpr must be either 0 or 1")
    _obj(request.get("user"), "request.user")
    _obj(request.get("source"), "request.source")


def _check_device(request: dict[str, Any]) -> None:
    device = _obj(request.get("device"), "request.device")
    for key in ("w", "h", "ppi"):
        value = device.get(key)
        if value is not None and (not _number(value) or value < 0):
            raise RequestError(f"request.device.{key} must be a positive number")
    geo = _obj(device.get("geo"), "request.device.geo")
    accuracy = geo.get("accuracy")
    if accuracy is not None and (not _number(accuracy) or accuracy < 0):
        raise RequestError("request.device.geo.accuracy must be a positive number")


def _check_imp_media(imp: dict[str, Any], index: int) -> None:
    if imp.get("metric") is not None:
        raise RequestError(
            f"request.imp[{index}].metric is not yet supported by prebid-server. Support may be added in the future"
        )
    banner, video, audio, native = imp.get("banner"), imp.get("video"), imp.get("audio"), imp.get("native")
    if banner is None and video is None and audio is None and native is None:
        raise RequestError(f'request.imp[{index}] must contain at least one of "banner", "video", "audio", or "native"')
    for kind, value in (("banner", banner), ("video", video), ("audio", audio), ("native", native)):
        if value is not None and not isinstance(value, dict):
            raise RequestError(f"request.imp[{index}].{kind} must be an object")
    if banner is not None:
        _check_banner(banner, index)
    if video is not None:
        mimes = video.get("mimes")
        if not isinstance(mimes, list) or not mimes:
            raise RequestError(f"request.imp[{index}].video.mimes must contain at least one supported MIME type")
    if native is not None and not isinstance(native.get("request"), str):
        raise RequestError(
            f"request.imp[{index}].native.request must be a JSON encoded string "
            "conforming to the openrtb 1.2 Native spec"
        )


_FLEX_BANNER_KEYS = ("wmin", "wmax", "hmin", "hmax")


def _check_banner(banner: dict[str, Any], index: int) -> None:
    w, h = banner.get("w"), banner.get("h")
    for key, value in (("w", w), ("h", h)):
        if value is not None and (not _is_int(value) or value < 0):
            raise RequestError(f"request.imp[{index}].banner.{key} must be a positive number")
    for key in _FLEX_BANNER_KEYS:
        if banner.get(key) is not None:
            raise RequestError(
                f'request.imp[{index}].banner uses unsupported property: "{key}". Use the "format" array instead.'
            )
    formats = banner.get("format")
    if formats is not None and not isinstance(formats, list):
        raise RequestError(f"request.imp[{index}].banner.format must be an array")
    ext = banner.get("ext")
    if not (w and h) and not formats and not (isinstance(ext, dict) and ext.get("interstitial")):
        raise RequestError(
            f'request.imp[{index}].banner has no sizes. Define "w" and "h", or include "format" elements.'
        )
    for fmt_index, fmt in enumerate(formats or ()):
        if type(fmt) is dict:
            fw, fh = fmt.get("w", 0), fmt.get("h", 0)
            if type(fw) is int and type(fh) is int and fw > 0 and fh > 0:
                continue  # the usual {w, h}
        _check_format(fmt, index, fmt_index)


def _check_format(fmt: Any, index: int, fmt_index: int) -> None:
    if not isinstance(fmt, dict):
        raise RequestError(f"request.imp[{index}].banner.format[{fmt_index}] must be an object")
    w, h = fmt.get("w", 0), fmt.get("h", 0)
    if w or h:
        if not (_is_int(w) and _is_int(h) and w > 0 and h > 0):
            raise RequestError(
                f'Request imp[{index}].banner.format[{fmt_index}] must define non-zero "h" and "w" properties.'
            )
    elif not (fmt.get("wmin") and fmt.get("wratio") and fmt.get("hratio")):
        raise RequestError(
            f"Request imp[{index}].banner.format[{fmt_index}] should define *either* {{w, h}} (for static size) "
            "OR {wmin, wratio, hratio} (for flexible sizes) to be non-zero."
        )


def _imp_bidders(
    imp: dict[str, Any],
    index: int,
    registry: Registry,
    aliases: dict[str, str],
    check_params: ParamsCheck,
    validated: Validated,
) -> dict[str, Any]:
    ext = imp.get("ext")
    if not isinstance(ext, dict):
        raise RequestError(
            f"request.imp[{index}].ext is required" if ext is None else f"request.imp[{index}].ext must be an object"
        )
    prebid = ext.get("prebid")
    if prebid is None:
        prebid = {}
    elif not isinstance(prebid, dict):
        raise RequestError(f"request.imp[{index}].ext.prebid must be an object")
    named_unknown = False
    if "bidder" in prebid:
        bidders = prebid["bidder"]
        if not isinstance(bidders, dict):
            raise RequestError(f"request.imp[{index}].ext.prebid.bidder must be an object")
    else:
        bidders = {}
        for key, params in ext.items():
            if key in RESERVED_IMP_EXT_KEYS:
                continue
            if _known(key, registry, aliases):
                bidders[key] = params
            else:
                validated.warnings.append(
                    Message(WarningCode.UNKNOWN, f"request.imp[{index}].ext contains unknown bidder: '{key}', ignoring")
                )
                named_unknown = True
    if not bidders:
        if named_unknown:
            return {}
        raise RequestError(f"request.imp[{index}].ext.prebid.bidder must contain at least one bidder")
    if len(bidders) > MAX_BIDDERS_PER_IMP:
        raise RequestError(
            f"request.imp[{index}].ext.prebid.bidder must not name more than {MAX_BIDDERS_PER_IMP} bidders"
        )
    active: dict[str, Any] = {}
    for name, params in bidders.items():
        resolved = validated.bidders.get(name) or _resolve(name, registry, aliases)
        if resolved is None:
            text = f"request.imp[{index}].ext.prebid.bidder contains unknown bidder: {name}"
            validated.warnings.append(Message(WarningCode.UNKNOWN_BIDDER, text))
            continue
        if resolved.bidder.disabled:
            validated.bidder_warnings.setdefault(name, []).append(
                Message(
                    WarningCode.UNKNOWN,
                    f'Bidder "{name}" has been disabled on this instance of Prebid Server. '
                    "Please work with the PBS host to enable this bidder again.",
                )
            )
            continue
        problem = check_params(resolved.bidder.adapter, params)
        if problem is not None:
            raise RequestError(f"request.imp[{index}].ext.prebid.bidder.{name} failed validation.\n{problem}")
        validated.bidders.setdefault(name, resolved)
        active[name] = params
    return active  # empty when every bidder named is unknown or disabled (warned above)


def _resolve(name: str, registry: Registry, aliases: dict[str, str]) -> ResolvedBidder | None:
    """The bidder a name (or a request alias) runs; None for a name nothing knows."""
    core = aliases.get(name)
    bidder = registry.lookup(core if core is not None else name)
    return None if bidder is None else ResolvedBidder(name, bidder)
