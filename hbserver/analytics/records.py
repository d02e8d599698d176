"""Builders for analytics records (CONTRACT §5): plain dicts with ``event`` and ``ts``."""

from __future__ import annotations

import time
from typing import Any

from hbserver.events import EventRequest

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


def notification_record(event: EventRequest, now: float | None = None) -> dict[str, Any]:
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


def auction_record(status: int, account: str, bidders: list[str], bids: int, errors: list[str]) -> dict[str, Any]:
    """One /openrtb2/auction call: the account, the bidders asked, how many bids came back."""
    return {
        "event": "auction",
        "ts": rfc3339_utc(time.time()),
        "status": status,
        "account": account,
        "bidders": bidders,
        "bids": bids,
        "errors": errors,
    }


def amp_record(status: int, account: str, bidders: list[str], bids: int, errors: list[str]) -> dict[str, Any]:
    """One /openrtb2/amp call, shaped like the auction record."""
    return {**auction_record(status, account, bidders, bids, errors), "event": "amp"}
