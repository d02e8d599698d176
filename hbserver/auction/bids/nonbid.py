"""Seat non-bids: why a bidder gave no bid for an imp, for ``ext.prebid.seatnonbid``.

Follows PBS-Go: ``exchange/non_bid_reason.go`` (the codes and ``errorToNonBidReason`` /
``httpInfoToNonBidReason``: a timeout is 101, a refused connection or unknown host 103, any other
failed call 100), ``exchange/seat_non_bids.go`` (``rejectBid``: the bid fields copied into
``ext.prebid.bid``; ``rejectImps``: one entry per imp of a failed call) and
``openrtb_ext/response.go`` (``SeatNonBid``/``NonBid``/``NonBidObject``: every field
``omitempty``). PBS-Go sets ``ext.prebid.seatnonbid`` only when the request has
``ext.prebid.returnallbidstatus: true`` (``endpoints/openrtb2/auction.go`` ``setSeatNonBid``).

PBS-Go reports only failed calls and rejected bids. Like PBS-Java's ``BidRejectionTracker``, an imp
a bidder was asked for and gave no bid for is reported too: ``NO_BID`` (0) when it answered
without one, ``REQUEST_BLOCKED_GENERAL`` (200) when no call was made; the codes PBS-Go lacks are
PBS-Java's ``BidRejectionReason`` numbers.
"""

from __future__ import annotations

import errno
import socket
from collections.abc import Iterable, Mapping
from enum import IntEnum
from typing import Any

from hbserver.adapters.base import BidderError, ErrorCode
from hbserver.auction.bids.accept import AuctionBid
from hbserver.auction.exchange.fanout import BidderOutcome


class NonBidReason(IntEnum):
    """PBS-Go's ``NonBidReason`` values; the ones marked Java are PBS-Java's ``BidRejectionReason``."""

    NO_BID = 0  # Java: answered in time without a bid (nor a reason)
    ERROR_GENERAL = 100
    ERROR_TIMEOUT = 101
    ERROR_BIDDER_UNREACHABLE = 103
    REQUEST_BLOCKED_GENERAL = 200  # Java: not called (no request could be made for it)
    REQUEST_BLOCKED_UNSUPPORTED_CHANNEL = 201  # Java: does not serve site/app/dooh
    REQUEST_BLOCKED_UNSUPPORTED_MEDIA_TYPE = 202  # Java: the imp's media types are not the bidder's
    REQUEST_BLOCKED_PRIVACY = 204  # Java: blocked by privacy (TCF purpose 2, activities)
    RESPONSE_REJECTED_GENERAL = 300
    RESPONSE_REJECTED_BELOW_FLOOR = 301
    RESPONSE_REJECTED_CATEGORY_MAPPING_INVALID = 303
    RESPONSE_REJECTED_BELOW_DEAL_FLOOR = 304
    RESPONSE_REJECTED_CREATIVE_SIZE_NOT_ALLOWED = 351
    RESPONSE_REJECTED_CREATIVE_NOT_SECURE = 352


# NonBidObject: the bid fields rejectBid copies, in PBS-Go's order (all omitempty)
_NUMBER_FIELDS = ("w", "h", "dur", "mtype")
# hbserver.auction.exchange.fanout words a failed connection "Error calling the bidder: BidderClientError:
# cannot connect to host:port: <OSError>"; PBS-Go's unreachable = ECONNREFUSED or a DNS "not found".
_CONNECT_FAILED = "cannot connect to "
_UNREACHABLE_ERRNOS = tuple(
    f"[Errno {number}]"
    for number in (errno.ECONNREFUSED, getattr(socket, "EAI_NONAME", None), getattr(socket, "EAI_NODATA", None))
    if number is not None
)


def call_code(error: BidderError) -> NonBidReason:
    """The code for the imps of one failed call (PBS-Go's ``httpInfoToNonBidReason``)."""
    if error.code == ErrorCode.TIMEOUT:
        return NonBidReason.ERROR_TIMEOUT
    message = error.message
    if _CONNECT_FAILED in message and any(marker in message for marker in _UNREACHABLE_ERRNOS):
        return NonBidReason.ERROR_BIDDER_UNREACHABLE
    return NonBidReason.ERROR_GENERAL


def outcome_code(outcome: BidderOutcome) -> NonBidReason | None:
    """Why the bidder of ``outcome`` gave no bid, for the imps it was asked for; None when it bid.

    In order: any bid -> None; no time left to call it, or a call that failed -> that call's code
    (:func:`call_code`); no call made and no answer (the adapter made no request, or there is
    none) -> 200; an answer it could not read (adapter errors) -> 100; else -> 0 (no bid).
    """
    if any(response.bids for response in outcome.responses):
        return None
    if outcome.tmax_timeout:
        return NonBidReason.ERROR_TIMEOUT
    for call in outcome.calls:
        if call.error is not None:
            return call_code(call.error)
    if not outcome.calls and not outcome.responses:
        return NonBidReason.REQUEST_BLOCKED_GENERAL
    if outcome.errors or outcome.panicked:
        return NonBidReason.ERROR_GENERAL
    return NonBidReason.NO_BID


