"""Brand-category mapping and competitive separation (PBS-Go ``applyCategoryMapping``).

Asked for by ``ext.prebid.targeting.includebrandcategory`` (with ``durationrangesec`` and
``appendbiddernames``); PBS-Go applies it to every bid of the auction, whatever its media type.
For each bid, in the order the auction holds them:

- its category: the adapter's ``primary_category`` (bid video facts) as is; else, with
  ``withcategory``, the bid's only IAB ``cat`` translated through the primary ad server's table
  (``translatecategories`` false keeps the IAB code). A bid without exactly one ``cat`` is rejected
  ("Bid did not contain a category", seat-non-bid 303); one whose code the table lacks, or whose
  table does not exist, is rejected ("Category mapping file for primary ad server: '<name>',
  publisher: '<publisher>' not found", no seat-non-bid code, as PBS-Go);
- its duration: the adapter's ``duration`` (0 without one) raised to the smallest
  ``durationrangesec`` entry that holds it; above them all the bid is rejected ("bid duration
  exceeds maximum allowed");
- its ``hb_pb_cat_dur`` value: ``<price bucket>_<category>_<duration>s`` with ``withcategory``,
  else ``<price bucket>_<duration>s``, then ``_<bidder>`` with ``appendbiddernames``;
- deduplication: one bid per category (``withcategory``), else one per ``hb_pb_cat_dur`` value,
  across the whole group (PBS-Go: the whole auction): the higher price bucket stays, the other is
  rejected ("Bid was deduplicated"). On equal buckets PBS-Go picks at random; here the higher
  price stays, and on equal prices the bid seen first (deterministic; ``later_wins_tie`` flips
  that last step, as PBS-Go's test generator does).

The rejection messages are PBS-Go's: ``bid rejected [bid ID: <id>] reason: <reason>``, in its
order. ``primaryadserver`` other than 1 (freewheel) or 2 (dfp), with ``withcategory`` and
translation on, fails the whole auction (:class:`CategoryConfigError`).

The tables are PBS-Go's ``static/category-mapping`` files, shipped in ``hbserver/static`` and read
once at start (:meth:`CategoryTables.load`): ``<ad server>/<ad server>.json`` and
``<ad server>/<ad server>_<publisher>.json``, each IAB code -> ``{"id", "name"}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

import orjson

from hbserver.auction.bids.accept import AuctionBid
from hbserver.auction.response.pricegranularity import PriceGranularity, price_bucket

AD_SERVERS: Mapping[int, str] = {1: "freewheel", 2: "dfp"}  # PBS-Go getPrimaryAdServer
NO_CATEGORY_CODE = 303  # PBS-Go ResponseRejectedCategoryMappingInvalid
REASON_NO_CATEGORY = "Bid did not contain a category"
REASON_DUPLICATE = "Bid was deduplicated"
REASON_TOO_LONG = "bid duration exceeds maximum allowed"
# PBS-Go getMediaTypeForBid: mtype first, else bid.ext.prebid.type
_MTYPES: Mapping[int, str] = {1: "banner", 2: "video", 3: "audio", 4: "native"}
_PREBID_TYPES = frozenset(("banner", "video", "audio", "native"))


class CategoryConfigError(Exception):
    """The request's ``primaryadserver`` is not one PBS-Go knows; the auction fails with it."""


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


@dataclass(frozen=True, slots=True)
class BrandCategory:
    """``includebrandcategory`` with the targeting's ``durationrangesec`` and ``appendbiddernames``."""

    with_category: bool = False
    translate: bool = True
    primary_ad_server: int = 0
    publisher: str = ""
    duration_ranges: tuple[int, ...] = ()
    append_bidder_names: bool = False

    @classmethod
    def from_targeting(cls, targeting: Mapping[str, Any]) -> BrandCategory | None:
        """From ``ext.prebid.targeting`` (types already checked); None without ``includebrandcategory``
        (an explicit null is none, as Go's pointer)."""
        conf = targeting.get("includebrandcategory")
        if not isinstance(conf, dict):
            return None
        ranges = targeting.get("durationrangesec")
        publisher = conf.get("publisher")
        return cls(
            with_category=conf.get("withcategory") is True,
            translate=conf.get("translatecategories") is not False,
            primary_ad_server=_int(conf.get("primaryadserver")),
            publisher=publisher if isinstance(publisher, str) else "",
            duration_ranges=tuple(_int(r) for r in ranges) if isinstance(ranges, list) else (),
            append_bidder_names=targeting.get("appendbiddernames") is True,
        )

    def ad_server(self) -> str:
        """The primary ad server's table name ("" when none is needed); raises CategoryConfigError."""
        if not (self.with_category and self.translate):
            return ""
        name = AD_SERVERS.get(self.primary_ad_server)
        if name is None:
            raise CategoryConfigError(f"Primary ad server {self.primary_ad_server} not recognized")
        return name


