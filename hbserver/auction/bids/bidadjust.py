"""Bid adjustments: ``ext.prebid.bidadjustmentfactors`` and the ``ext.prebid.bidadjustments`` rules.

Follows PBS-Go:

- ``bidadjustment/build_rules.go`` (``Merge``: the request's rules win per media type, bidder and deal
  ID; the merged rules are validated and dropped whole with "bid adjustment on account was invalid"),
- ``bidadjustment/validate.go`` (``Validate``), ``bidadjustment/apply.go`` (``Apply``: the most specific
  of the ``mediatype|bidder|dealid`` rules with ``*`` wildcards, rounded to 4 decimals, a floor of 0.1
  for a bid without a deal and 0 for one with),
- ``exchange/bidder.go`` ``requestBid`` (price * factor * rate, then the rules; the factor of the
  bid's seat, else of the bidder as named in the request; ``getBidTypeForAdjustments``),
- ``exchange/utils.go`` ``getExtBidAdjustmentFactors`` (lower-cased names) and
  ``applyBidAdjustmentToFloor`` (:meth:`BidAdjustments.floor_factor`),
- ``endpoints/openrtb2/auction.go`` ``validateBidAdjustmentFactors`` (the 400 texts) and the
  request's "bid adjustment from request was invalid" warning.

``bidadjustmentfactors.mediatypes`` ({media type: {bidder: factor}}) exists only in PBS-Java
(``BidAdjustmentFactorResolver``, ``RequestValidator``): its precedence and texts are PBS-Java's.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple, Protocol

from hbserver.adapters.base import ConversionError
from hbserver.auction.common.messages import Message

__all__ = [
    "ADJ_CPM",
    "ADJ_MULTIPLIER",
    "ADJ_STATIC",
    "BID_ADJUSTMENT_WARNING_CODE",
    "FACTOR_MEDIA_TYPES",
    "MIN_BID",
    "RULE_MEDIA_TYPES",
    "Adjustment",
    "BidAdjustments",
    "adjustment_type",
    "merge_bid_adjustments",
    "validate_adjustment_factors",
    "validate_bid_adjustments",
]

Convert = Callable[[float, str, str], float]

ADJ_CPM = "cpm"
ADJ_MULTIPLIER = "multiplier"
ADJ_STATIC = "static"
WILDCARD = "*"
VIDEO_INSTREAM = "video-instream"
VIDEO_OUTSTREAM = "video-outstream"
# ext.prebid.bidadjustments.mediatype keys PBS-Go reads (openrtb_ext.MediaType); others are ignored.
RULE_MEDIA_TYPES = ("banner", "audio", "native", VIDEO_INSTREAM, VIDEO_OUTSTREAM, WILDCARD)
# ext.prebid.bidadjustmentfactors.mediatypes keys (PBS-Java ImpMediaType).
FACTOR_MEDIA_TYPES = ("banner", "audio", "native", "video", VIDEO_INSTREAM, VIDEO_OUTSTREAM)
# PBS-Java looks an in-stream video bid up under "video" (BidAdjustmentFactorResolver).
_FACTOR_KEY = {VIDEO_INSTREAM: "video"}

BID_ADJUSTMENT_WARNING_CODE = 10008  # PBS-Go errortypes.BidAdjustmentWarningCode
REQUEST_INVALID = "bid adjustment from request was invalid"  # ext.warnings.general
ACCOUNT_INVALID = "bid adjustment on account was invalid"  # ext.warnings.prebid

MIN_BID = 0.1  # a bid without a deal adjusted to 0 or below
_PRICE_PRECISION = 10000.0  # rounds to 4 decimals
_MAX_MULTIPLIER = 100.0
_MAX_FLOAT = sys.float_info.max
_PLCMT_ACCOMPANYING_CONTENT = 4  # adcom1.VideoPlcmtAccompanyingContent: the only "outstream" video
_ACCOUNT_CACHE_SIZE = 256

RuleKey = tuple[str, str, str]  # (media type, bidder, deal ID), each possibly "*"


class Adjustment(NamedTuple):
    """One validated adjustment: ``kind`` is cpm, multiplier or static."""

    kind: str
    value: float
    currency: str


class BidderLookup(Protocol):
    """``Registry.lookup``: the bidder for a case-insensitive name, or None."""

    def __call__(self, name: str, /) -> Any: ...


# --- validation (PBS-Go bidadjustment.Validate) ---------------------------------------------------


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _adjustment_problem(raw: Any, path: str) -> str | None:
    """What is wrong with one adjustment (PBS-Go ``validateAdjustment`` plus the JSON types)."""
    if raw is None:  # PBS-Go decodes null as the zero adjustment: no adjtype
        raw = {}
    if not isinstance(raw, dict):
        return f"{path} must be an object"
    kind = raw.get("adjtype")
    if kind is None:
        kind = ""
    if not isinstance(kind, str):
        return f"{path}.adjtype must be a string"
    value = raw.get("value")
    if value is None:
        value = 0.0
    if not _number(value):
        return f"{path}.value must be a number"
    try:
        value = float(value)
    except OverflowError:
        return f"{path}.value is out of range"
    currency = raw.get("currency")
    if currency is None:
        currency = ""
    if not isinstance(currency, str):
        return f"{path}.currency must be a string"
    if kind == ADJ_MULTIPLIER:
        if not 0 <= value < _MAX_MULTIPLIER:
            return f"{path}: a multiplier must be at least 0 and less than 100, got {value:g}"
        return None
    if kind in (ADJ_CPM, ADJ_STATIC):
        if not currency:
            return f"{path}: a {kind} adjustment needs a currency"
        if not 0 <= value < _MAX_FLOAT:
            return f"{path}: a {kind} value must be at least 0, got {value:g}"
        return None
    return f'{path}.adjtype "{kind}" is not one of cpm, multiplier, static'


def _media_type_problem(by_bidder: Any, path: str) -> str | None:
    """PBS-Go ``validateForMediaType``: a null bidder or deal entry is invalid, an empty one is not."""
    if by_bidder is None:
        return None
    if not isinstance(by_bidder, dict):
        return f"{path} must be an object"
    for bidder, by_deal in by_bidder.items():
        bidder_path = f"{path}.{bidder}"
        if by_deal is None:
            return f"{bidder_path} must not be null"
        if not isinstance(by_deal, dict):
            return f"{bidder_path} must be an object"
        for deal, adjustments in by_deal.items():
            deal_path = f"{bidder_path}.{deal}"
            if adjustments is None:
                return f"{deal_path} must not be null"
            if not isinstance(adjustments, list):
                return f"{deal_path} must be an array"
            for index, adjustment in enumerate(adjustments):
                problem = _adjustment_problem(adjustment, f"{deal_path}[{index}]")
                if problem:
                    return problem
    return None


def validate_bid_adjustments(raw: Any) -> str | None:
    """What is wrong with an ``ext.prebid.bidadjustments`` object (None when it is valid).

    PBS-Go ``Validate`` (negative value, multiplier of 100 or more, cpm or static without a currency,
    unknown ``adjtype``, a null bidder or deal entry) plus the JSON types PBS-Go's decoding requires.
    Media types other than banner, audio, native, video-instream, video-outstream and ``*`` are
    ignored, as PBS-Go ignores them. None (no adjustments) is valid.
    """
    if raw is None:
        return None
    if not isinstance(raw, dict):
        return "must be an object"
    by_type = raw.get("mediatype")
    if by_type is None:
        return None
    if not isinstance(by_type, dict):
        return "mediatype must be an object"
    for media_type in RULE_MEDIA_TYPES:
        problem = _media_type_problem(by_type.get(media_type), f"mediatype.{media_type}")
        if problem:
            return problem
    return None


# --- merging and rule building (PBS-Go Merge, BuildRules) -------------------------------------------


def _merge_media_type(request: Any, account: Any) -> Any:
    """PBS-Go ``mergeForMediaType``: the account's bidders and deal IDs fill what the request lacks."""
    if request is None:
        return account
    if account is None:
        return request
    if not isinstance(account, dict) or not isinstance(request, dict):
        return account if not isinstance(account, dict) else request  # let validation name it
    merged = dict(request)
    for bidder, account_deals in account.items():
        request_deals = merged.get(bidder)
        if bidder not in merged:
            merged[bidder] = account_deals
        elif isinstance(account_deals, dict) and isinstance(request_deals, dict):
            deals = dict(request_deals)
            for deal, adjustments in account_deals.items():
                deals.setdefault(deal, adjustments)
            merged[bidder] = deals
    return merged


