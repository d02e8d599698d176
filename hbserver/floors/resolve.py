"""Floors for one auction: PBS-Go ``floors/floors.go`` ``EnrichWithPriceFloors`` (``resolveFloors``,
``mergeFloors``, ``createFloorsFrom``, ``updateBidRequestWithFloors``, ``updateFloorsInRequest``) and
the floorMin half of ``floors/rule.go``.

The floors come from the provider's data when the account uses dynamic data, the fetcher has it
and ``usefetchdatarate`` allows (merged with the request's enforcement, floorMin and endpoint),
else from ``ext.prebid.floors``. One model group is kept (by ``modelweight``), signalling may be
skipped (``skiprate``), and each imp gets the matching rule's floor (or the group's default), raised
to floorMin, as ``bidfloor``/``bidfloorcur``; a matched rule is also recorded in
``imp.ext.prebid.floors``. ``ext.prebid.floors`` is rewritten as PBS-Go writes it (location,
fetchstatus, skipped, the chosen group). Errors are PBS-Go's texts; PBS-Go appends them to the
auction's errors, so they appear in ``ext.errors.prebid`` with code 999.

Differences from PBS-Go: a request with no floors at all (no ``ext.prebid.floors``, no
``imp.bidfloor``, no fetched data) is returned unchanged, where PBS-Go adds
``{"fetchstatus":"none","location":"noData"}``; the rule table is written in its own key order.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hbserver.adapters.base import ConversionError
from hbserver.config import AccountFloorFetch, AccountPriceFloors
from hbserver.floors.data import (
    DEFAULT_CURRENCY,
    FETCH_NONE,
    FETCH_SUCCESS,
    LOCATION_FETCH,
    LOCATION_NO_DATA,
    LOCATION_REQUEST,
    Fetched,
    FloorRules,
    FloorsDataError,
    ModelGroup,
    data_with,
    floor_rules_json,
    fold,
    parsed_floor_rules,
    round4,
    rules_with,
)
from hbserver.floors.rules import RuleValues, find_rule
from hbserver.floors.validate import select_valid_model_groups, validate_floor_params

logger = logging.getLogger(__name__)

Convert = Callable[[float, str, str], float]
Rand = Callable[[int], int]  # Go's rand.Intn: an int in [0, n)
FetchFloors = Callable[[AccountFloorFetch], Fetched]

FLOORS_DISABLED = "Floors feature is disabled at account or in the request"
FLOOR_ERROR_CODE = 999  # PBS-Go's plain errors: ext.errors.prebid, errortypes.UnknownErrorCode

SKIP_RATE_MAX = 100
DATA_RATE_MAX = 100


@dataclass(frozen=True, slots=True)
class Price:
    """PBS-Go ``floors.Price``: a floorMin and its currency."""

    floor_min: float
    floor_min_cur: str


@dataclass(slots=True)
class FloorsResolution:
    """The outcome of :func:`resolve_floors`.

    ``request`` is the caller's request, its ``imp`` and ``ext`` replaced when floors changed them
    (new lists and dicts; shared nested objects are never written). ``errors`` are PBS-Go's texts
    (code :data:`FLOOR_ERROR_CODE`). ``floors`` is the final ``ext.prebid.floors`` as parsed data
    (None when the request was left alone), ``model_group`` the group used, ``skipped`` whether
    signalling was skipped (None when there was no group). :func:`~hbserver.floors.enforce.enforce_floors`
    needs only ``request``.
    """

    request: dict[str, Any]
    errors: list[str] = field(default_factory=list)
    floors: FloorRules | None = None
    model_group: ModelGroup | None = None
    skipped: bool | None = None


def _ext_floors(request: Mapping[str, Any]) -> Any:
    ext = request.get("ext")
    if type(ext) is not dict:
        return None
    prebid = ext.get("prebid")
    if type(prebid) is not dict:
        return None
    return prebid.get("floors")


def _has_bidfloor(imps: Any) -> bool:
    if type(imps) is not list:
        return False
    for imp in imps:
        if type(imp) is dict:
            floor = imp.get("bidfloor")
            if floor and type(floor) is not bool:
                return True
    return False


def request_has_floors(request: Mapping[str, Any]) -> bool:
    """Does the request carry floors of its own (``ext.prebid.floors`` or a numeric ``imp.bidfloor``)?"""
    return _ext_floors(request) is not None or _has_bidfloor(request.get("imp"))


def fetch_config(settings: AccountPriceFloors, request_floors: FloorRules | None) -> AccountFloorFetch:
    """The account's fetch settings. PBS-Go lets a request's ``floorendpoint.url`` replace the URL;
    here the server fetches only what its operator configured (a request naming any URL would make
    the server fetch it: server-side request forgery), so the request's URL is echoed, never fetched."""
    return settings.fetch


