"""``ext.prebid.adservertargeting``: publisher-defined targeting keys added to every bid of a built response.

Follows PBS-Go ``adservertargeting/`` (``Apply``: ``collect`` then ``resolve``). Each entry names a
``key``, a ``source`` (case-insensitive) and a ``value``:

* ``static``: ``value`` is the targeting value itself;
* ``bidrequest``: ``value`` is a dotted path into the resolved request. ``ext.prebid.amp.data.<name>``
  reads the AMP query parameter ``<name>``; ``imp.<path>`` is read from every imp and given to the bids
  of that imp (by ``impid``); any other path is read from the request root;
* ``bidresponse``: ``value`` is a path into the response, per bid: ``seatbid.bid.<path>`` (the bid),
  ``seatbid.ext.<path>`` (its seat's ext), ``ext.<path>`` (the response ext) or one of the top-level
  fields ``id``, ``bidid``, ``cur``, ``customdata``, ``nbr``. ``{{BIDDER}}`` in its key becomes the seat.

Only strings and numbers are taken (``[N]`` indexes an array, as PBS-Go's jsonparser). Keys are cut to
the account's ``truncate_target_attr`` (20 without one). Every problem is a warning with code 10007
(``errortypes.AdServerTargetingWarningCode``) under ``ext.warnings.general``, in PBS-Go's words.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import orjson

from hbserver.numbers import INT64, int_or

WARNING_CODE = 10007  # errortypes.AdServerTargetingWarningCode
MAX_KEY_LENGTH = 20  # respdataprocessor.go MaxKeyLength

SOURCE_BID_REQUEST = "bidrequest"
SOURCE_STATIC = "static"
SOURCE_BID_RESPONSE = "bidresponse"
_SOURCES = frozenset((SOURCE_BID_REQUEST, SOURCE_STATIC, SOURCE_BID_RESPONSE))

BIDDER_MACRO = "{{BIDDER}}"
_DELIMITER = "."
_AMP_DATA_PREFIX = "ext.prebid.amp.data."
_IMP_PREFIX = "imp."

# how a bidresponse path is read (decided once per request in _response_target)
_FROM_BID = 0  # seatbid.bid.<path>
_FROM_SEAT_EXT = 1  # seatbid.ext.<path>
_FROM_RESPONSE_EXT = 2  # ext.<path>
_FROM_RESPONSE_FIELD = 3  # id | bidid | cur | customdata | nbr
_EMPTY_VALUE = 4  # seatbid.<anything else>: PBS-Go sets the key to ""
_NO_PATH = 5  # seatbid, seatbid.bid, ext...: nothing after the prefix (PBS-Go indexes past its split)

_RESPONSE_FIELDS = frozenset(("id", "bidid", "cur", "customdata", "nbr"))

# a request value: one value for every bid, or one per imp id
RequestValue = str | dict[str, str]


class LookupFailure(Exception):
    """A value that could not be read; its text is the warning's (PBS-Go's error text)."""


def _not_found(path: str) -> LookupFailure:
    return LookupFailure(f"value not found for path: {path}")


@dataclass(frozen=True, slots=True)
class ResponseTarget:
    """A ``bidresponse`` entry with its path split once (PBS-Go ``ResponseTargetingData``)."""

    key: str
    has_macro: bool
    path: str
    kind: int
    sub_path: str  # the path under the prefix: the one named in warnings
    keys: tuple[str, ...]


@dataclass(slots=True)
class Collected:
    """What ``collect`` gathered from the request (PBS-Go ``adServerTargetingData``)."""

    request_values: dict[str, RequestValue]
    response_targets: list[ResponseTarget]


def wants_ad_server_targeting(prebid: Any) -> bool:
    """True when the request's ``ext.prebid`` has a non-empty ``adservertargeting`` (PBS-Go's own test)."""
    return isinstance(prebid, dict) and bool(prebid.get("adservertargeting"))


def apply_ad_server_targeting(
    request: Mapping[str, Any],
    response: dict[str, Any],
    query: Mapping[str, str] | None,
    truncate: int | None = MAX_KEY_LENGTH,
) -> list[dict[str, Any]]:
    """Add the request's ad server targeting to every bid of ``response`` (PBS-Go ``Apply``).

    ``request`` is the resolved request, ``query`` the AMP query parameters (None off AMP) and
    ``truncate`` the account's ``truncate_target_attr``. The warnings are appended to
    ``response["ext"]["warnings"]["general"]`` and returned.
    """
    collected, warnings = collect(request, query)
    if collected is not None:
        resolve(collected, response, warnings, truncate)
    if warnings:
        ext = response.get("ext")
        if not isinstance(ext, dict):
            ext = response["ext"] = {}
        by_key = ext.get("warnings")
        if not isinstance(by_key, dict):
            by_key = ext["warnings"] = {}
        general = by_key.get("general")
        if not isinstance(general, list):
            general = by_key["general"] = []
        general.extend(warnings)
    return warnings


def _warning(message: str) -> dict[str, Any]:
    return {"code": WARNING_CODE, "message": message}


# --- collect: the request side (adservertargeting.go collect, requestlookup.go) ---


def collect(
    request: Mapping[str, Any], query: Mapping[str, str] | None
) -> tuple[Collected | None, list[dict[str, Any]]]:
    """The request's entries resolved as far as the request allows, and the warnings so far."""
    try:
        targets = targets_of(request)
    except LookupFailure:
        # PBS-Go then dereferences nil in resolve; here the bids are just left alone
        return None, [_warning("unable to extract adServerTargeting from request")]
    valid, warnings = validate_targets(targets)
    request_values: dict[str, RequestValue] = {}
    response_targets: list[ResponseTarget] = []
    cache = RequestCache(request)
    for key, source, value in valid:
        source = source.lower()
        if source == SOURCE_BID_REQUEST:
            try:
                found = value_from_request(cache, value, query)
            except LookupFailure as exc:
                warnings.append(_warning(str(exc)))
            else:
                request_values[key] = found
        elif source == SOURCE_STATIC:
            request_values[key] = value
        else:
            response_targets.append(response_target(key, value))
    return Collected(request_values, response_targets), warnings