def merge_bid_adjustments(request: Any, account: Any) -> Any:
    """PBS-Go ``merge``: the request's rules, completed by the account's (the request wins per
    media type, bidder and deal ID). Neither argument is modified; the result is not validated."""
    if request is None:
        return account
    if account is None:
        return request
    if not isinstance(account, dict) or not isinstance(request, dict):
        return account if not isinstance(account, dict) else request
    request_types = request.get("mediatype") or {}
    account_types = account.get("mediatype") or {}
    if not isinstance(account_types, dict) or not isinstance(request_types, dict):
        return {"mediatype": account_types if not isinstance(account_types, dict) else request_types}
    merged = {}
    for media_type in RULE_MEDIA_TYPES:
        value = _merge_media_type(request_types.get(media_type), account_types.get(media_type))
        if value is not None:
            merged[media_type] = value
    return {"mediatype": merged}


def _build_rules(valid: Mapping[str, Any] | None) -> dict[RuleKey, tuple[Adjustment, ...]]:
    """PBS-Go ``BuildRules`` for validated adjustments (keys are tuples, so a ``|`` in a bidder or
    deal ID cannot collide as PBS-Go's joined strings can)."""
    rules: dict[RuleKey, tuple[Adjustment, ...]] = {}
    by_type = (valid or {}).get("mediatype") or {}
    for media_type in RULE_MEDIA_TYPES:
        for bidder, by_deal in (by_type.get(media_type) or {}).items():
            for deal, adjustments in by_deal.items():
                rules[(media_type, bidder, deal)] = tuple(
                    Adjustment(
                        (a or {}).get("adjtype") or "",
                        float((a or {}).get("value") or 0.0),
                        (a or {}).get("currency") or "",
                    )
                    for a in adjustments
                )
    return rules


