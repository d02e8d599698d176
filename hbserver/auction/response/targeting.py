"""Winners and ad-server targeting (reference §3.7, §3.10, §1.9).

Per imp the winner is the highest price (strict ``>``, first seen wins a tie; with
``preferdeals`` any deal beats any non-deal). Per imp and bidder only the top bid gets bidder
keys (``hb_pb_<bidder>``...); the imp winner also gets the plain keys. Every key is cut to 20
characters (the account's ``truncate_target_attr`` when above 0; the prefix and the other account
keys: :mod:`hbserver.auction.request.account_targeting`). ``hb_cache_id`` and ``hb_uuid`` are
added once bids are cached; ``hb_cache_host`` and ``hb_cache_path`` go on every targeted bid,
cached or not, as PBS-Go's ``setTargeting`` writes them whenever a cache host is known (PBS-Java
only on cached bids).

Multibid (:mod:`hbserver.auction.bids.multibid`) follows PBS-Go's ``exchange/auction.go``
(``validateAndUpdateMultiBid``: each bidder's bids per imp ranked as the winner is chosen, those
past the account's ``default_bid_limit`` dropped from the response) and ``exchange/targeting.go``
(``setTargeting``: a bidder's bids after the first get targeting only up to its ``maxbids`` and
only with a ``targetbiddercodeprefix``, under the code ``<prefix><n>`` (n = 2, 3...) in both key
and ``hb_bidder`` value; with ``maxbids`` above 1 each bid given targeting also carries
``ext.prebid.targetbiddercode``: the bidder's name for the first, the code for the others).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from hbserver.auction.bids.accept import AuctionBid
from hbserver.auction.common.messages import Message
from hbserver.auction.response.category import BrandCategory, Buckets
from hbserver.auction.response.pricegranularity import (
    PriceGranularity,
    parse_granularity,
    parse_media_type_granularity,
    price_bucket,
)

if TYPE_CHECKING:
    from hbserver.auction.bids.multibid import MultiBid
    from hbserver.auction.request.account_targeting import AccountTargeting

MAX_KEY_LENGTH = 20
MIN_KEY_LENGTH = 12  # PBS-Go's MinKeyLength: the longest key name without its prefix
DEFAULT_PREFIX = "hb"
# PBS-Go's TooLongTargetingPrefixWarningCode and TooShortTargetingPrefixWarningCode (getTargetDataPrefix)
PREFIX_TOO_LONG = Message(
    10015,
    "targeting prefix combined with key attribute is longer than 'settings.targeting.truncate-attr-chars' "
    "value: decrease prefix length or increase truncate-attr-chars",
)
PREFIX_TOO_SHORT = Message(10016, "targeting prefix is shorter than 'MinKeyLength' value: increase prefix length")
MAX_SHARED_OPTIONS = 256  # distinct ext.prebid.targeting settings whose parsed options are kept


@dataclass(slots=True)
class TargetingOptions:
    granularity: PriceGranularity
    media_granularity: dict[str, PriceGranularity] = field(default_factory=dict)
    include_winners: bool = True
    include_bidder_keys: bool = True
    include_format: bool = False
    prefer_deals: bool = False
    always_include_deals: bool = False
    prefix: str = DEFAULT_PREFIX
    env: str = ""  # hb_env value: "amp", "mobile-app" or "" (none)
    extra: dict[str, str] = field(default_factory=dict)  # more keys with fixed values (AMP's creative_loadtype)
    rounding: str = "down"  # the account's bid_rounding
    max_key_length: int = MAX_KEY_LENGTH  # the account's truncate_target_attr when above 0
    warnings: tuple[Message, ...] = ()  # the prefix's (PBS-Go getTargetDataPrefix), for ext.warnings.general
    brand_category: BrandCategory | None = None  # includebrandcategory (hbserver.auction.response.category)
    category_buckets: Buckets | None = None  # the price buckets hb_pb_cat_dur starts with, with brand_category
    top_n: int = 0  # includetopn (hbserver's): each imp's N best bids ranked (hbserver.auction.response.pod_targeting)

    @classmethod
    def from_request(
        cls,
        targeting: dict[str, Any],
        env: str,
        extra: dict[str, str] | None = None,
        account: AccountTargeting | None = None,
    ) -> TargetingOptions:
        """From ``ext.prebid.targeting`` (already validated) and the account's targeting keys
        (:mod:`hbserver.auction.request.account_targeting`); shared by requests asking the same.

        The result is read-only: auctions with equal settings get the same instance.
        """
        try:
            key = (
                orjson.dumps(targeting), env, tuple(extra.items()) if extra else (),
                account.cache_key() if account is not None else (),
            )  # fmt: skip
        except TypeError:  # not JSON (no request body gives this): no sharing
            return cls._build(targeting, env, extra, account)
        options = _OPTIONS.get(key)
        if options is None:
            options = cls._build(targeting, env, extra, account)
            if len(_OPTIONS) >= MAX_SHARED_OPTIONS:
                _OPTIONS.pop(next(iter(_OPTIONS)))
            _OPTIONS[key] = options
        return options

    @classmethod
    def _build(
        cls,
        targeting: dict[str, Any],
        env: str,
        extra: dict[str, str] | None,
        account: AccountTargeting | None = None,
    ) -> TargetingOptions:
        truncate = None
        if account is not None:
            targeting = account.fill(targeting)
            truncate = account.truncate
        prefix, warning = _prefix(targeting.get("prefix"), account)
        granularity = parse_granularity(targeting.get("pricegranularity", "medium"))
        media_granularity = parse_media_type_granularity(targeting.get("mediatypepricegranularity") or {})
        rounding = account.rounding if account is not None else "down"
        brand_category = BrandCategory.from_targeting(targeting)
        top_n, top_n_warning = _top_n(targeting.get("includetopn"))
        return cls(
            granularity=granularity,
            media_granularity=media_granularity,
            include_winners=targeting.get("includewinners", True),
            include_bidder_keys=targeting.get("includebidderkeys", True),
            include_format=targeting.get("includeformat", False),
            prefer_deals=targeting.get("preferdeals", False),
            always_include_deals=targeting.get("alwaysincludedeals", False),
            prefix=prefix,
            env=env,
            extra=dict(extra or {}),
            rounding=rounding,
            max_key_length=truncate if truncate is not None and truncate > 0 else MAX_KEY_LENGTH,
            warnings=tuple(w for w in (warning, top_n_warning) if w is not None),
            brand_category=brand_category,
            top_n=top_n,
            category_buckets=Buckets(granularity, media_granularity, rounding) if brand_category else None,
        )


MAX_TOP_N = 10
TOP_N_IGNORED = Message(10999, f"ext.prebid.targeting.includetopn must be an integer from 1 to {MAX_TOP_N}: ignored")


def _top_n(value: Any) -> tuple[int, Message | None]:
    """``includetopn`` (hbserver's own option): absent or null is off; anything but 1..10 is off with a warning."""
    if value is None:
        return 0, None
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_TOP_N:
        return value, None
    return 0, TOP_N_IGNORED


_OPTIONS: dict[tuple[bytes, str, tuple[tuple[str, str], ...], tuple[Any, ...]], TargetingOptions] = {}


def _prefix(requested: Any, account: AccountTargeting | None) -> tuple[str, Message | None]:
    """PBS-Go ``getTargetDataPrefix``: the request's prefix, else the account's, else ``hb``; ``hb``
    with a warning when the account's ``truncate_target_attr`` is under 12 or the prefix does not fit
    the key length less 12."""
    truncate = account.truncate if account is not None else None
    max_length = MAX_KEY_LENGTH
    if truncate is not None:
        if truncate < MIN_KEY_LENGTH:
            return DEFAULT_PREFIX, PREFIX_TOO_SHORT
        if truncate > MIN_KEY_LENGTH:  # 12 itself leaves 20, as in PBS-Go
            max_length = truncate
    prefix = requested if isinstance(requested, str) and requested else ""
    prefix = prefix or (account.prefix if account is not None else "") or DEFAULT_PREFIX
    if len(prefix) > max_length - MIN_KEY_LENGTH:
        return DEFAULT_PREFIX, PREFIX_TOO_LONG
    return prefix, None


def _better(a: AuctionBid, b: AuctionBid, prefer_deals: bool) -> bool:
    """Does ``a`` beat ``b``?"""
    if prefer_deals and a.deal != b.deal:
        return a.deal
    return a.price > b.price


@dataclass(slots=True)
class ImpResult:
    winner: AuctionBid | None = None
    top_by_bidder: dict[str, AuctionBid] = field(default_factory=dict)
    ranked: dict[str, list[AuctionBid]] | None = None  # multibid only: each bidder's bids, best first


class AuctionResults(dict[str, ImpResult]):
    """Per imp id: its :class:`ImpResult`. ``dropped``: the bids over the account's per-bidder limit,
    which leave the response (PBS-Go); ``multibid``: what :func:`apply_targeting` follows."""

    __slots__ = ("dropped", "multibid")

    def __init__(self, multibid: MultiBid | None = None) -> None:
        super().__init__()
        self.dropped: list[AuctionBid] = []
        self.multibid = multibid

    def kept(self, bids: list[AuctionBid]) -> list[AuctionBid]:
        """``bids`` without the dropped ones (the same list when none were)."""
        if not self.dropped:
            return bids
        dropped = {id(bid) for bid in self.dropped}
        return [bid for bid in bids if id(bid) not in dropped]


def run_auction(bids: list[AuctionBid], prefer_deals: bool, multibid: MultiBid | None = None) -> AuctionResults:
    """Per imp id: the winner and each bidder's top bid.

    With an active ``multibid`` (PBS-Go gives it only to auctions with targeting) each bidder's
    bids per imp are also ranked (a stable sort: equal bids keep their order) and those past
    ``multibid.bid_limit`` are dropped: ``results.dropped``, for the caller to take out of the response.
    """
    if multibid is not None and multibid.active:
        return _ranked_auction(bids, prefer_deals, multibid)
    results = AuctionResults()
    for bid in bids:
        result = results.get(bid.imp_id)
        if result is None:
            result = results[bid.imp_id] = ImpResult()
        top = result.top_by_bidder.get(bid.bidder)
        if top is None or _better(bid, top, prefer_deals):
            result.top_by_bidder[bid.bidder] = bid
        if result.winner is None or _better(bid, result.winner, prefer_deals):
            result.winner = bid
    return results


def _ranked_auction(bids: list[AuctionBid], prefer_deals: bool, multibid: MultiBid) -> AuctionResults:
    results = AuctionResults(multibid)
    by_imp: dict[str, dict[str, list[AuctionBid]]] = {}
    for bid in bids:
        result = results.get(bid.imp_id)
        if result is None:
            ranked: dict[str, list[AuctionBid]] = {}
            result = results[bid.imp_id] = ImpResult(ranked=ranked)
            by_imp[bid.imp_id] = ranked
        else:
            ranked = by_imp[bid.imp_id]
        own = ranked.get(bid.bidder)
        if own is None:
            ranked[bid.bidder] = [bid]
        else:
            own.append(bid)
        if result.winner is None or _better(bid, result.winner, prefer_deals):
            result.winner = bid
    limit = multibid.bid_limit
    key = _deal_then_price if prefer_deals else _price
    for imp_id, ranked in by_imp.items():
        top = results[imp_id].top_by_bidder
        for bidder, own in ranked.items():
            if len(own) > 1:
                own.sort(key=key, reverse=True)  # stable, also reversed: the first seen of equals first
                if limit and len(own) > limit:
                    results.dropped.extend(own[limit:])
                    del own[limit:]
            top[bidder] = own[0]
    return results


def _price(bid: AuctionBid) -> float:
    return bid.price


def _deal_then_price(bid: AuctionBid) -> tuple[bool, float]:
    return bid.deal, bid.price


def bids_to_cache(
    results: dict[str, ImpResult], options: TargetingOptions, all_bids: list[AuctionBid]
) -> list[AuctionBid]:
    """With bidder keys every bid is cached (PBS), else only the winners; never a dropped bid."""
    if options.include_bidder_keys:
        return results.kept(all_bids) if isinstance(results, AuctionResults) else all_bids
    return [r.winner for r in results.values() if r.winner is not None]


# Every value name targeting can carry (AMP's extra names are looked up as they come).
_NAMES = (
    "pb", "bidder", "size", "deal", "cache_id", "uuid", "cache_host", "cache_path", "env", "format", "pb_cat_dur",
)  # fmt: skip


@functools.lru_cache(maxsize=4096)
def _key_table(prefix: str, bidder: str, length: int = MAX_KEY_LENGTH) -> dict[str, tuple[str, str]]:
    """Per value name: the winner key and the bidder key, cut to ``length`` characters (the same every auction)."""
    return {name: _key_pair(prefix, name, bidder, length) for name in _NAMES}


def _key_pair(prefix: str, name: str, bidder: str, length: int = MAX_KEY_LENGTH) -> tuple[str, str]:
    return f"{prefix}_{name}"[:length], f"{prefix}_{name}_{bidder}"[:length]


def apply_targeting(
    results: dict[str, ImpResult],
    options: TargetingOptions,
    cache_host: str,
    cache_path: str,
    rounding: str | None = None,
    rand: Callable[[], float] | None = None,
    cat_dur: Mapping[str, str] | None = None,
) -> None:
    """Write ``targeting`` on each imp winner and each bidder's top bid (after caching); with the
    multibid ``run_auction`` was given, also on the extra bids it allows (see the module text).
    ``rounding``: the price buckets' (None: the options', the account's ``bid_rounding``); ``cat_dur``:
    the category rules' ``hb_pb_cat_dur`` values by bid id (PBS-Go: the key on every targeted bid when
    any bid has one)."""
    if rounding is None:
        rounding = options.rounding
    multibid = results.multibid if isinstance(results, AuctionResults) else None
    for result in results.values():
        winner = result.winner
        if result.ranked is not None and multibid is not None:
            _multibid_targeting(result.ranked, winner, multibid, options, cache_host, cache_path, rounding, rand,
                                cat_dur)  # fmt: skip
            continue
        for bidder, bid in result.top_by_bidder.items():
            _target(bid, bidder, bid is winner, options, cache_host, cache_path, rounding, rand, cat_dur)


def target_bid(
    bid: AuctionBid,
    code: str,
    is_winner: bool,
    options: TargetingOptions,
    cache_host: str,
    cache_path: str,
    cat_dur: Mapping[str, str] | None = None,
) -> None:
    """One bid's keys as :func:`apply_targeting` writes them (used for pod slots, whose winners are
    the pod's fill: :mod:`hbserver.auction.response.pod_targeting`)."""
    _target(bid, code, is_winner, options, cache_host, cache_path, options.rounding, None, cat_dur)


def targeting_values(
    bid: AuctionBid, code: str, options: TargetingOptions, cache_host: str, cache_path: str,
    cat_dur: Mapping[str, str] | None = None,
) -> dict[str, str]:  # fmt: skip
    """Value name (``pb``, ``bidder``, ``cache_id``...) -> value, as the bid's keys carry them."""
    values = _values(bid, code, options, cache_host, cache_path, options.rounding, None)
    if cat_dur:
        own_id = bid.bid.get("id")
        values["pb_cat_dur"] = cat_dur.get(own_id, "") if isinstance(own_id, str) else ""
    return values


def _multibid_targeting(
    ranked: dict[str, list[AuctionBid]],
    winner: AuctionBid | None,
    multibid: MultiBid,
    options: TargetingOptions,
    cache_host: str,
    cache_path: str,
    rounding: str,
    rand: Callable[[], float] | None,
    cat_dur: Mapping[str, str] | None = None,
) -> None:
    """PBS-Go's ``setTargeting`` loop over a bidder's ranked bids."""
    if not (options.include_winners or options.include_bidder_keys or options.include_format):
        return  # PBS-Go does not call setTargeting at all
    for bidder, bids in ranked.items():
        max_bids = multibid.max_bids(bidder)
        code_prefix = multibid.prefix(bidder)
        for index, bid in enumerate(bids):
            if index == max_bids or (index == 1 and not code_prefix):
                break
            code = bidder if index == 0 else f"{code_prefix}{index + 1}"
            if max_bids > 1:
                _set_target_bidder_code(bid, code)
            _target(bid, code, bid is winner, options, cache_host, cache_path, rounding, rand, cat_dur)


def _set_target_bidder_code(bid: AuctionBid, code: str) -> None:
    """``ext.prebid.targetbiddercode`` in the bid's own copy (the response keeps the bid's ext.prebid)."""
    own = bid.bid
    ext = own.get("ext")
    ext = dict(ext) if isinstance(ext, dict) else {}
    prebid = ext.get("prebid")
    ext["prebid"] = {**prebid, "targetbiddercode": code} if isinstance(prebid, dict) else {"targetbiddercode": code}
    own["ext"] = ext


def _target(
    bid: AuctionBid,
    code: str,
    is_winner: bool,
    options: TargetingOptions,
    cache_host: str,
    cache_path: str,
    rounding: str,
    rand: Callable[[], float] | None,
    cat_dur: Mapping[str, str] | None = None,
) -> None:
    """One bid's keys: bidder keys under ``code``, and the plain keys for the imp winner."""
    bidder_keys = options.include_bidder_keys or (options.always_include_deals and bid.deal)
    winner_keys = options.include_winners and is_winner
    if not bidder_keys and not winner_keys:
        return
    prefix, length = options.prefix, options.max_key_length
    values = _values(bid, code, options, cache_host, cache_path, rounding, rand)
    if cat_dur:
        own_id = bid.bid.get("id")
        values["pb_cat_dur"] = cat_dur.get(own_id, "") if isinstance(own_id, str) else ""
    table = _key_table(prefix, code, length)
    targeting: dict[str, str] = {}
    if winner_keys and bidder_keys:  # the imp winner: both forms of every key
        for name, value in values.items():
            pair = table.get(name) or _key_pair(prefix, name, code, length)
            targeting[pair[0]] = value
            targeting[pair[1]] = value
    else:
        form = 0 if winner_keys else 1
        for name, value in values.items():
            targeting[(table.get(name) or _key_pair(prefix, name, code, length))[form]] = value
    bid.targeting = targeting


def _values(
    bid: AuctionBid,
    code: str,
    options: TargetingOptions,
    cache_host: str,
    cache_path: str,
    rounding: str,
    rand: Callable[[], float] | None,
) -> dict[str, str]:
    media = options.media_granularity
    granularity = media.get(bid.bid_type, options.granularity) if media else options.granularity
    bucket = price_bucket(bid.price, granularity, rounding) if rand is None else price_bucket(
        bid.price, granularity, rounding, rand
    )
    values = {"pb": bucket, "bidder": code}
    own = bid.bid
    w, h = own.get("w"), own.get("h")
    if w and h:
        values["size"] = f"{w}x{h}"
    dealid = own.get("dealid")
    if dealid:
        values["deal"] = str(dealid)
    if bid.cache_id:
        values["cache_id"] = bid.cache_id
    if bid.vast_cache_id:
        values["uuid"] = bid.vast_cache_id
    if cache_host:  # PBS-Go setTargeting: on every targeted bid, cached or not
        values["cache_host"] = cache_host
        values["cache_path"] = cache_path
    if options.env:
        values["env"] = options.env
    if options.include_format:
        values["format"] = bid.bid_type
    if options.extra:
        values.update(options.extra)
    return values