def resolve_floors(
    request: dict[str, Any],
    settings: AccountPriceFloors,
    convert: Convert,
    fetched: Fetched | FetchFloors | None = None,
    rand: Rand = random.randrange,
) -> FloorsResolution:
    """PBS-Go ``EnrichWithPriceFloors`` for one auction (call it when the host's
    ``price_floors.enabled`` is on; a disabled account gets PBS-Go's "disabled" error).

    ``fetched`` is the fetcher's answer for the account, or a function giving it for a fetch
    configuration (called only when the account uses dynamic data, with :func:`fetch_config`).
    ``rand(n)`` draws in ``[0, n)`` for ``usefetchdatarate``, ``modelweight`` and ``skiprate``.
    The request's top-level dict is updated in place and returned in the resolution.
    """
    raw = _ext_floors(request)
    if not settings.enabled:
        return FloorsResolution(request, [FLOORS_DISABLED])
    request_floors = None
    if raw is not None:
        try:
            request_floors = parsed_floor_rules(raw)
        except FloorsDataError as exc:  # refused at validation when validate_request_floors is wired in
            return FloorsResolution(request, [str(exc)])
        if request_floors is not None and request_floors.enabled is False:
            return FloorsResolution(request, [FLOORS_DISABLED])

    fetch_result = None  # the provider's rules; with them, created: the floors made from them when they are used
    if settings.use_dynamic_data and fetched is not None:
        fetch_result, created = _from_fetched(settings, fetched, request_floors, convert, rand)
    if request_floors is None and fetch_result is None and not _has_bidfloor(request.get("imp")):
        return FloorsResolution(request)

    kept = False  # final and group come from the _created_floors memo: what follows from them is kept too
    if fetch_result is not None and created is not None:
        final, group, default_weight, errors = created
    elif request_floors is not None:
        (final, group, default_weight, errors), kept = _created_from_request(request_floors, settings, rand)
    else:
        final, group, default_weight, errors = create_floors_from(None, settings, FETCH_NONE, LOCATION_NO_DATA, rand)

    skipped = None
    values: Mapping[str, float] | None = None
    if group is not None:
        assert final.data is not None
        skipped = should_skip_floors(group.skip_rate, final.data.skip_rate, final.skip_rate, rand)
        values = group.values if skipped else group.rules
        if not skipped:
            errors.extend(group.rule_errors)
            if group.rules:
                _update_imps(request, final, group, convert, errors)

    weight = 1 if default_weight else group.model_weight if group is not None else None  # 1: the group's was unset
    if kept:
        final, floors_json = _finished(final, group, skipped, values, weight)
    else:
        final = rules_with(final, skipped=skipped) if group is not None else final
        floors_json = floor_rules_json(final, values, weight)
    _set_ext_floors(request, floors_json)
    return FloorsResolution(request, errors, final, group, skipped)


def _from_fetched(
    settings: AccountPriceFloors,
    fetched: Fetched | FetchFloors,
    request_floors: FloorRules | None,
    convert: Convert,
    rand: Rand,
) -> tuple[FloorRules | None, Created | None]:
    """For an account using dynamic data: the provider's rules when the fetch succeeded with data,
    and :func:`create_floors_from` on them merged with the request's unless ``usefetchdatarate``
    draws the request's own floors (or none) instead."""
    answer = fetched(fetch_config(settings, request_floors)) if callable(fetched) else fetched
    if answer is None or answer.status != FETCH_SUCCESS or answer.rules is None:
        return None, None
    fetch_result = answer.rules
    fetch_data = fetch_result.data
    if fetch_data is None:
        return None, None
    if not use_fetched_data(fetch_data.use_fetch_data_rate, rand):
        return fetch_result, None
    merged = merge_floors(request_floors, fetch_result, convert)
    return fetch_result, create_floors_from(merged, settings, FETCH_SUCCESS, LOCATION_FETCH, rand)


def use_fetched_data(rate: int | None, rand: Rand) -> bool:
    """PBS-Go ``useFetchedData``: always without ``usefetchdatarate``, else that percent of auctions."""
    if rate is None:
        return True
    return rand(DATA_RATE_MAX) < rate