# Compiled account-only rules by the account's dict (kept alive by the cache so its id stays unique).
_account_cache: dict[int, tuple[Any, dict[RuleKey, tuple[Adjustment, ...]], bool]] = {}


def _account_rules(account: Any) -> tuple[dict[RuleKey, tuple[Adjustment, ...]], bool]:
    """The account's rules alone (the request has none) and whether they are valid; memoised per
    account object, which the account store keeps for as long as its settings do not change."""
    cached = _account_cache.get(id(account))
    if cached is not None and cached[0] is account:
        return cached[1], cached[2]
    valid = validate_bid_adjustments(account) is None
    rules = _build_rules(account) if valid else {}
    if len(_account_cache) >= _ACCOUNT_CACHE_SIZE:
        _account_cache.pop(next(iter(_account_cache)))
    _account_cache[id(account)] = (account, rules, valid)
    return rules, valid


# --- applying (PBS-Go Apply) -------------------------------------------------------------------------


def _go_round(value: float) -> float:
    """Go ``math.Round``: half away from zero, exact (no ``x + 0.5`` double rounding)."""
    if not math.isfinite(value):
        return value
    whole = math.trunc(value)
    if abs(value - whole) >= 0.5:
        whole += 1 if value > 0 else -1
    return float(whole)


def _lookup(
    rules: Mapping[RuleKey, tuple[Adjustment, ...]], media_type: str, bidder: str, deal_id: str
) -> tuple[Adjustment, ...] | None:
    """PBS-Go ``get``: the most specific rule matching the bid, or None."""
    w = WILDCARD
    if deal_id:
        keys: tuple[RuleKey, ...] = (
            (media_type, bidder, deal_id),
            (media_type, bidder, w),
            (media_type, w, deal_id),
            (w, bidder, deal_id),
            (media_type, w, w),
            (w, bidder, w),
            (w, w, deal_id),
            (w, w, w),
        )
    else:
        keys = ((media_type, bidder, w), (media_type, w, w), (w, bidder, w), (w, w, w))
    for key in keys:
        found = rules.get(key)
        if found is not None:
            return found
    return None


