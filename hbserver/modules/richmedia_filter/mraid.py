"""PBS-Java's ``BidResponsesMraidFilter``: bids whose ``adm`` contains the MRAID script pattern are
rejected, bidder by bidder (a bidder's bids in the order the auction holds them)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hbserver.auction.bids.accept import AuctionBid

# PBS-Java's BidRejectionReason.RESPONSE_REJECTED_INVALID_CREATIVE: the seat-non-bid code
REJECTION_CODE = 350
# PBS-Java's BidderError of the rejected bids' bidder: Type.invalid_bid (5), "Invalid bid"
INVALID_BID_CODE = 5
INVALID_BID_MESSAGE = "Invalid bid"
ACTIVITY = "reject-richmedia"
RESULT_STATUS = "success-block"
RESULT_VALUES = {"richmedia-format": "mraid"}


def contains_pattern(bid: AuctionBid, pattern: str | None) -> bool:
    """StringUtils.contains(adm, pattern): never for a missing ``adm`` or pattern."""
    adm = bid.bid.get("adm")
    return isinstance(adm, str) and pattern is not None and pattern in adm


@dataclass(frozen=True, slots=True)
class BidderRejection:
    """The bids of one bidder the filter rejected."""

    bidder: str
    bids: tuple[AuctionBid, ...]

    @property
    def imp_ids(self) -> list[str]:
        return [bid.imp_id for bid in self.bids]

    def error(self) -> dict[str, Any]:
        """PBS-Java's bidder error for these bids (its ``ext.errors`` entry; the imp ids once each)."""
        return {"code": INVALID_BID_CODE, "message": INVALID_BID_MESSAGE, "impIds": list(dict.fromkeys(self.imp_ids))}

    def analytics_result(self) -> dict[str, Any]:
        return {
            "status": RESULT_STATUS,
            "values": dict(RESULT_VALUES),
            "appliedto": {"bidders": [self.bidder], "impids": self.imp_ids},
        }


def rejections(pattern: str | None, bids: Sequence[AuctionBid]) -> list[BidderRejection]:
    """The rejected bids by bidder, bidders in the order of their first bid."""
    by_bidder: dict[str, list[AuctionBid]] = {}
    for bid in bids:
        rejected = by_bidder.setdefault(bid.bidder, [])
        if contains_pattern(bid, pattern):
            rejected.append(bid)
    return [BidderRejection(bidder, tuple(found)) for bidder, found in by_bidder.items() if found]


def analytics_tags(found: Sequence[BidderRejection]) -> dict[str, Any]:
    """The hook's analytics tags: one ``reject-richmedia`` activity, a result per bidder ({} for none)."""
    if not found:
        return {}
    results = [rejection.analytics_result() for rejection in found]
    return {"activities": [{"name": ACTIVITY, "status": "success", "results": results}]}