def should_skip_floors(group_rate: int, data_rate: int, root_rate: int, rand: Rand) -> bool:
    """PBS-Go ``shouldSkipFloors``: the first non-zero skip rate of group, data, root."""
    if group_rate > 0:
        rate = group_rate
    elif data_rate > 0:
        rate = data_rate
    else:
        rate = root_rate
    if rate == 0:
        return False
    return rate >= rand(SKIP_RATE_MAX + 1)


def select_floor_model_group(groups: list[ModelGroup], rand: Rand) -> tuple[ModelGroup, bool]:
    """PBS-Go ``selectFloorModelGroup``: a group drawn by ``modelweight`` (1 when unset), and whether
    the chosen group's weight was unset (PBS-Go then writes ``modelweight: 1``)."""
    weighted = sorted(groups, key=lambda g: 1 if g.model_weight is None else g.model_weight)
    total = sum(1 if g.model_weight is None else g.model_weight for g in weighted)
    win = rand(total + 1)
    chosen = weighted[0]
    for group in weighted:
        win -= 1 if group.model_weight is None else group.model_weight
        if win <= 0:
            chosen = group
            break
    return chosen, chosen.model_weight is None


def create_floors_from(
    floors: FloorRules | None,
    settings: AccountPriceFloors,
    fetch_status: str,
    location: str,
    rand: Rand,
) -> tuple[FloorRules, ModelGroup | None, bool, list[str]]:
    """PBS-Go ``createFloorsFrom``: ``(final floors, the one model group kept or None, whether its
    weight defaulted to 1, errors)``.

    As in PBS-Go, the reasons model groups were dropped are reported only when none is left (its
    ``floorModelErrList`` is shadowed in the other case)."""
    bare = FloorRules(fetch_status=fetch_status, location=location)
    if floors is None:
        return bare, None, False, []
    problem = validate_floor_params(floors)
    if problem is not None:
        return bare, None, False, [problem]
    bare = FloorRules(fetch_status=fetch_status, location=location, enforcement=floors.enforcement)
    data = floors.data
    if data is None:
        return bare, None, False, []
    valid, errors = select_valid_model_groups(data.model_groups, settings)
    if not valid:
        return bare, None, False, errors
    default_weight = False
    chosen = valid[0]
    if len(valid) > 1:
        chosen, default_weight = select_floor_model_group(valid, rand)
    final = rules_with(
        floors, data=data_with(data, model_groups=(chosen,)), location=location, fetch_status=fetch_status
    )
    return final, chosen, default_weight, []


# create_floors_from on the request's own floors, for parses that parsed_floor_rules shares:
# id(floors) -> (floors, settings, result). Only results that drew no random number are kept.
CREATED_FLOORS_MAX = 512
CREATED_FLOORS_MAX_RULES = 256  # larger rule tables are not kept (the parse memo does not keep them either)
Created = tuple[FloorRules, ModelGroup | None, bool, list[str]]
_created_floors: dict[int, tuple[FloorRules, AccountPriceFloors, Created]] = {}


def _created_from_request(floors: FloorRules, settings: AccountPriceFloors, rand: Rand) -> tuple[Created, bool]:
    """:func:`create_floors_from` for ``LOCATION_REQUEST``, once per (parsed floors, account
    settings) when it does not draw (one valid model group): the entry holds ``floors``, so its id
    cannot be reused while the entry exists. The flag says whether the result is the kept one."""
    entry = _created_floors.get(id(floors))
    if entry is not None and entry[0] is floors and entry[1] is settings:
        final, group, default_weight, errors = entry[2]
        return (final, group, default_weight, list(errors)), True
    draws = 0

    def counted(n: int) -> int:
        nonlocal draws
        draws += 1
        return rand(n)

    result = create_floors_from(floors, settings, FETCH_NONE, LOCATION_REQUEST, counted)
    data = floors.data
    rules = sum(len(group.values) for group in data.model_groups) if data is not None else 0
    if draws == 0 and rules <= CREATED_FLOORS_MAX_RULES:
        if len(_created_floors) >= CREATED_FLOORS_MAX:
            del _created_floors[next(iter(_created_floors))]
        _created_floors[id(floors)] = (floors, settings, (result[0], result[1], result[2], list(result[3])))
        return result, True
    return result, False