def _apply(
    adjustments: tuple[Adjustment, ...] | None, price: float, currency: str, convert: Convert
) -> tuple[float, str]:
    """PBS-Go ``apply``: the adjustments in order; cpm amounts converted into the current currency
    (on a conversion error: the price as it came in, with the currency as it then was)."""
    if not adjustments:
        return price, currency
    original = price
    for kind, value, adjustment_currency in adjustments:
        if kind == ADJ_MULTIPLIER:
            price = price * value
        elif kind == ADJ_CPM:
            try:
                converted = convert(value, adjustment_currency, currency)
            except ConversionError:
                return original, currency
            price = price - converted
        elif kind == ADJ_STATIC:
            price = value
            currency = adjustment_currency
    return _go_round(price * _PRICE_PRECISION) / _PRICE_PRECISION, currency


def adjustment_type(bid_type: str, imp: Mapping[str, Any] | None) -> str:
    """PBS-Go ``getBidTypeForAdjustments``: a video bid is "video-outstream" when its imp's
    ``video.plcmt`` is 4 (accompanying content), else "video-instream"; other types unchanged."""
    if bid_type != "video":
        return bid_type
    video = imp.get("video") if isinstance(imp, Mapping) else None
    if isinstance(video, Mapping) and video.get("plcmt") == _PLCMT_ACCOMPANYING_CONTENT:
        return VIDEO_OUTSTREAM
    return VIDEO_INSTREAM


def _positive(value: Any) -> bool:
    return _number(value) and 0 < value < math.inf


