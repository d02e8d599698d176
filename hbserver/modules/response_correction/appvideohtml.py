"""PBS-Java's app video HTML correction: in an app request, a bid whose ``adm`` is neither VAST (for a
video bid) nor a native JSON ad is an HTML ad, whatever type the bidder gave it.

Such a bid becomes a banner: its type is ``banner``, its ``ext`` becomes PBS-Java's
``{"prebid": {..., "type": "banner", "meta": {..., "mediaType": "video"}}}`` (PBS-Java rebuilds
``ext`` from ``ext.prebid`` alone, so the bid's other ``ext`` fields go), and the adapter's meta
says ``mediaType: video``. Kept as they are: bids without ``adm``, bids of excluded bidders, video
bids whose ``adm`` matches ``.*<\\s*VAST\\s+.*`` (Java's pattern: case-insensitive, "." stops at a
line break and the whole ``adm`` must match, so a multi-line VAST does not), and bids whose ``adm``
is a JSON object with ``assets``.

PBS-Java's warnings go to ``warn`` (the module samples them): a JSON ``adm`` with or without
``assets``, and each bid it changes.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Collection
from typing import Any

from hbserver.auction.bids.accept import AuctionBid

_JAVA_DOT = "[^\n\r\u0085\u2028\u2029]"
# re.ASCII: Java's \s and its (ASCII-only) CASE_INSENSITIVE
_VAST_XML = re.compile(f"{_JAVA_DOT}*<\\s*VAST\\s+{_JAVA_DOT}*", re.IGNORECASE | re.ASCII)
_JSON_SPACE = " \t\n\r"
_DECODER = json.JSONDecoder()
NATIVE_ADM_MESSAGE = "Bid {} of bidder {} has an JSON ADM, that appears to be native"
ADM_WITH_NO_ASSETS_MESSAGE = "Bid {} of bidder {} has a JSON ADM, but without assets"
CHANGING_BID_MEDIA_TYPE_MESSAGE = "Bid {} of bidder {}: changing media type to banner"


def is_video_with_vast(bid_type: str, adm: str) -> bool:
    return bid_type == "video" and _VAST_XML.fullmatch(adm) is not None


def read_json(adm: str) -> tuple[bool, Any]:
    """Whether ``adm`` reads as JSON as Jackson's readTree reads it (its first value; nothing at all
    is its MissingNode), and the value."""
    text = adm.lstrip(_JSON_SPACE)
    if not text:
        return True, None
    try:
        value, _ = _DECODER.raw_decode(text)
    except (ValueError, RecursionError):
        return False, None
    return True, value


def has_native_adm(adm: str) -> bool:
    """Whether ``adm`` is a JSON object with an ``assets`` field."""
    _, value = read_json(adm)
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


def _is_native(adm: str, bid_id: Any, bidder: str, warn: Callable[[str], None]) -> bool:
    is_json, value = read_json(adm)
    if not is_json:
        return False
    native = isinstance(value, dict) and "assets" in value
    warn((NATIVE_ADM_MESSAGE if native else ADM_WITH_NO_ASSETS_MESSAGE).format(bid_id, bidder))
    return native


def correct(bid: AuctionBid, excluded_bidders: Collection[str | None], warn: Callable[[str], None]) -> AuctionBid:
    """The bid, or its banner copy when it is an HTML ad."""
    if bid.bidder in excluded_bidders:
        return bid
    adm = bid.bid.get("adm")
    if not isinstance(adm, str) or is_video_with_vast(bid.bid_type, adm):
        return bid
    bid_id = bid.bid.get("id")
    if _is_native(adm, bid_id, bid.bidder, warn):
        return bid
    warn(CHANGING_BID_MEDIA_TYPE_MESSAGE.format(bid_id, bid.bidder))
    return _as_banner(bid)