# A kept resolution's end (the rules marked skipped or not, and their ext.prebid.floors JSON) by the
# kept final rules' id: the same for every auction of those floors but for the skip draw. The entry
# holds the final rules, so the id cannot be reused while it exists; the JSON is shared by those
# auctions' requests, which nothing mutates (bidders get copies made only where something changes).
_finished_floors: dict[
    int, tuple[FloorRules, ModelGroup | None, dict[bool | None, tuple[FloorRules, dict[str, Any]]]]
] = {}


def _finished(
    final: FloorRules,
    group: ModelGroup | None,
    skipped: bool | None,
    values: Mapping[str, float] | None,
    weight: int | None,
) -> tuple[FloorRules, dict[str, Any]]:
    """``rules_with(final, skipped=skipped)`` (with a group) and its :func:`floor_rules_json`, once per
    kept ``final`` and skip outcome (``values`` and ``weight`` follow from ``group`` and the outcome)."""
    entry = _finished_floors.get(id(final))
    if entry is None or entry[0] is not final or entry[1] is not group:
        if len(_finished_floors) >= CREATED_FLOORS_MAX:
            del _finished_floors[next(iter(_finished_floors))]
        entry = (final, group, {})
        _finished_floors[id(final)] = entry
    done = entry[2].get(skipped)
    if done is None:
        rules = rules_with(final, skipped=skipped) if group is not None else final
        done = (rules, floor_rules_json(rules, values, weight))
        entry[2][skipped] = done
    return done


def resolve_floor_min(request_floors: FloorRules | None, fetch_floors: FloorRules | None, convert: Convert) -> Price:
    """PBS-Go ``resolveFloorMin``: the request's floorMin wins; else the provider's, in the request's
    currency when it names one (currency defaulting to each side's data currency)."""
    request_min = provider_min = 0.0
    request_cur = provider_cur = ""
    if request_floors is not None:
        request_min = request_floors.floor_min
        request_cur = request_floors.floor_min_cur
        if not request_cur and request_floors.data is not None:
            request_cur = request_floors.data.currency
    if fetch_floors is not None:
        provider_min = fetch_floors.floor_min
        provider_cur = fetch_floors.floor_min_cur
        if not provider_cur and fetch_floors.data is not None:
            provider_cur = fetch_floors.data.currency
    if request_cur:
        if request_min > 0:
            return Price(request_min, request_cur)
        if provider_min > 0:
            if provider_cur == request_cur or not provider_cur:
                return Price(provider_min, request_cur)
            try:
                converted = convert(provider_min, provider_cur, request_cur)
            except ConversionError:
                return Price(0.0, request_cur)
            return Price(round4(converted), request_cur)
    if provider_cur:
        if provider_min > 0:
            return Price(provider_min, provider_cur)
        if request_min > 0:
            return Price(request_min, provider_cur)
    return Price(request_min, request_cur)


def merge_floors(request_floors: FloorRules | None, fetch_floors: FloorRules, convert: Convert) -> FloorRules:
    """PBS-Go ``mergeFloors``: the provider's floors with the request's enforcement, floorMin and
    endpoint URL; enabled only when both are."""
    enabled = fetch_floors.enabled is not False and (request_floors is None or request_floors.enabled is not False)
    if request_floors is None:
        return rules_with(fetch_floors, enabled=enabled)
    changes: dict[str, Any] = {"enabled": enabled}
    if request_floors.enforcement is not None:
        changes["enforcement"] = request_floors.enforcement
    price = resolve_floor_min(request_floors, fetch_floors, convert)
    if price.floor_min > 0:
        changes["floor_min"] = price.floor_min
        changes["floor_min_cur"] = price.floor_min_cur
    if request_floors.location_url:
        changes["location_url"] = request_floors.location_url
    return rules_with(fetch_floors, **changes)


def floor_currency(floors: FloorRules) -> str:
    """PBS-Go ``getFloorCurrency``: the group's currency, else the data's, else USD."""
    currency = DEFAULT_CURRENCY
    data = floors.data
    if data is not None:
        if data.currency:
            currency = data.currency
        if data.model_groups and data.model_groups[0].currency:
            currency = data.model_groups[0].currency
    return currency


def _imp_floors(imp: Mapping[str, Any]) -> dict[str, Any] | None:
    ext = imp.get("ext")
    if type(ext) is not dict:
        return None
    prebid = ext.get("prebid")
    if type(prebid) is not dict:
        return None
    floors = prebid.get("floors")
    if floors is None:
        return None
    if type(floors) is not dict:
        raise FloorsDataError("imp.ext.prebid.floors must be an object")
    return fold(floors)