class BidAdjustments:
    """One auction's bid adjustment factors and rules; made by :meth:`from_request`.

    Per bid, in PBS-Go's order (``exchange/bidder.go``): ``price = original * factor * rate``
    (the bidder's currency into the auction's), then the rules — :meth:`adjust` does both.
    """

    __slots__ = ("_factors", "_media_factors", "_outstream", "_rules")

    def __init__(
        self,
        factors: dict[str, float],
        media_factors: dict[str, dict[str, float]],
        rules: dict[RuleKey, tuple[Adjustment, ...]],
        outstream: frozenset[str] = frozenset(),
    ) -> None:
        self._factors = factors  # lower-cased bidder -> factor
        self._media_factors = media_factors  # factor media type -> lower-cased bidder -> factor
        self._rules = rules
        self._outstream = outstream  # ids of the imps whose video bids are "video-outstream"

    @classmethod
    def from_request(
        cls,
        prebid: Mapping[str, Any],
        account_rules: Any,
        imps: Iterable[Mapping[str, Any]] = (),
    ) -> tuple[BidAdjustments | None, list[tuple[str, Message]]]:
        """The adjustments of a request (``ext.prebid``) with the account's ``bidadjustments``.

        None when nothing adjusts (checked first, so the usual request costs three lookups).
        The list: ``(key, warning)`` pairs for the response's ``ext.warnings`` — key "general" for
        "bid adjustment from request was invalid" (PBS-Go's endpoint drops the request's rules),
        "prebid" for "bid adjustment on account was invalid" (the merged rules are invalid: PBS-Go
        then drops all rules, the request's too). ``imps`` are the request's imps (for
        video-instream vs video-outstream).
        """
        raw_factors = prebid.get("bidadjustmentfactors")
        raw_rules = prebid.get("bidadjustments")
        if not raw_factors and raw_rules is None and account_rules is None:
            return None, []
        warnings: list[tuple[str, Message]] = []
        factors, media_factors = _parse_factors(raw_factors)

        if raw_rules is not None and validate_bid_adjustments(raw_rules) is not None:
            warnings.append(("general", Message(BID_ADJUSTMENT_WARNING_CODE, REQUEST_INVALID)))
            raw_rules = None
        if raw_rules is None:
            if account_rules is None:
                rules: dict[RuleKey, tuple[Adjustment, ...]] = {}
            else:
                rules, valid = _account_rules(account_rules)
                if not valid:
                    warnings.append(("prebid", Message(BID_ADJUSTMENT_WARNING_CODE, ACCOUNT_INVALID)))
        else:
            merged = merge_bid_adjustments(raw_rules, account_rules)
            if validate_bid_adjustments(merged) is None:
                rules = _build_rules(merged)
            else:
                warnings.append(("prebid", Message(BID_ADJUSTMENT_WARNING_CODE, ACCOUNT_INVALID)))
                rules = {}

        if not factors and not media_factors and not rules:
            return None, warnings
        outstream: frozenset[str] = frozenset()
        if rules or media_factors:
            outstream = frozenset(
                imp.get("id")
                for imp in imps
                if isinstance(imp, Mapping) and adjustment_type("video", imp) == VIDEO_OUTSTREAM
            )
        return cls(factors, media_factors, rules, outstream), warnings

    @property
    def has_rules(self) -> bool:
        """Whether any ``bidadjustments`` rule applies (else :meth:`apply` changes nothing)."""
        return bool(self._rules)

    def adjustment_type(self, bid_type: str, imp_id: str) -> str:
        """:func:`adjustment_type` for a bid on the imp ``imp_id`` of this request."""
        if bid_type != "video":
            return bid_type
        return VIDEO_OUTSTREAM if imp_id in self._outstream else VIDEO_INSTREAM

    def factor(self, bidder: str, seat: str = "", adjust_type: str = "") -> float:
        """The ``bidadjustmentfactors`` factor of a bid; 1.0 when none applies.

        ``bidder`` is the name as spelled in the request (an alias stays an alias), ``seat`` an
        alternate bidder code ("" = the bidder's own), ``adjust_type`` the bid's
        :func:`adjustment_type`. Names compare case-insensitively. Order: the seat's
        ``mediatypes`` factor, the seat's factor, the bidder's ``mediatypes`` factor, the bidder's
        factor (PBS-Java; PBS-Go has no ``mediatypes`` and checks only the seat, then the bidder).
        The core adapter code is not consulted, as in PBS-Go.
        """
        factors = self._factors
        by_type = None
        if self._media_factors:
            by_type = self._media_factors.get(_FACTOR_KEY.get(adjust_type, adjust_type))
        name = (seat or bidder).lower()
        if by_type is not None and name in by_type:
            return by_type[name]
        if name in factors:
            return factors[name]
        if seat and seat.lower() != bidder.lower():
            name = bidder.lower()
            if by_type is not None and name in by_type:
                return by_type[name]
            if name in factors:
                return factors[name]
        return 1.0

    def floor_factor(self, bidder: str) -> float:
        """PBS-Go ``applyBidAdjustmentToFloor``'s factor (the floor is divided by it when
        ``price_floors.adjust_for_bid_adjustment``): the request name looked up as given in the
        lower-cased factors (so a name with capitals finds none), no ``mediatypes``, no rules."""
        return self._factors.get(bidder) or 1.0

    def apply(
        self, price: float, currency: str, bidder: str, adjust_type: str, deal_id: Any, convert: Convert
    ) -> tuple[float, str]:
        """PBS-Go ``Apply``: the rules on a price already multiplied by the factor and converted into
        ``currency``; returns (price, currency) — the currency of a static adjustment when one applied.

        ``bidder`` is the name as spelled in the request (never the seat), matched exactly.
        ``convert(amount, from, to)`` converts cpm amounts; on ConversionError the rule is skipped.
        With any rule in the auction, a bid without a deal never ends at or below 0 (it gets 0.1)
        and one with a deal never below 0, whether or not a rule matched it.
        """
        rules = self._rules
        if not rules:
            return price, currency
        deal = deal_id if isinstance(deal_id, str) else ""
        adjusted, adjusted_currency = _apply(_lookup(rules, adjust_type, bidder, deal), price, currency, convert)
        if deal:
            if adjusted < 0:
                return 0.0, currency
        elif adjusted <= 0:
            return MIN_BID, currency
        return adjusted, adjusted_currency

    def adjust(
        self,
        original: float,
        rate: float,
        currency: str,
        bidder: str,
        seat: str,
        bid_type: str,
        imp_id: str,
        deal_id: Any,
        convert: Convert,
    ) -> tuple[float, str]:
        """Everything PBS-Go's ``requestBid`` does to one bid's price, in its order:
        ``original * factor * rate`` (``rate``: bid currency -> ``currency``), then :meth:`apply`."""
        adjust_type = self.adjustment_type(bid_type, imp_id)
        price = original * self.factor(bidder, seat, adjust_type) * rate
        return self.apply(price, currency, bidder, adjust_type, deal_id, convert)


