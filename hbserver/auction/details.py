"""What an auction tells its observers: a plain record the auction fills (only when analytics is on)
and the analytics records are built from (:mod:`hbserver.analytics.records`). The auction knows
nothing of analytics: the dependency runs from analytics to the auction, never back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hbserver.adapters.base import BidderError
from hbserver.auction.bids.accept import AuctionBid, RejectedBid
from hbserver.auction.exchange.fanout import BidderOutcome
from hbserver.auction.response.targeting import ImpResult

if TYPE_CHECKING:
    from hbserver.auction.exchange.privacy import AuctionPrivacy, BidderPrivacy


@dataclass(slots=True)
class AuctionDetails:
    """What an auction tells its analytics record; the exchange fills it only when analytics is on."""

    # per bidder asked: its outcome, the bids that entered the auction, all its errors, and every
    # bid it returned in order, accepted or rejected (accept_bids' ``seen``)
    bidders: list[tuple[BidderOutcome, list[AuctionBid], list[BidderError], list[AuctionBid | RejectedBid]]] = (
        field(default_factory=list)
    )
    stored_bids: list[AuctionBid] = field(default_factory=list)  # from stored auction responses
    currency: str = "USD"
    results: dict[str, ImpResult] = field(default_factory=dict)  # per imp: the winner
    privacy: AuctionPrivacy | None = None  # the request's privacy signals and what was enforced
    privacy_blocked: dict[str, BidderPrivacy] = field(default_factory=dict)  # bidders privacy kept out
    seatnonbid: list[dict[str, Any]] = field(default_factory=list)  # ext.prebid.seatnonbid's entries
    late_rejections: dict[int, str] = field(default_factory=dict)  # id(bid) -> why (floors) after accept_bids
    # for PBS-Go's analytics objects (hbserver.analytics.pbs): the request as the auction ran it, the
    # response before the endpoint renders it, the account, and the auction's start (epoch seconds)
    request: dict[str, Any] | None = None
    response: dict[str, Any] | None = None
    account: Any = None  # hbserver.stores.accounts.Account
    started: float = 0.0
    amp_targeting: dict[str, str] | None = None  # an AMP answer's targeting, when the response holds none
    hooks: Any = None  # the request's HookExecutor, when hooks ran (its outcomes)
    origin: str = ""  # an AMP request's __amp_source_origin, else its Origin header