def min_floor_value(
    floors: FloorRules, imp: Mapping[str, Any], floor_cur: str, convert: Convert
) -> tuple[float, str | None]:
    """PBS-Go ``getMinFloorValue``: the floorMin for ``imp`` in ``floor_cur`` (the imp's
    ``ext.prebid.floors`` floorMin/floorMinCur over the floors'), or an error text."""
    floor_min = round4(floors.floor_min)
    floor_min_cur = floors.floor_min_cur
    try:
        imp_floors = _imp_floors(imp)
        imp_min = 0.0
        imp_cur = ""
        if imp_floors is not None:
            value = imp_floors.get("floormin")
            if value is not None and type(value) is not float and type(value) is not int:
                raise FloorsDataError("imp.ext.prebid.floors.floormin must be a number")
            if value is not None and value > 0:
                imp_min = float(value)
            value = imp_floors.get("floormincur")
            if value is not None and type(value) is not str:
                raise FloorsDataError("imp.ext.prebid.floors.floorminCur must be a string")
            imp_cur = value or ""
        if imp_min > 0:
            floor_min = imp_min
        if imp_cur:
            floor_min_cur = imp_cur
        if floor_min > 0 and floor_min_cur:
            if floors.floor_min_cur and imp_cur and floors.floor_min_cur != imp_cur:
                logger.debug("FloorMinCur are different in floorExt and ImpExt")
            if floor_cur and floor_min_cur != floor_cur:
                floor_min = convert(floor_min, floor_min_cur, floor_cur)
    except (ConversionError, FloorsDataError) as exc:
        return 0.0, f"Error in getting FloorMin value : '{exc}'"
    return round4(floor_min), None


def _update_imps(
    request: dict[str, Any], floors: FloorRules, group: ModelGroup, convert: Convert, errors: list[str]
) -> None:
    """PBS-Go ``updateBidRequestWithFloors``' loop over the imps (new dicts for the changed ones)."""
    imps = request.get("imp")
    if type(imps) is not list:
        return
    rule_values = RuleValues(group.fields, request)
    floor_cur = floor_currency(floors)
    new_imps: list[Any] | None = None
    for index, imp in enumerate(imps):
        if type(imp) is not dict:
            continue
        matched = find_rule(group, rule_values.for_imp(imp))
        floor_value = group.rules[matched] if matched is not None else group.default
        if floor_value == 0.0:
            continue
        floor_min, problem = min_floor_value(floors, imp, floor_cur, convert)
        if problem is not None:
            errors.append(problem)
            continue
        floor_value = round4(floor_value)
        bid_floor = floor_min if floor_min > 0.0 and floor_value < floor_min else floor_value
        new_imp = dict(imp)
        new_imp["bidfloor"] = bid_floor
        new_imp["bidfloorcur"] = floor_cur
        if matched is not None:
            _set_imp_floors(new_imp, matched, floor_value, bid_floor)
        if new_imps is None:
            new_imps = list(imps)
        new_imps[index] = new_imp
    if new_imps is not None:
        request["imp"] = new_imps


def _set_imp_floors(imp: dict[str, Any], rule: str, rule_value: float, value: float) -> None:
    """PBS-Go ``updateImpExtWithFloorDetails``: imp.ext.prebid.floors replaced by the matched rule."""
    ext = imp.get("ext")
    ext = dict(ext) if type(ext) is dict else {}
    prebid = ext.get("prebid")
    prebid = dict(prebid) if type(prebid) is dict else {}
    details: dict[str, Any] = {}
    if rule:
        details["floorrule"] = rule
    if rule_value:
        details["floorrulevalue"] = rule_value
    if value:
        details["floorvalue"] = value
    prebid["floors"] = details
    ext["prebid"] = prebid
    imp["ext"] = ext


def _set_ext_floors(request: dict[str, Any], floors_json: dict[str, Any]) -> None:
    """PBS-Go ``updateFloorsInRequest``: ext.prebid.floors replaced (new ext and prebid dicts)."""
    ext = request.get("ext")
    ext = dict(ext) if type(ext) is dict else {}
    prebid = ext.get("prebid")
    prebid = dict(prebid) if type(prebid) is dict else {}
    prebid["floors"] = floors_json
    ext["prebid"] = prebid
    request["ext"] = ext
