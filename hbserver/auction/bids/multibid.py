"""Multibid: ``ext.prebid.multibid`` checked and turned into per-bidder limits.

Follows PBS-Go: ``openrtb_ext/multibid.go`` (``ValidateAndBuildExtMultiBid``: its warnings, word for
word, which ``endpoints/openrtb2/auction.go`` reports as warnings with code 10006,
``MultiBidWarningCode``), ``exchange/exchange.go`` (``buildMultiBidMap``: entries keyed by known
bidder names, case-insensitively; unknown names are dropped), ``exchange/targeting.go``
(``getMultiBidMeta``: a bidder without an entry gets targeting for 1 bid, no prefix),
``exchange/auction.go`` (``validateAndUpdateMultiBid``: the account's ``default_bid_limit``, when
not 0, caps the bids each bidder keeps per imp in the response, whatever multibid says) and
``exchange/utils.go`` (``buildRequestExtMultiBid``: what each bidder sees of multibid).

Values of a wrong JSON type (which PBS-Go cannot unmarshal: a 400) raise
:class:`hbserver.auction.request.validate.RequestError`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from hbserver.auction.request.validate import RequestError

DEFAULT_BID_LIMIT = 1  # openrtb_ext.DefaultBidLimit
MAX_BID_LIMIT = 9  # openrtb_ext.MaxBidLimit
WARNING_CODE = 10006  # errortypes.MultiBidWarningCode
_INT64 = 2**63


@dataclass(frozen=True, slots=True)
class MultiBidEntry:
    """One bidder's validated multibid: bids given targeting per imp and the code prefix for the extra ones."""

    max_bids: int
    prefix: str = ""


_NO_ENTRY = MultiBidEntry(DEFAULT_BID_LIMIT)


class MultiBid:
    """A request's validated multibid and its account's ``default_bid_limit``.

    ``max_bids(bidder)``/``prefix(bidder)``: PBS-Go's ``getMultiBidMeta`` (seat names looked up
    case-insensitively). ``bid_limit``: the account's hard cap on bids kept per imp and bidder
    (0 = none). ``entries``: the validated list, as PBS-Go rewrites ``ext.prebid.multibid``.
    """

    __slots__ = ("_by_bidder", "bid_limit", "entries")

    def __init__(
        self,
        by_bidder: Mapping[str, MultiBidEntry] | None = None,
        entries: list[dict[str, Any]] | None = None,
        bid_limit: int = 0,
    ) -> None:
        self._by_bidder = {name.lower(): entry for name, entry in (by_bidder or {}).items()}
        self.entries = entries or []
        self.bid_limit = bid_limit

    @property
    def active(self) -> bool:
        """Does anything change from the plain auction (an entry for a known bidder, or a bid limit)?"""
        return bool(self._by_bidder) or self.bid_limit > 0

    def max_bids(self, bidder: str) -> int:
        """How many of ``bidder``'s bids per imp get targeting (PBS-Go: its maxbids, else 1)."""
        return self._by_bidder.get(bidder.lower(), _NO_ENTRY).max_bids

    def prefix(self, bidder: str) -> str:
        """``bidder``'s ``targetbiddercodeprefix`` ("" = only its first bid gets targeting)."""
        return self._by_bidder.get(bidder.lower(), _NO_ENTRY).prefix

    def for_bidder(self, bidder: str, alternate_codes: Mapping[str, Any] | None = None) -> list[dict[str, Any]] | None:
        """What goes in ``bidder``'s request ``ext.prebid.multibid`` (None: nothing).

        ``alternate_codes`` is what that bidder's request gets as ``ext.prebid.alternatebiddercodes``
        (:meth:`hbserver.auction.bids.altcodes.AlternateBidderCodes.for_bidder`): entries for the seats it
        may bid under go along. PBS-Go compares the lower-cased entry name with the bidder's name
        as is; here both sides are lower-cased.
        """
        if not self.entries:
            return None
        own = bidder.lower()
        allowed = _allowed_codes(bidder, alternate_codes)
        out: list[dict[str, Any]] = []
        for entry in self.entries:
            name = entry.get("bidder")
            if name:
                if _concerns(name.lower(), own, allowed):
                    out.append(entry)
                continue
            for name in entry.get("bidders") or ():
                if _concerns(name.lower(), own, allowed):
                    out.append({"bidders": [name], "maxbids": entry["maxbids"]})
        return out or None


NO_MULTIBID = MultiBid()


def _allowed_codes(bidder: str, alternate_codes: Mapping[str, Any] | None) -> list[Any]:
    if not isinstance(alternate_codes, Mapping):
        return []
    bidders = alternate_codes.get("bidders")
    config = bidders.get(bidder) if isinstance(bidders, Mapping) else None
    codes = config.get("allowedbiddercodes") if isinstance(config, Mapping) else None
    return codes if isinstance(codes, list) else []


def _concerns(name: str, bidder: str, allowed: list[Any]) -> bool:
    """PBS-Go: the entry names the bidder, or a seat its alternate bidder codes allow ("*": any)."""
    return name == bidder or any(code == "*" or code == name for code in allowed)


