"""Builders for analytics records (CONTRACT §5): plain dicts with ``event`` and ``ts``.

The ``auction`` and ``amp`` records also carry every bid the bidders returned (accepted or not)
and one entry per bidder asked, built from the :class:`AuctionDetails` an auction collects
only when analytics is on.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from hbserver.adapters.base import ErrorCode
from hbserver.auction.bids.accept import AuctionBid, RejectedBid
from hbserver.auction.details import AuctionDetails
from hbserver.events import EventRequest

if TYPE_CHECKING:
    pass

# What PBS-Go's analytics objects are built from (hbserver.analytics.pbs): the auction's details or the
# event's account, under this key of the record; :meth:`Analytics.log` takes it out before any module
# sees the record.
SOURCE = "_source"
MAX_ADAPTER_ERRORS = 10  # per bidder entry; the rest are left out
MAX_ERROR_MESSAGE = 300  # characters of one error's message

_second = -1
_prefix = ""


def rfc3339_utc(epoch: float) -> str:
    """``2026-11-21T16:20:36.123Z``; the per-second prefix is reused (hot path)."""
    global _second, _prefix
    whole, millis = divmod(round(epoch * 1000), 1000)
    if whole != _second:
        _prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
        _second = whole
    return f"{_prefix}.{millis:03d}Z"


def notification_record(event: EventRequest, now: float | None = None, account: Any = None) -> dict[str, Any]:
    record: dict[str, Any] = {
        "event": "notification",
        "ts": rfc3339_utc(time.time() if now is None else now),
        "type": event.type,
        "bidid": event.bidid,
        "account": event.account,
        "bidder": event.bidder,
        "timestamp": event.timestamp,
        "format": event.format,
        "integration": event.integration,
        "aid": event.aid,
    }
    if event.vtype is not None:
        record["vtype"] = event.vtype
    if account is not None:
        record[SOURCE] = account
    return record


def cookie_sync_record(status: int, errors: list[str], bidder_status: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "event": "cookie_sync",
        "ts": rfc3339_utc(time.time()),
        "status": status,
        "errors": errors,
        "bidder_status": [
            {"bidder": b["bidder"], "no_cookie": b["no_cookie"],
             "usersync": {"url": b["usersync"]["url"], "type": b["usersync"]["type"]}}
            for b in bidder_status
        ],
    }


def setuid_record(status: int, bidder: str, uid: str, errors: list[str], success: bool) -> dict[str, Any]:
    return {
        "event": "setuid",
        "ts": rfc3339_utc(time.time()),
        "status": status,
        "bidder": bidder,
        "uid": uid,
        "errors": errors,
        "success": success,
    }


def vtrack_record(
    status: int, account: str, puts: list[tuple[str, str]], uuids: list[str], errors: list[str]
) -> dict[str, Any]:
    """One /vtrack call: the (bid id, bidder) of each put and the cache ids it got."""
    return {
        "event": "vtrack",
        "ts": rfc3339_utc(time.time()),
        "status": status,
        "account": account,
        "puts": [{"bidid": bidid, "bidder": bidder} for bidid, bidder in puts],
        "uuids": uuids,
        "errors": errors,
    }


def auction_record(
    status: int,
    account: str,
    bidders: list[str],
    bid_count: int,
    errors: list[str],
    details: AuctionDetails | None = None,
    modules: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """One /openrtb2/auction call: the account, the bidders asked, the bids (``bid_count``: how many
    the response carries) and, with ``details``, every bid returned and every bidder's outcome;
    ``modules``: each hook that ran, with its analytics tags (only when hooks ran)."""
    record = {
        "event": "auction",
        "ts": rfc3339_utc(time.time()),
        "status": status,
        "account": account,
        "bidders": bidders,
        "bid_count": bid_count,
        "bids": bid_entries(details) if details is not None else [],
        "adapters": adapter_entries(details) if details is not None else [],
        "privacy": privacy_entry(details) if details is not None else None,
        "seatnonbid": details.seatnonbid if details is not None else [],
        "errors": errors,
    }
    if modules:
        record["modules"] = modules
    if details is not None:
        record[SOURCE] = details
    return record


def amp_record(
    status: int,
    account: str,
    bidders: list[str],
    bid_count: int,
    errors: list[str],
    details: AuctionDetails | None = None,
    modules: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """One /openrtb2/amp call, shaped like the auction record."""
    record = auction_record(status, account, bidders, bid_count, errors, details, modules)
    record["event"] = "amp"
    return record


def privacy_entry(details: AuctionDetails) -> dict[str, Any] | None:
    """What privacy enforced in this auction: the signals, and why each bidder was kept out
    (``blocked``); what it removed from each bidder asked is in that bidder's adapter entry."""
    privacy = details.privacy
    if privacy is None:
        return None
    gdpr = privacy.gdpr
    return {
        "gdpr": gdpr is not None,
        "tcf": ("v2" if gdpr.consent_valid else "err") if gdpr is not None else None,
        "ccpa": privacy.ccpa,
        "coppa": privacy.coppa,
        "lmt": privacy.lmt,
        "gpp_sid": list(privacy.regs.gpp_sid),
        "blocked": {name: done.blocked for name, done in details.privacy_blocked.items()},
    }


