"""Request validation in PBS-Go's order (``validateRequest`` and ``ValidateImp``, reference §3.1).

The checks stop at the first fatal problem, whose text is PBS-Go's; warnings are collected. What
PBS-Go's typed unmarshal refuses (a field of the wrong JSON type) was refused before this runs
(:mod:`hbserver.auction.request.ortb_types`); the checks here still never fail on a wrong type. The outcome
says, per imp, which bidders bid with which params (legacy ``imp.ext.<bidder>`` promoted) and how
each name resolves, and carries the request as validation left it (EIDs filtered, native requests
normalised: copies, never the caller's objects).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hbserver.auction.bids.bidadjust import validate_adjustment_factors
from hbserver.auction.bids.currency import validate_request_currency
from hbserver.auction.common.iso4217 import is_iso4217
from hbserver.auction.common.messages import Message, WarningCode
from hbserver.auction.common.request_error import RequestError
from hbserver.auction.exchange.fpd import request_data_problem, validate_bidder_config
from hbserver.auction.request.validate_context import (
    check_app,
    check_device,
    check_dooh,
    check_regs,
    check_site,
    check_user,
)
from hbserver.auction.request.validate_imp import validate_imp_media
from hbserver.auction.response.pricegranularity import GranularityError, parse_granularity, parse_media_type_granularity
from hbserver.bidders.registry import Bidder, Registry
from hbserver.floors.validate import validate_request_floors

__all__ = ["RequestError", "ResolvedBidder", "Validated", "validate_request"]

# imp.ext keys that are never bidders (PBS-Go, case-sensitive)
RESERVED_IMP_EXT_KEYS = frozenset({"prebid", "data", "context", "gpid", "tid", "skadn", "ae", "igs"})
MAX_IMPS = 100  # a request with more imps than any page has is refused
MAX_BIDDERS_PER_IMP = 50

ParamsCheck = Callable[[str, object], "str | None"]


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
    request: dict[str, Any] = field(default_factory=dict)  # the request as validation left it


def _obj(value: Any, path: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RequestError(f"{path} must be an object")
    return value


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def validate_request(request: dict[str, Any], registry: Registry, check_params: ParamsCheck) -> Validated:
    """Validate ``request`` (stored data merged, upconverted); raises RequestError.

    The order is PBS-Go's ``validateRequest``: id, tmax, imps, currencies; the ``ext.prebid`` parts
    (aliases, their GVL ids, adjustment factors, schains, EID permissions, custom rates); channel;
    exactly one of site/app/dooh; the rest of ``ext.prebid``; site, app, dooh, user, regs, device;
    then each imp. The bidder config checks PBS-Go makes later (in the exchange) come last.
    """
    warnings = _check_top_level(request)
    prebid, aliases = _check_ext_prebid(request, registry)
    # from here on PBS-Go reports the warnings it collected together with a fatal problem
    try:
        _check_request_ext(prebid)
        check_site(request)
        check_app(request)
        check_dooh(request)
        request = check_user(request, lambda name: _known(name, registry, aliases), warnings)
        check_regs(request)
        check_device(request)
    except RequestError as exc:
        raise RequestError(str(exc), [w.message for w in warnings]) from None
    validated = Validated([], {}, aliases, warnings)
    request = _check_imps(request, registry, aliases, check_params, validated)
    config_problem = validate_bidder_config(request, registry, aliases)  # PBS-Go: the exchange's FPD step
    if config_problem is not None:
        raise RequestError(config_problem, [w.message for w in warnings])
    validated.request = request
    return validated


def _check_top_level(request: dict[str, Any]) -> list[Message]:
    """id, tmax, the imps' count and the currencies; the warnings so far."""
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
    return warnings