@dataclass(slots=True)
class _Raw:
    """One ``ext.prebid.multibid`` entry as sent (PBS-Go's ``ExtMultiBid``)."""

    bidder: str
    bidders: list[str] | None
    max_bids: int | None
    prefix: str

    def __str__(self) -> str:  # ExtMultiBid.String(): Go's %v of each field
        max_bids = "<nil>" if self.max_bids is None else str(self.max_bids)
        bidders = "[" + " ".join(self.bidders or ()) + "]"
        return f"{{Bidder:{self.bidder}, Bidders:{bidders}, MaxBids:{max_bids}, TargetBidderCodePrefix:{self.prefix}}}"


def parse_multibid(
    prebid: Mapping[str, Any] | None,
    known_bidders: Collection[str],
    default_bid_limit: int = 0,
) -> tuple[MultiBid, list[str]]:
    """``ext.prebid.multibid`` validated (PBS-Go's warnings, code :data:`WARNING_CODE`) with the
    account's ``default_bid_limit``.

    ``known_bidders``: the bidder names the server knows (PBS-Go: core bidders and the host's
    aliases); entries naming anything else are kept for the bidders' requests but give no targeting.
    """
    raw = prebid.get("multibid") if isinstance(prebid, Mapping) else None
    if raw is None:
        return (MultiBid(bid_limit=default_bid_limit) if default_bid_limit else NO_MULTIBID), []
    if not isinstance(raw, list):
        raise RequestError("request.ext.prebid.multibid must be an array")
    warnings: list[str] = []
    seen: set[str] = set()
    validated: list[_Raw] = []
    for index, item in enumerate(raw):
        validated.extend(_validate(_read(item, index), seen, warnings))
    if not validated:
        return (MultiBid(bid_limit=default_bid_limit) if default_bid_limit else NO_MULTIBID), warnings
    by_bidder = _by_known_bidder(validated, known_bidders)
    return MultiBid(by_bidder, [_json(entry) for entry in validated], default_bid_limit), warnings


def _validate(entry: _Raw, seen: set[str], warnings: list[str]) -> list[_Raw]:
    """PBS-Go's ``addMultiBid``: the entries this one gives (0 or 1) and its warnings."""
    if entry.max_bids is None:
        warnings.append(f"maxBids not defined for {entry}")
        return []
    if entry.max_bids < DEFAULT_BID_LIMIT:
        warnings.append(f"invalid maxBids value, using minimum {DEFAULT_BID_LIMIT} limit for {entry}")
        entry.max_bids = DEFAULT_BID_LIMIT
    if entry.max_bids > MAX_BID_LIMIT:
        warnings.append(f"invalid maxBids value, using maximum {MAX_BID_LIMIT} limit for {entry}")
        entry.max_bids = MAX_BID_LIMIT
    if entry.bidder:
        if entry.bidder in seen:
            warnings.append(f"multiBid already defined for {entry.bidder}, ignoring this instance {entry}")
            return []
        if entry.bidders is not None:
            warnings.append(f"ignoring bidders from {entry}")
            entry.bidders = None
        seen.add(entry.bidder)
        return [entry]
    if entry.bidders:
        names: list[str] = []
        for name in entry.bidders:
            if name in seen:
                warnings.append(f"multiBid already defined for {name}, ignoring this instance {entry}")
                continue
            seen.add(name)
            names.append(name)
        if entry.prefix:
            warnings.append(f"ignoring targetbiddercodeprefix for {entry}")
        return [_Raw("", names, entry.max_bids, "")] if names else []
    warnings.append(f"bidder(s) not specified for {entry}")
    return []


def _by_known_bidder(entries: list[_Raw], known_bidders: Collection[str]) -> dict[str, MultiBidEntry]:
    """PBS-Go's ``buildMultiBidMap``: known names only (case-insensitive), a later entry wins."""
    known = {name.lower() for name in known_bidders}
    out: dict[str, MultiBidEntry] = {}
    for entry in entries:
        value = MultiBidEntry(entry.max_bids or DEFAULT_BID_LIMIT, entry.prefix)
        for name in [entry.bidder] if entry.bidder else entry.bidders or ():
            if name.lower() in known:
                out[name.lower()] = value
    return out


def _json(entry: _Raw) -> dict[str, Any]:
    """The entry as PBS-Go writes it (``omitempty`` on every field)."""
    out: dict[str, Any] = {}
    if entry.bidder:
        out["bidder"] = entry.bidder
    if entry.bidders:
        out["bidders"] = list(entry.bidders)
    out["maxbids"] = entry.max_bids
    if entry.prefix:
        out["targetbiddercodeprefix"] = entry.prefix
    return out


def _read(item: Any, index: int) -> _Raw:
    where = f"request.ext.prebid.multibid[{index}]"
    if not isinstance(item, dict):
        raise RequestError(f"{where} must be an object")
    bidder = _string(item.get("bidder"), f"{where}.bidder")
    prefix = _string(item.get("targetbiddercodeprefix"), f"{where}.targetbiddercodeprefix")
    bidders = item.get("bidders")
    if bidders is not None and (not isinstance(bidders, list) or not all(isinstance(b, str) for b in bidders)):
        raise RequestError(f"{where}.bidders must be an array of strings")
    max_bids = item.get("maxbids")
    if max_bids is not None and (type(max_bids) is not int or not -_INT64 <= max_bids < _INT64):
        raise RequestError(f"{where}.maxbids must be an integer")
    return _Raw(bidder, list(bidders) if bidders is not None else None, max_bids, prefix)


def _string(value: Any, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise RequestError(f"{where} must be a string")
    return value