class SeatNonBids:
    """Non-bids by seat, in the order seats were first reported; :meth:`as_json` is PBS-Go's list."""

    __slots__ = ("_by_seat",)

    def __init__(self) -> None:
        self._by_seat: dict[str, list[dict[str, Any]]] = {}

    def __bool__(self) -> bool:
        return bool(self._by_seat)

    def __len__(self) -> int:
        return sum(len(items) for items in self._by_seat.values())

    def add(
        self,
        seat: str,
        imp_id: str,
        code: int,
        bid: Mapping[str, Any] | None = None,
        *,
        orig_cpm: float | None = None,
        orig_cur: str | None = None,
    ) -> None:
        """One non-bid. With ``bid`` (a rejected bid, price in the auction currency): PBS-Go's
        ``rejectBid``, its fields under ``ext.prebid.bid`` (``origbidcpm``/``origbidcur`` from the
        arguments, else from the bid's ``ext``); without: PBS-Go's ``rejectImps`` entry."""
        entry: dict[str, Any] = {"impid": imp_id, "statuscode": int(code)}
        if bid is not None:
            entry["ext"] = {"prebid": {"bid": _bid_object(bid, orig_cpm, orig_cur)}}
        items = self._by_seat.get(seat)
        if items is None:
            self._by_seat[seat] = [entry]
        else:
            items.append(entry)

    def add_bid(self, bid: AuctionBid, code: int) -> None:
        """A bid the auction accepted and then rejected (floors, category, creative checks...)."""
        self.add(bid.bidder, bid.imp_id, code, bid.bid)

    def add_imps(self, seat: str, imp_ids: Iterable[str], code: int) -> None:
        """One entry per imp: PBS-Go's ``rejectImps``."""
        for imp_id in imp_ids:
            self.add(seat, imp_id, code)

    def add_outcome(self, outcome: BidderOutcome, bids: Iterable[AuctionBid] = ()) -> None:
        """Each imp ``outcome``'s bidder was asked for and has none of ``bids`` (its accepted bids):
        the code of the failed call that carried the imp, else :func:`outcome_code`, else 0 (the
        bidder bid, but not on this imp)."""
        imps = outcome.bidder.request.get("imp") or ()
        with_bid = {bid.imp_id for bid in bids}
        missing = [imp["id"] for imp in imps if isinstance(imp, dict) and imp.get("id") not in with_bid]
        if not missing:
            return
        by_call: dict[str, NonBidReason] = {}
        for call in outcome.calls:
            if call.error is not None:
                code = call_code(call.error)
                for imp_id in call.call.imp_ids:
                    by_call.setdefault(imp_id, code)
        fallback = outcome_code(outcome)
        if fallback is None:
            fallback = NonBidReason.NO_BID
        seat = outcome.bidder.name
        for imp_id in missing:
            self.add(seat, imp_id, by_call.get(imp_id, fallback))

    def as_json(self) -> list[dict[str, Any]]:
        """``ext.prebid.seatnonbid``: ``[{"nonbid": [...], "seat": ...}]``."""
        return [{"nonbid": items, "seat": seat} for seat, items in self._by_seat.items()]


def _bid_object(bid: Mapping[str, Any], orig_cpm: float | None, orig_cur: str | None) -> dict[str, Any]:
    """PBS-Go's ``NonBidObject`` of ``bid``: its fields in PBS-Go's order, zero values left out."""
    out: dict[str, Any] = {}
    price = bid.get("price")
    if _number(price) and price:
        out["price"] = price
    adomain = _strings(bid.get("adomain"))
    if adomain:
        out["adomain"] = adomain
    cattax = _integer(bid.get("cattax"))
    if cattax:
        out["cattax"] = cattax
    cat = _strings(bid.get("cat"))
    if cat:
        out["cat"] = cat
    dealid = bid.get("dealid")
    if isinstance(dealid, str) and dealid:
        out["dealid"] = dealid
    for name in _NUMBER_FIELDS:
        value = _integer(bid.get(name))
        if value:
            out[name] = value
    ext = bid.get("ext")
    if orig_cpm is None and isinstance(ext, Mapping):
        orig_cpm = ext.get("origbidcpm")
    if orig_cur is None and isinstance(ext, Mapping):
        orig_cur = ext.get("origbidcur")
    if _number(orig_cpm) and orig_cpm:
        out["origbidcpm"] = orig_cpm
    if isinstance(orig_cur, str) and orig_cur:
        out["origbidcur"] = orig_cur
    return out


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _integer(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    if isinstance(value, float) and not value.is_integer():
        return 0
    return int(value)


def _strings(value: Any) -> list[str] | None:
    if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
        return list(value)
    return None
