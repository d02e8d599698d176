"""PBS-Java's app video HTML correction: in an app request, a bid whose ``adm`` is neither VAST (for a
video bid) nor a native JSON ad is an HTML ad, whatever type the bidder gave it.

Such a bid becomes a banner: its type is ``banner``, its ``ext`` becomes PBS-Java's
``{"prebid": {..., "type": "banner", "meta": {..., "mediaType": "video"}}}`` (PBS-Java rebuilds
``ext`` from ``ext.prebid`` alone, so the bid's other ``ext`` fields go), and the adapter's meta
says ``mediaType: video``. Kept as they are: bids without ``adm``, bids of excluded bidders, video
bids whose ``adm`` matches ``.*<\\s*VAST\\s+.*`` (Java's pattern: case-insensitive, "." stops at a
line break and the whole ``adm`` must match, so a multi-line VAST does not), and bids whose ``adm``
is a JSON object with ``assets``.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Collection
from typing import Any

from hbserver.auction.bids import AuctionBid

_JAVA_DOT = "[^\n\r\u0085\u2028\u2029]"
# re.ASCII: Java's \s and its (ASCII-only) CASE_INSENSITIVE
_VAST_XML = re.compile(f"{_JAVA_DOT}*<\\s*VAST\\s+{_JAVA_DOT}*", re.IGNORECASE | re.ASCII)
_JSON_SPACE = " \t\n\r"
_DECODER = json.JSONDecoder()


def is_video_with_vast(bid_type: str, adm: str) -> bool:
    return bid_type == "video" and _VAST_XML.fullmatch(adm) is not None


def has_native_adm(adm: str) -> bool:
    """Whether ``adm`` reads as JSON (Jackson's readTree: the first value) with an ``assets`` field."""
    text = adm.lstrip(_JSON_SPACE)
    try:
        value, _ = _DECODER.raw_decode(text)
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict) and "assets" in value


def _prebid(ext: Any) -> dict[str, Any] | None:
    """``ext.prebid`` as PBS-Java reads it (None when it cannot: then a new one is made)."""
    if not isinstance(ext, dict):
        return None
    prebid = ext.get("prebid")
    if prebid is None:
        return {}
    if not isinstance(prebid, dict) or not isinstance(prebid.get("meta", {}), (dict, type(None))):
        return None
    return prebid


def _as_banner(bid: AuctionBid) -> AuctionBid:
    prebid = _prebid(bid.bid.get("ext")) or {}
    meta = prebid.get("meta")
    new_prebid = {**prebid, "meta": {**(meta or {}), "mediaType": "video"}, "type": "banner"}
    adapter_meta = None if bid.meta is None else {**bid.meta, "mediaType": "video"}
    new_bid = {**bid.bid, "ext": {"prebid": new_prebid}}
    return dataclasses.replace(bid, bid=new_bid, bid_type="banner", meta=adapter_meta)


def correct(bid: AuctionBid, excluded_bidders: Collection[str | None]) -> AuctionBid:
    """The bid, or its banner copy when it is an HTML ad."""
    if bid.bidder in excluded_bidders:
        return bid
    adm = bid.bid.get("adm")
    if not isinstance(adm, str) or is_video_with_vast(bid.bid_type, adm) or has_native_adm(adm):
        return bid
    return _as_banner(bid)