def _check_ext_prebid(request: dict[str, Any], registry: Registry) -> tuple[dict[str, Any], dict[str, str]]:
    """``ext.prebid``'s parts PBS-Go checks before the objects: its ``prebid`` and the aliases."""
    ext = _obj(request.get("ext"), "request.ext")
    prebid = _obj(ext.get("prebid"), "request.ext.prebid")
    aliases = _aliases(prebid, registry)
    _check_alias_gvl_ids(prebid, aliases)
    _check_adjustment_factors(prebid, registry, aliases)
    bidder_data_problem = request_data_problem(request, registry, aliases)  # schains, eidpermissions
    if bidder_data_problem is not None:
        raise RequestError(bidder_data_problem)
    _check_custom_rates(prebid)
    channel = prebid.get("channel")
    if isinstance(channel, dict) and not channel.get("name"):
        raise RequestError("ext.prebid.channel.name can't be empty")
    _check_inventory_type(request)
    return prebid, aliases


def _check_imps(
    request: dict[str, Any],
    registry: Registry,
    aliases: dict[str, str],
    check_params: ParamsCheck,
    validated: Validated,
) -> dict[str, Any]:
    """Each imp checked (its media, its bidders into ``validated.imp_bidders``); the request with the
    checked imps. Duplicate ids are collected and reported after every imp, as PBS-Go does."""
    warnings = validated.warnings
    imps = request["imp"]
    checked_imps: list[Any] | None = None
    seen_ids: dict[str, int] = {}
    duplicates: list[str] = []
    first_imp_lines: list[str] = []
    general = len(warnings)  # the warnings before the imps (imp warnings are appended to the same list)
    for index, imp in enumerate(imps):
        if not isinstance(imp, dict):
            raise RequestError(f"request.imp[{index}] must be an object", [w.message for w in warnings])
        imp_id = imp.get("id")
        if isinstance(imp_id, str):
            if imp_id in seen_ids:
                duplicates.append(
                    f'request.imp[{seen_ids[imp_id]}].id and request.imp[{index}].id are both "{imp_id}". '
                    "Imp IDs must be unique."
                )
            seen_ids[imp_id] = index
        reported: list[str] = []
        try:
            checked = validate_imp_media(imp, index)
            validated.imp_bidders.append(
                _imp_bidders(checked, index, registry, aliases, check_params, validated, reported)
            )
        except RequestError as exc:
            raise RequestError(str(exc), [*(w.message for w in warnings), *duplicates]) from None
        if index == 0:  # what PBS-Go has reported when imp[0] is left without a bidder
            first_imp_lines = [*(w.message for w in warnings[:general]), *reported]
        if checked is not imp:
            if checked_imps is None:
                checked_imps = list(imps)
            checked_imps[index] = checked
    if duplicates:
        raise RequestError(duplicates[-1], [*(w.message for w in warnings), *duplicates[:-1]])
    if not any(validated.imp_bidders):
        # every bidder named was unknown or disabled: nothing can bid. PBS-Go's 400 (ortb
        # validateImpExt) lists the warnings it had, imp[0]'s disabled bidders among them, then its text.
        raise RequestError("request.imp[0].ext.prebid.bidder must contain at least one bidder", first_imp_lines)
    return {**request, "imp": checked_imps} if checked_imps is not None else request


def _check_custom_rates(prebid: dict[str, Any]) -> None:
    """PBS-Go ``currency.ValidateCustomRates``: every code in ``currency.rates`` is ISO 4217."""
    problem = validate_request_currency(prebid.get("currency"))
    if problem is not None:
        raise RequestError(problem)
    currency = prebid.get("currency")
    rates = currency.get("rates") if isinstance(currency, dict) else None
    if not isinstance(rates, dict):
        return
    for source, targets in rates.items():
        if not is_iso4217(source):
            raise RequestError(f"currency code {source} is not recognized or malformed")
        for target in targets if isinstance(targets, dict) else ():
            if not is_iso4217(target):
                raise RequestError(f"currency code {target} is not recognized or malformed")


def _check_request_ext(prebid: dict[str, Any]) -> None:
    """PBS-Go ``validateRequestExt`` (cache, targeting), then the request's floors."""
    cache = prebid.get("cache")
    if cache is not None:
        if not isinstance(cache, dict) or ("bids" not in cache and "vastxml" not in cache):
            raise RequestError(
                'request.ext is invalid: request.ext.prebid.cache requires one of the "bids" or "vastxml" properties'
            )
        _check_cache_options(cache)
    _check_targeting(prebid)
    floors = prebid.get("floors")
    if floors is not None:
        floors_problem = validate_request_floors(floors, "request.ext.prebid.floors")
        if floors_problem is not None:
            raise RequestError(floors_problem)