def _parse_factors(raw: Any) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """PBS-Go ``getExtBidAdjustmentFactors`` (lower-cased names) plus PBS-Java's ``mediatypes``;
    anything that is not a positive number is left out (request validation refuses it)."""
    factors: dict[str, float] = {}
    media_factors: dict[str, dict[str, float]] = {}
    if not isinstance(raw, dict):
        return factors, media_factors
    for name, value in raw.items():
        if name == "mediatypes":
            if isinstance(value, dict):
                for media_type, by_bidder in value.items():
                    if media_type in FACTOR_MEDIA_TYPES and isinstance(by_bidder, dict):
                        table = media_factors.setdefault(media_type, {})
                        for bidder, factor in by_bidder.items():
                            if _positive(factor):
                                table.setdefault(str(bidder).lower(), float(factor))
            continue
        if _positive(value):
            factors[str(name).lower()] = float(value)
    return factors, {k: v for k, v in media_factors.items() if v}


# --- request-time validation (PBS-Go validateBidAdjustmentFactors) -----------------------------------

_FACTORS_PATH = "request.ext.prebid.bidadjustmentfactors"


def _shown(value: Any) -> str:
    return f"{value:f}" if _number(value) else repr(value)


def validate_adjustment_factors(factors: Any, lookup: BidderLookup, aliases: Mapping[str, str]) -> str | None:
    """The 400 text for a bad ``ext.prebid.bidadjustmentfactors`` (without the "Invalid request: "
    prefix), or None.

    ``lookup`` is ``Registry.lookup`` (an object with ``code`` and ``disabled``, or None);
    ``aliases`` is ``ext.prebid.aliases``. PBS-Go, per bidder: a positive number ("Got %f"), then
    no two names of one core bidder differing only in case, then an enabled core bidder (any case)
    or a request alias (exact). Then PBS-Java's ``mediatypes``: a known media type, then per
    bidder a known bidder or alias, then a positive number.
    """
    if factors is None:
        return None
    if not isinstance(factors, dict):
        return f"{_FACTORS_PATH} must be an object"

    def known(name: str, bidder: Any) -> bool:
        return (bidder is not None and not getattr(bidder, "disabled", False)) or name in aliases

    seen: set[str] = set()
    for name, factor in factors.items():
        if name == "mediatypes":
            continue
        if not _number(factor) or not 0 < factor < math.inf:
            return f"{_FACTORS_PATH}.{name} must be a positive number. Got {_shown(factor)}"
        bidder = lookup(name)
        normalized = getattr(bidder, "code", name) if bidder is not None else name
        if normalized in seen:
            return "cannot have multiple bidders that differ only in case style"
        seen.add(normalized)
        if not known(name, bidder):
            return f"{_FACTORS_PATH}.{name} is not a known bidder or alias"

    by_type = factors.get("mediatypes")
    if by_type is None:
        return None
    if not isinstance(by_type, dict):
        return f"{_FACTORS_PATH}.mediatypes must be an object"
    for media_type, by_bidder in by_type.items():
        if media_type not in FACTOR_MEDIA_TYPES:
            return f"{_FACTORS_PATH}.mediatypes.{media_type} is not a known media type"
        if by_bidder is None:
            continue
        if not isinstance(by_bidder, dict):
            return f"{_FACTORS_PATH}.mediatypes.{media_type} must be an object"
        for name, factor in by_bidder.items():
            if not known(name, lookup(name)):
                return f"{_FACTORS_PATH}.{media_type}.{name} is not a known bidder or alias"
            if not _number(factor) or not 0 < factor < math.inf:
                return f"{_FACTORS_PATH}.{media_type}.{name} must be a positive number. Got {_shown(factor)}"
    return None