def bid_entries(details: AuctionDetails) -> list[dict[str, Any]]:
    """One entry per bid returned: the accepted ones with ``won``, the others with the reason
    the auction dropped them (the texts the bid pipeline gives the bidder's errors)."""
    winners = {id(r.winner) for r in details.results.values() if r.winner is not None}
    currency = details.currency
    entries: list[dict[str, Any]] = []
    late = details.late_rejections
    for *_, seen in details.bidders:
        entries.extend(
            _accepted(bid, currency, winners, late.get(id(bid))) if isinstance(bid, AuctionBid) else _rejected(bid)
            for bid in seen
        )
    entries.extend(_accepted(bid, currency, winners) for bid in details.stored_bids)
    return entries


def _accepted(bid: AuctionBid, currency: str, winners: set[int], rejected: str | None = None) -> dict[str, Any]:
    own = bid.bid
    return {
        "bidder": bid.bidder,
        "imp_id": bid.imp_id,
        "bidid": own.get("id"),
        "price": bid.price,
        "currency": currency,
        "deal": own.get("dealid") or None,
        "media_type": bid.bid_type,
        "won": id(bid) in winners,
        "rejected_reason": rejected,  # set when the auction dropped it after accepting it (below its floor)
    }


def _rejected(rejected: RejectedBid) -> dict[str, Any]:
    own = rejected.typed.bid if isinstance(rejected.typed.bid, dict) else {}
    return {
        "bidder": rejected.bidder,
        "imp_id": own.get("impid"),
        "bidid": own.get("id"),
        "price": rejected.price,
        "currency": rejected.currency,
        "deal": own.get("dealid") or None,
        "media_type": rejected.typed.bid_type or None,
        "won": False,
        "rejected_reason": rejected.reason,
    }


def adapter_entries(details: AuctionDetails) -> list[dict[str, Any]]:
    """One entry per bidder asked: ``status`` ok (it has bids in the auction), nobid, error or
    timeout; its time; how many of its bids entered the auction; its first errors."""
    entries: list[dict[str, Any]] = []
    for outcome, accepted, errors, _seen in details.bidders:
        if accepted:
            status = "ok"
        elif any(error.code == ErrorCode.TIMEOUT for error in errors):
            status = "timeout"
        else:
            status = "error" if errors else "nobid"
        entries.append({
            "bidder": outcome.bidder.name,
            "status": status,
            "time_ms": outcome.elapsed_ms,
            "bids": len(accepted),
            "scrubbed": list(outcome.bidder.privacy.scrubbed),
            "errors": [
                {"code": int(error.code), "message": error.message[:MAX_ERROR_MESSAGE]}
                for error in errors[:MAX_ADAPTER_ERRORS]
            ],
        })
    return entries