def _aliases(prebid: dict[str, Any], registry: Registry) -> dict[str, str]:
    """PBS-Go ``validateAliases``: the core bidder must be enabled, then known, then differ from the alias."""
    raw = _obj(prebid.get("aliases"), "request.ext.prebid.aliases")
    aliases: dict[str, str] = {}
    for alias, core in raw.items():
        if not isinstance(core, str):
            raise RequestError(f"request.ext.prebid.aliases.{alias} must be a string")
        bidder = registry.lookup(core)
        if bidder is not None and bidder.disabled:
            raise RequestError(f"request.ext.prebid.aliases.{alias} refers to disabled bidder: {core}")
        if bidder is None:
            raise RequestError(f"request.ext.prebid.aliases.{alias} refers to unknown bidder: {core}")
        if alias == bidder.code:
            raise RequestError(
                f"request.ext.prebid.aliases.{alias} defines a no-op alias. "
                "Choose a different alias, or remove this entry."
            )
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


def _check_inventory_type(request: dict[str, Any]) -> None:
    """PBS-Go ``validateExactlyOneInventoryType``."""
    present = [name for name in ("site", "app", "dooh") if request.get(name) is not None]
    if not present:
        raise RequestError("One of request.site or request.app or request.dooh must be defined")
    if len(present) > 1:
        raise RequestError("No more than one of request.site or request.app or request.dooh can be defined")
    name = present[0]
    channel = _obj(request[name], f"request.{name}")
    for key in ("publisher", "content"):
        value = channel.get(key)
        if value is not None and not isinstance(value, dict):
            raise RequestError(f"request.{name}.{key} must be an object")


def _imp_bidders(
    imp: dict[str, Any],
    index: int,
    registry: Registry,
    aliases: dict[str, str],
    check_params: ParamsCheck,
    validated: Validated,
    reported: list[str],
) -> dict[str, Any]:
    """The bidders of one imp with their params. ``reported`` gets the texts PBS-Go's
    ``validateImpExt`` collects for this imp (a legacy ``imp.ext`` name it does not know, a disabled
    bidder's ``BidderTemporarilyDisabled``), which a refusal then lists."""
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
                text = f"request.imp[{index}].ext contains unknown bidder: '{key}', ignoring"
                validated.warnings.append(Message(WarningCode.UNKNOWN, text))
                reported.append(text)
                named_unknown = True
    if not bidders:
        if named_unknown:
            return {}
        raise RequestError(f"request.imp[{index}].ext.prebid.bidder must contain at least one bidder")
    if len(bidders) > MAX_BIDDERS_PER_IMP:
        raise RequestError(
            f"request.imp[{index}].ext.prebid.bidder must not name more than {MAX_BIDDERS_PER_IMP} bidders"
        )
    return _active_bidders(bidders, index, registry, aliases, check_params, validated, reported)


def _active_bidders(
    bidders: dict[str, Any],
    index: int,
    registry: Registry,
    aliases: dict[str, str],
    check_params: ParamsCheck,
    validated: Validated,
    reported: list[str],
) -> dict[str, Any]:
    """The imp's bidders that can bid, their params checked; unknown and disabled ones warned about."""
    active: dict[str, Any] = {}
    for name, params in bidders.items():
        resolved = validated.bidders.get(name) or _resolve(name, registry, aliases)
        if resolved is None:
            text = f"request.imp[{index}].ext.prebid.bidder contains unknown bidder: {name}"
            validated.warnings.append(Message(WarningCode.UNKNOWN_BIDDER, text))
            continue
        if resolved.bidder.disabled:
            text = (
                f'Bidder "{name}" has been disabled on this instance of Prebid Server. '
                "Please work with the PBS host to enable this bidder again."
            )
            validated.bidder_warnings.setdefault(name, []).append(Message(WarningCode.UNKNOWN, text))
            reported.append(text)
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