class CategoryTables:
    """Ad server -> table name (``freewheel``, ``dfp_dfp``...) -> IAB code -> the ad server's id."""

    __slots__ = ("tables",)

    def __init__(self, tables: Mapping[str, Mapping[str, Mapping[str, str]]]) -> None:
        self.tables = tables

    def lookup(self, ad_server: str, publisher: str, iab: str) -> str:
        """PBS-Go's file fetcher: ``<ad server>_<publisher>`` (or ``<ad server>``) in the ad server's
        directory; "" when the table or the code is missing."""
        name = f"{ad_server}_{publisher}" if publisher else ad_server
        table = self.tables.get(ad_server, {}).get(name)
        return table.get(iab, "") if table is not None else ""

    @classmethod
    def load(cls, root: Traversable | None = None) -> CategoryTables:
        """Every ``<ad server>/<name>.json`` under ``root`` (the package's own tables by default);
        raises ValueError for a file that is not a JSON object of objects."""
        if root is None:
            root = resources.files("hbserver") / "static" / "category-mapping"
        if not root.is_dir():
            raise ValueError(f"category mapping tables not found at {root}: reinstall hbserver")
        tables: dict[str, dict[str, dict[str, str]]] = {}
        for directory in sorted(root.iterdir(), key=lambda p: p.name):
            if not directory.is_dir():
                continue
            for file in sorted(directory.iterdir(), key=lambda p: p.name):
                if file.is_file() and file.name.endswith(".json"):
                    tables.setdefault(directory.name, {})[file.name[:-5]] = _table(file)
        return cls(tables)


def _table(file: Traversable) -> dict[str, str]:
    try:
        data = orjson.loads(file.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"category mapping {file.name}: {exc}") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict | str) for v in data.values()):
        raise ValueError(f"category mapping {file.name}: not an object of ids or of {{id, name}} objects")
    # hbserver's own tables: IAB code -> id; PBS-Go's file fetcher's: IAB code -> {id, name}
    return {iab: entry if isinstance(entry, str) else str(entry.get("id") or "") for iab, entry in data.items()}


@dataclass(slots=True)
class Rejection:
    """A bid the category rules took out: why, and its seat-non-bid code (None: PBS-Go gives none)."""

    bid: AuctionBid
    reason: str
    non_bid_code: int | None = None

    @property
    def message(self) -> str:
        return f"bid rejected [bid ID: {_bid_id(self.bid)}] reason: {self.reason}"


@dataclass(slots=True)
class CategoryResult:
    kept: list[AuctionBid]
    cat_dur: dict[str, str]  # bid id -> hb_pb_cat_dur value (PBS-Go's bidCategory, keyed the same)
    rejected: list[Rejection] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Buckets:
    """How a bid's price bucket is worked out: the targeting's granularities and the account's rounding."""

    granularity: PriceGranularity
    by_media_type: Mapping[str, PriceGranularity] = field(default_factory=dict)
    rounding: str = "down"

    def of(self, bid: AuctionBid) -> str:
        media = self.by_media_type
        granularity = media.get(_media_type(bid.bid), self.granularity) if media else self.granularity
        return price_bucket(bid.price, granularity, self.rounding)


def _media_type(bid: Mapping[str, Any]) -> str:
    """PBS-Go ``getMediaTypeForBid`` (not the adapter's type): ``mtype``, else ``ext.prebid.type``."""
    mtype = bid.get("mtype")
    if isinstance(mtype, int) and mtype > 0:
        return _MTYPES.get(mtype, "")
    ext = bid.get("ext")
    prebid = ext.get("prebid") if isinstance(ext, dict) else None
    kind = prebid.get("type") if isinstance(prebid, dict) else None
    return kind if kind in _PREBID_TYPES else ""


def unmapped_reason(ad_server: str, publisher: str) -> str:
    return f"Category mapping file for primary ad server: '{ad_server}', publisher: '{publisher}' not found"


def _bid_id(bid: AuctionBid) -> str:
    value = bid.bid.get("id")
    return value if isinstance(value, str) else ""


def duration_range(duration: int, ranges: Sequence[int]) -> int | None:
    """PBS-Go ``findDurationRange``: ``duration`` itself when listed, else the smallest entry above it;
    None when every entry is below it; ``duration`` unchanged without entries."""
    above = [r for r in ranges if r >= duration]
    if above:
        return duration if duration in above else min(above)
    return duration if not ranges else None


