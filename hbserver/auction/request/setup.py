"""An auction's set-up: what it works out from its request and account before any bidder is called.

Multibid, alternate bidder codes, seat-non-bid, targeting and cache options, debug, the currency and
its converter, bid adjustments, floors on or off, and the warnings these and validation give. The full
path computes it per auction (:func:`auction_setup`); a call plan keeps its first run's
(:mod:`hbserver.auction.exchange.callplan`): a plan is kept per account and currency-rates object, and nothing
read here holds a per-auction value (the plan's placeholders are in ``device``, ``user``, ``source``,
the ids and ``tmax``), so a planned auction reuses it as is.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from hbserver.auction.bids.altcodes import AlternateBidderCodes
from hbserver.auction.bids.bidadjust import BidAdjustments
from hbserver.auction.bids.currency import Converter, build_rates
from hbserver.auction.bids.multibid import MultiBid, parse_multibid
from hbserver.auction.common.messages import Message, WarningCode
from hbserver.auction.request.account_targeting import AccountTargeting, account_targeting
from hbserver.auction.request.validate import Validated
from hbserver.auction.response.cache_options import CacheOptions
from hbserver.auction.response.targeting import TargetingOptions
from hbserver.floors.resolve import request_has_floors
from hbserver.stores.accounts import Account

# AMP targeting also says how to render (the specification's sample response)
AMP_TARGETING_VALUES = {"creative_loadtype": "html"}


@dataclass(slots=True)
class AuctionSetup:
    """Read-only: a plan's auctions share one (not ``frozen``: a frozen dataclass's ``__init__`` sets each
    field through ``object.__setattr__``, some 2 µs for these on every auction of the full path)."""

    prebid: dict[str, Any]  # ext.prebid ({} when absent)
    multibid: MultiBid
    alt_codes: AlternateBidderCodes
    return_all: bool  # ext.prebid.returnallbidstatus
    targeting_conf: dict[str, Any] | None  # ext.prebid.targeting when an object
    targeting: TargetingOptions | None  # its options, for this request type
    cache_options: CacheOptions
    caching: bool  # targeting asked for and something to cache
    debug_requested: bool
    debug: bool  # requested and allowed by the account
    currency: str  # the auction's (cur[0])
    converter: Converter
    adjustments: BidAdjustments | None
    imp_ids: frozenset[str]
    floors_on: bool
    # the warnings before any bidder is called, by key in the response's order
    warnings: tuple[tuple[str, tuple[Message, ...]], ...]
    # the account's targeting and integration keys (None: it sets none)
    account_targeting: AccountTargeting | None = None

    def new_warnings(self) -> dict[str, list[Message]]:
        """This auction's own warnings, starting from the set-up's."""
        return {key: list(items) for key, items in self.warnings}


def auction_setup(
    request: dict[str, Any],
    validated: Validated,
    account: Account,
    request_type: str,
    known_bidders: Collection[str],
    server_rates: Any,
    floors_enabled: bool,
    debug_override: bool = False,
) -> AuctionSetup:
    """The set-up of ``request`` (stored data merged, validated); raises RequestError for a bad multibid
    or alternate bidder codes. ``floors_enabled``: the host's ``price_floors.enabled``;
    ``debug_override``: the request carried the host's debug override token (debug whatever the
    request and account say, as PBS-Java's DebugResolver)."""
    prebid = (request.get("ext") or {}).get("prebid") or {}
    settings = account.settings
    multibid, multibid_warnings = parse_multibid(prebid, known_bidders, settings.default_bid_limit)
    alt_codes = AlternateBidderCodes.from_sources(prebid, settings.alternatebiddercodes)
    targeting_conf = prebid.get("targeting")
    targeting_conf = targeting_conf if isinstance(targeting_conf, dict) else None
    account_keys = account_targeting(settings)
    targeting = _targeting(targeting_conf, request, request_type, account_keys)
    cache_options = CacheOptions.from_request(prebid.get("cache") or {})
    debug_requested = request.get("test") == 1 or prebid.get("debug") is True
    debug = debug_override or (debug_requested and settings.debug_allow)
    currency_conf = prebid.get("currency") if isinstance(prebid.get("currency"), dict) else {}
    converter = build_rates(currency_conf.get("rates"), currency_conf.get("usepbsrates"), server_rates)
    adjustments, adjustment_warnings = BidAdjustments.from_request(prebid, settings.bidadjustments, request["imp"])
    floors_on = floors_enabled and (settings.price_floors.enabled or request_has_floors(request))

    warnings = _setup_warnings(validated, debug_requested and not debug, multibid_warnings, targeting,
                               adjustment_warnings)  # fmt: skip
    return AuctionSetup(
        prebid=prebid,
        multibid=multibid,
        alt_codes=alt_codes,
        return_all=prebid.get("returnallbidstatus") is True,
        targeting_conf=targeting_conf,
        targeting=targeting,
        cache_options=cache_options,
        # PBS-Java's account auction.cache.enabled: false caches nothing, whatever the request asks
        caching=targeting_conf is not None and cache_options.any and settings.auction.cache.enabled,
        debug_requested=debug_requested,
        debug=debug,
        currency=(request.get("cur") or ["USD"])[0],
        converter=converter,
        adjustments=adjustments,
        imp_ids=frozenset(imp["id"] for imp in request["imp"]),
        floors_on=floors_on,
        warnings=warnings,
        account_targeting=account_keys,
    )


def _setup_warnings(
    validated: Validated,
    debug_refused: bool,
    multibid_warnings: list[str],
    targeting: TargetingOptions | None,
    adjustment_warnings: list[tuple[str, Message]],
) -> tuple[tuple[str, tuple[Message, ...]], ...]:
    """The set-up's warnings by bidder (``general`` first): validation's, debug refused by the account,
    multibid's, targeting's and the bid adjustments'."""
    warnings: dict[str, list[Message]] = {"general": list(validated.warnings)}
    for name, items in validated.bidder_warnings.items():
        warnings.setdefault(name, []).extend(items)
    general = warnings["general"]
    if debug_refused:
        general.append(Message(WarningCode.ACCOUNT_DEBUG_DISABLED, "debug turned off for account"))
    general.extend(Message(WarningCode.MULTIBID, text) for text in multibid_warnings)
    if targeting is not None and targeting.warnings:
        general.extend(targeting.warnings)
    for key, message in adjustment_warnings:
        warnings.setdefault(key, []).append(message)
    return tuple((key, tuple(items)) for key, items in warnings.items())


def _targeting(
    conf: dict[str, Any] | None, request: dict[str, Any], request_type: str, account_keys: AccountTargeting | None
) -> TargetingOptions | None:
    """The request's targeting options (None: it asks for none), with the account's targeting keys."""
    if conf is None:
        return None
    if request_type == "amp":
        return TargetingOptions.from_request(conf, "amp", AMP_TARGETING_VALUES, account_keys)
    return TargetingOptions.from_request(conf, "mobile-app" if "app" in request else "", None, account_keys)