def targets_of(request: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """``ext.prebid.adservertargeting`` as (key, source, value); LookupFailure when it is not that shape."""
    ext = request.get("ext")
    if ext is None:
        return []
    if not isinstance(ext, dict):
        raise LookupFailure("request.ext is not an object")
    prebid = ext.get("prebid")
    if prebid is None:
        return []
    if not isinstance(prebid, dict):
        raise LookupFailure("request.ext.prebid is not an object")
    entries = prebid.get("adservertargeting")
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise LookupFailure("adservertargeting is not an array")
    targets = []
    for entry in entries:
        if entry is None:  # JSON null decodes to the zero entry in PBS-Go
            entry = {}
        elif not isinstance(entry, dict):
            raise LookupFailure("adservertargeting entry is not an object")
        fields = []
        for name in ("key", "source", "value"):
            item = entry.get(name)
            if item is None:
                item = ""
            elif not isinstance(item, str):
                raise LookupFailure(f"adservertargeting {name} is not a string")
            fields.append(item)
        targets.append((fields[0], fields[1], fields[2]))
    return targets


def validate_targets(
    targets: Sequence[tuple[str, str, str]],
) -> tuple[list[tuple[str, str, str]], list[dict[str, Any]]]:
    """The entries with a key, a value and a known source, and a warning for each missing part."""
    valid = []
    warnings = []
    for index, (key, source, value) in enumerate(targets):
        correct = True
        if not key:
            correct = False
            warnings.append(_warning(f"Key is empty for the ad server targeting object at index {index}"))
        if not value:
            correct = False
            warnings.append(_warning(f"Value is empty for the ad server targeting object at index {index}"))
        if source.lower() not in _SOURCES:
            correct = False
            warnings.append(_warning(f"Incorrect source for the ad server targeting object at index {index}"))
        if correct:
            valid.append((key, source, value))
    return valid, warnings


class RequestCache:
    """The request and its imps, read once per request (PBS-Go ``requestCache``)."""

    __slots__ = ("_imps", "request")

    def __init__(self, request: Any) -> None:
        self.request = request
        self._imps: list[Any] = []

    def imps(self) -> list[Any]:
        """The request's imps; LookupFailure (PBS-Go's texts) without an ``imp`` or with a non-array one."""
        if not self._imps:
            request = self.request
            if not isinstance(request, dict) or "imp" not in request:
                raise LookupFailure("Key path not found")
            imps = request["imp"]
            if imps is None:
                imps = []
            elif not isinstance(imps, list):
                first = orjson.dumps(imps)[:1].decode()
                raise LookupFailure(f"expect [ or n, but found {first}")
            self._imps = imps
        return self._imps


def value_from_request(cache: RequestCache, path: str, query: Mapping[str, str] | None) -> RequestValue:
    """A ``bidrequest`` value: an AMP query parameter, a value per imp, or a request value."""
    from_query = value_from_query(path, query)
    if from_query is not None:
        return from_query
    by_imp = value_from_imps(path, cache)
    if by_imp:
        return by_imp
    return split_and_get(path, cache.request)


def value_from_query(path: str, query: Mapping[str, str] | None) -> str | None:
    """The AMP query parameter an ``ext.prebid.amp.data.<name>`` path names; None for another path."""
    name, found = trim_prefix(path, _AMP_DATA_PREFIX)
    if not found:
        return None
    value = query.get(name, "") if query is not None else ""
    if not value:
        raise _not_found(path)
    return value


def value_from_imps(path: str, cache: RequestCache) -> dict[str, str]:
    """imp id -> value for an ``imp.<path>`` path (every imp must have it); empty for another path."""
    sub_path, found = trim_prefix(path, _IMP_PREFIX)
    if not found:
        return {}
    keys = sub_path.split(_DELIMITER)
    by_imp = {}
    for imp in cache.imps():
        if not isinstance(imp, dict) or "id" not in imp:
            raise LookupFailure("Key path not found")
        by_imp[raw_text(imp["id"])] = typed_lookup(imp, path, keys)
    return by_imp


# --- shared lookups (utils.go) ---


def trim_prefix(path: str, prefix: str) -> tuple[str, bool]:
    """What follows ``prefix`` when the path starts with it and holds it once (PBS-Go verifyPrefixAndTrim)."""
    parts = path.split(prefix)
    if len(parts) == 2 and not parts[0]:
        return parts[1], True
    return "", False


def split_and_get(path: str, data: Any) -> str:
    """The string or number at the dotted ``path`` in ``data``."""
    return typed_lookup(data, path, path.split(_DELIMITER))


def typed_lookup(data: Any, path: str, keys: Sequence[str]) -> str:
    """The string or number under ``keys`` as text; ``path`` names it in the failure."""
    node = data
    for key in keys:
        if isinstance(node, dict):
            if key not in node:
                raise _not_found(path)
            node = node[key]
        elif isinstance(node, list) and len(key) > 2 and key[0] == "[" and key[-1] == "]":
            index = int_or(key[1:-1], -1, INT64, signs="+")  # strconv.Atoi's; a negative one finds nothing
            if not 0 <= index < len(node):
                raise _not_found(path)
            node = node[index]
        else:
            raise _not_found(path)
    if isinstance(node, str):
        return node
    if isinstance(node, int | float) and not isinstance(node, bool):
        return number_text(node)
    raise LookupFailure(f"incorrect value type for path: {path}, value can only be string or number")


def number_text(value: int | float) -> str:
    """A JSON number as PBS-Go writes it (shortest digits; exponent only below 1e-6 or from 1e21)."""
    if isinstance(value, int):
        return str(value)
    magnitude = abs(value)
    if magnitude == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    if magnitude < 1e-6 or magnitude >= 1e21:
        text = repr(value)
        mark = text.find("e-0")
        return text if mark < 0 else text[: mark + 2] + text[mark + 3 :]  # e-07 -> e-7, as Go
    if value.is_integer():
        return str(int(value))
    text = repr(value)
    return format(Decimal(text), "f") if "e" in text else text


def raw_text(value: Any) -> str:
    """Any JSON value as jsonparser.Get returns it: a string's contents, anything else as JSON text."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return number_text(value)
    return orjson.dumps(value).decode()


# --- resolve: the response side (adservertargeting.go resolve, respdataprocessor.go) ---


def response_target(key: str, path: str) -> ResponseTarget:
    """A ``bidresponse`` entry with its path split into what every bid reads."""
    has_macro = BIDDER_MACRO in key.upper()
    parts = path.split(_DELIMITER)
    head = parts[0]
    kind = _FROM_RESPONSE_FIELD
    separator = ""
    if head == "seatbid":
        second = parts[1] if len(parts) > 1 else None
        if second == "bid":
            kind, separator = _FROM_BID, "seatbid.bid."
        elif second == "ext":
            kind, separator = _FROM_SEAT_EXT, "seatbid.ext."
        elif second is None:
            kind = _NO_PATH
        else:
            kind = _EMPTY_VALUE
    elif head == "ext":
        kind, separator = _FROM_RESPONSE_EXT, "ext."
    sub_path = path
    if separator:
        sub = sub_path_after(path, separator)
        if sub is None:
            kind = _NO_PATH
        else:
            sub_path = sub
    keys = tuple(sub_path.split(_DELIMITER)) if kind in (_FROM_BID, _FROM_SEAT_EXT, _FROM_RESPONSE_EXT) else ()
    return ResponseTarget(key, has_macro, path, kind, sub_path, keys)


def sub_path_after(path: str, separator: str) -> str | None:
    """The part after the first ``separator`` up to a second one (PBS-Go ``strings.Split(...)[1]``)."""
    parts = path.split(separator)
    return parts[1] if len(parts) > 1 else None


def response_value(target: ResponseTarget, bid: Mapping[str, Any], seat_ext: Any, response: Mapping[str, Any]) -> str:
    """One bid's value for a ``bidresponse`` entry; LookupFailure with PBS-Go's text."""
    kind = target.kind
    if kind == _FROM_BID:
        return typed_lookup(bid, target.sub_path, target.keys)
    if kind == _FROM_SEAT_EXT:
        return typed_lookup(seat_ext, target.sub_path, target.keys)
    if kind == _FROM_RESPONSE_EXT:
        return typed_lookup(response.get("ext"), target.sub_path, target.keys)
    if kind == _FROM_RESPONSE_FIELD:
        return response_field(response, target.path)
    if kind == _EMPTY_VALUE:
        return ""
    raise _not_found(target.path)


def response_field(response: Mapping[str, Any], field: str) -> str:
    """A top-level response field as text (OpenRTB 2.5/2.6: id, bidid, cur, customdata, nbr)."""
    if field not in _RESPONSE_FIELDS:
        raise LookupFailure(f"key not found for field in bid response: {field}")
    value = response.get(field)
    if value is None:
        return "0" if field == "nbr" else ""
    return raw_text(value)


def resolve_key(target: ResponseTarget, bidder: str) -> str:
    """The entry's key with ``{{BIDDER}}`` replaced by the seat."""
    return target.key.replace(BIDDER_MACRO, bidder) if target.has_macro else target.key


def add_request_values(request_values: Mapping[str, RequestValue], targeting: dict[str, str], imp_id: str) -> None:
    """The request-side values for a bid of ``imp_id`` (an imp value missing for it is "")."""
    for key, value in request_values.items():
        if isinstance(value, str):
            if value:
                targeting[key] = value
        elif value:
            targeting[key] = value.get(imp_id, "")


def add_response_values(
    targets: Sequence[ResponseTarget],
    targeting: dict[str, str],
    bidder: str,
    bid: Mapping[str, Any],
    response: Mapping[str, Any],
    seat_ext: Any,
) -> list[dict[str, Any]]:
    """The response-side values for one bid, and a warning for each that could not be read."""
    warnings = []
    for target in targets:
        key = resolve_key(target, bidder)
        try:
            targeting[key] = response_value(target, bid, seat_ext, response)
        except LookupFailure as exc:
            warnings.append(_warning(f"{exc} for bidder: {bidder}, bid id: {raw_text(bid.get('id', ''))}"))
    return warnings


def truncate_key(key: str, max_length: int) -> str:
    """``key`` cut to ``max_length`` bytes; a character cut in two becomes U+FFFD per byte, as Go's JSON."""
    if key.isascii():
        return key[:max_length]
    raw = key.encode()
    if len(raw) <= max_length:
        return key
    cut = raw[:max_length]
    text = cut.decode(errors="ignore")
    return text + "\ufffd" * (len(cut) - len(text.encode()))


def truncate_keys(targeting: Mapping[str, str], truncate: int | None) -> dict[str, str]:
    """The targeting with every key cut to ``truncate`` (20 when unset or not positive)."""
    max_length = truncate if truncate is not None and truncate > 0 else MAX_KEY_LENGTH
    return {truncate_key(key, max_length): value for key, value in targeting.items()}


def merge_bid_targeting(bid: dict[str, Any], targeting: Mapping[str, str], truncate: int | None) -> None:
    """Merge the (truncated) targeting into ``bid.ext.prebid.targeting`` (PBS-Go buildBidExt's merge patch)."""
    ext = bid.get("ext")
    if not isinstance(ext, dict):
        ext = bid["ext"] = {}
    prebid = ext.get("prebid")
    if not isinstance(prebid, dict):
        prebid = ext["prebid"] = {}
    if not targeting:
        return
    current = prebid.get("targeting")
    merged = dict(current) if isinstance(current, dict) else {}  # a new dict: the auction's own stays as it was
    merged.update(truncate_keys(targeting, truncate))
    prebid["targeting"] = merged


def resolve(
    collected: Collected,
    response: dict[str, Any],
    warnings: list[dict[str, Any]],
    truncate: int | None,
) -> None:
    """Give every bid of ``response`` its targeting; the response-side warnings go to ``warnings``."""
    seats = response.get("seatbid")
    if not isinstance(seats, list):
        return
    request_values = collected.request_values
    targets = collected.response_targets
    for seat in seats:
        if not isinstance(seat, dict):
            continue
        bidder = seat.get("seat")
        bidder = bidder if isinstance(bidder, str) else ""
        seat_ext = seat.get("ext")
        bids = seat.get("bid")
        if not isinstance(bids, list):
            continue
        for bid in bids:
            if not isinstance(bid, dict):
                continue
            targeting: dict[str, str] = {}
            if request_values:
                imp_id = bid.get("impid")
                add_request_values(request_values, targeting, imp_id if isinstance(imp_id, str) else "")
            if targets:
                warnings.extend(add_response_values(targets, targeting, bidder, bid, response, seat_ext))
            merge_bid_targeting(bid, targeting, truncate)