@dataclass(slots=True)
class _Held:
    """The bid holding a dedupe key so far: its index in the group, bucket and price."""

    index: int
    bucket: float
    price: float


def _bucket_number(bucket: str) -> float:
    try:
        return float(bucket)
    except ValueError:  # Go's ParseFloat error counts as 0
        return 0.0


def map_categories(
    bids: Sequence[AuctionBid],
    rules: BrandCategory,
    tables: CategoryTables,
    buckets: Buckets,
    later_wins_tie: bool = False,
) -> CategoryResult:
    """The category rules (module text) over one group of bids; raises CategoryConfigError."""
    ad_server = rules.ad_server()
    cat_dur: dict[str, str] = {}
    rejected: list[Rejection] = []
    removed: set[int] = set()
    held: dict[str, _Held] = {}
    for index, bid in enumerate(bids):
        value, reason, code = _cat_dur(bid, rules, tables, ad_server, buckets)
        if value is None:
            removed.add(index)
            rejected.append(Rejection(bid, reason, code))
            continue
        key, bucket = value
        number = _bucket_number(bucket[0])
        current = held.get(key)
        if current is not None:
            if _keeps(current, number, bid.price, later_wins_tie):
                removed.add(index)
                rejected.append(Rejection(bid, REASON_DUPLICATE))
                continue
            removed.add(current.index)
            loser = bids[current.index]
            rejected.append(Rejection(loser, REASON_DUPLICATE))
            cat_dur.pop(_bid_id(loser), None)
        cat_dur[_bid_id(bid)] = bucket[1]
        held[key] = _Held(index, number, bid.price)
    kept = [bid for index, bid in enumerate(bids) if index not in removed] if removed else list(bids)
    return CategoryResult(kept, cat_dur, rejected)


def _keeps(current: _Held, bucket: float, price: float, later_wins_tie: bool) -> bool:
    """Does the bid holding a key keep it against a newcomer? The higher bucket; on a tie (PBS-Go:
    a coin toss) the higher price, then the holder unless ``later_wins_tie``."""
    if current.bucket != bucket:
        return current.bucket > bucket
    if current.price != price:
        return current.price > price
    return not later_wins_tie


def _cat_dur(
    bid: AuctionBid, rules: BrandCategory, tables: CategoryTables, ad_server: str, buckets: Buckets
) -> tuple[tuple[str, tuple[str, str]] | None, str, int | None]:
    """((dedupe key, (bucket, hb_pb_cat_dur value)), "", None), or (None, reason, seat-non-bid code)."""
    video = bid.video
    duration = _int(video.get("duration")) if video else 0
    category = video.get("primary_category") if video else ""
    category = category if isinstance(category, str) else ""
    if rules.with_category and not category:
        cats = bid.bid.get("cat")
        if not isinstance(cats, list) or len(cats) != 1:
            return None, REASON_NO_CATEGORY, NO_CATEGORY_CODE
        iab = cats[0] if isinstance(cats[0], str) else ""
        if rules.translate:
            category = tables.lookup(ad_server, rules.publisher, iab)
            if not category:
                return None, unmapped_reason(ad_server, rules.publisher), None
        else:
            category = iab
    bucket = buckets.of(bid)
    seconds = duration_range(duration, rules.duration_ranges)
    if seconds is None:
        return None, REASON_TOO_LONG, None
    if rules.with_category:
        value = f"{bucket}_{category}_{seconds}s"
        key = category
    else:
        value = key = f"{bucket}_{seconds}s"
    if rules.append_bidder_names:
        value = f"{value}_{bid.bidder}"
    return (key, (bucket, value)), "", None


@dataclass(slots=True)
class CustomKeys:
    """PBS-Go's competitive-exclusion cache keys (``auction.doCache``): a VAST cached as
    ``<hb_pb_cat_dur>_<uuid>``, one uuid per auction, which ``hb_uuid`` then carries alone (the ad
    server rebuilds the key from both targeting values); a bid also cached as JSON gets PBS-Go's error."""

    uuid: str
    keys: dict[int, str]  # id(bid) -> its VAST's key
    errors: list[str]


def custom_cache_keys(
    bids: Sequence[AuctionBid], cat_dur: Mapping[str, str], cache_json: bool, uuid: str
) -> CustomKeys:
    keys: dict[int, str] = {}
    errors: list[str] = []
    for bid in bids:
        value = cat_dur.get(_bid_id(bid), "")
        if not value:
            continue
        keys[id(bid)] = f"{value}_{uuid}"
        if cache_json:  # PBS-Go: "not allowed if bids is true; log error and cache normally"
            errors.append("cannot use custom cache key for non-vast bids")
    return CustomKeys(uuid, keys, errors)
