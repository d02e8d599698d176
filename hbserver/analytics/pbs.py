"""PBS-Go's analytics objects (``analytics/core.go``), for the modules that send PBS-Go's payloads.

PBS-Go hands each module an ``AuctionObject``, ``AmpObject``, ``CookieSyncObject``, ``SetUIDObject`` or
``NotificationEvent``; its file logger and pubstack marshal them through structs without JSON tags, so
the keys are Go's field names (``Status``, ``Errors``, ``Request``, ``Response``, ``Account``,
``StartTime``, ``HookExecutionOutcome``; AMP: ``AuctionResponse``, ``AmpTargetingValues``, ``Origin``).
Here they are built from hbserver's record and what the auction collected (``AuctionDetails``):

- ``Errors``: one ``{"Message": text}`` per error, the shape of PBS-Go's ``errortypes`` values (null
  when there is none, as Go's nil slice);
- ``Account``: the account's settings as hbserver holds them (PBS-Go's key names), with its ``id``;
- ``StartTime``: the auction's arrival (RFC 3339, UTC); a request refused before its auction has the
  record's time;
- ``AuctionResponse`` of an AMP answer that built no OpenRTB response: the response's ``ext`` alone.

Per module (:func:`request_for`), as PBS-Go's ``analytics/build``: the request is scrubbed when the
account's ``transmitUfpd`` or ``transmitPreciseGeo`` denies the module (component type ``analytics``,
its PBS-Go name), and ``ext.prebid.analytics`` keeps only the module's own entry (none: removed).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from hbserver.auction.exchange.privacy import TRANSMIT_PRECISE_GEO, TRANSMIT_UFPD, mask_ip
from hbserver.auction.exchange.privacy import _scrub_geo as scrub_geo
from hbserver.auction.exchange.privacy import _scrub_user_fpd as scrub_user_fpd
from hbserver.auction.request.amp import amp_targeting
from hbserver.config import to_plain
from hbserver.hooks.trace import _stage_outcome as stage_outcome_json

if TYPE_CHECKING:
    from hbserver.auction.details import AuctionDetails
    from hbserver.privacy.activity import ActivityControl

COMPONENT_ANALYTICS = "analytics"
GO_ZERO_TIME = "0001-01-01T00:00:00Z"
MAX_ACCOUNTS_KEPT = 1024  # accounts' JSON kept (one per settings object); past it the memo starts again

_accounts: dict[int, tuple[Any, dict[str, Any]]] = {}


def go_time(epoch: float) -> str:
    """Go's time.Time in JSON (RFC 3339 with nanoseconds, trailing zeros cut), UTC."""
    whole = int(epoch)
    nanos = round((epoch - whole) * 1e9)
    if nanos >= 1_000_000_000:
        whole, nanos = whole + 1, nanos - 1_000_000_000
    text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
    if nanos:
        text += "." + f"{nanos:09d}".rstrip("0")
    return text + "Z"


def go_errors(errors: list[str]) -> list[dict[str, str]] | None:
    return [{"Message": text} for text in errors] or None


def account_json(account: Any) -> dict[str, Any] | None:
    """PBS-Go's ``config.Account`` of an account (hbserver.stores.accounts.Account), built once per
    settings object."""
    if account is None:
        return None
    settings = account.settings
    kept = _accounts.get(id(settings))
    if kept is not None and kept[0] is settings:
        plain = kept[1]
    else:
        if len(_accounts) >= MAX_ACCOUNTS_KEPT:
            _accounts.clear()
        plain = to_plain(settings)
        _accounts[id(settings)] = (settings, plain)
    return {"id": account.id, **plain}


def request_for(
    request: dict[str, Any] | None, component: str, activities: ActivityControl | None, account: Any
) -> dict[str, Any] | None:
    """The request a module is handed: scrubbed under the account's activities for it, and its
    ``ext.prebid.analytics`` narrowed to its own entry (PBS-Go's evaluateActivities and
    updateReqWrapperForAnalytics)."""
    if request is None:
        return None
    out = request
    if activities is not None:
        ufpd = not activities.allowed(TRANSMIT_UFPD, COMPONENT_ANALYTICS, component)
        geo = not activities.allowed(TRANSMIT_PRECISE_GEO, COMPONENT_ANALYTICS, component)
        if ufpd or geo:
            out = dict(request)
            if ufpd:
                scrub_user_fpd(out)
            if geo:
                _scrub_geo_and_ip(out, account)
    return narrowed_analytics(out, component)


def _scrub_geo_and_ip(request: dict[str, Any], account: Any) -> None:
    """PBS-Go's ScrubGeoAndDeviceIP with the account's masking bits."""
    privacy = account.settings.privacy if account is not None else None
    v4 = privacy.ipv4.anon_keep_bits if privacy is not None else 24
    v6 = privacy.ipv6.anon_keep_bits if privacy is not None else 56
    device = request.get("device")
    if isinstance(device, dict):
        device = dict(device)
        for key in ("ip", "ipv6"):
            if isinstance(device.get(key), str) and device[key]:
                device[key] = mask_ip(device[key], v4, v6)
        request["device"] = device
    scrub_geo(request, full=False)


def narrowed_analytics(request: dict[str, Any], component: str) -> dict[str, Any]:
    """``request`` with ``ext.prebid.analytics`` holding only ``component``'s entry; without one the
    object goes, and an ``ext.prebid`` (then ``ext``) left empty goes too. Copies what it changes."""
    ext = request.get("ext")
    prebid = ext.get("prebid") if isinstance(ext, dict) else None
    options = prebid.get("analytics") if isinstance(prebid, dict) else None
    if not isinstance(options, dict) or not options:
        return request
    prebid = dict(prebid)
    if component in options:
        prebid["analytics"] = {component: options[component]}
    else:
        del prebid["analytics"]
    ext = dict(ext)
    if prebid:
        ext["prebid"] = prebid
    else:
        del ext["prebid"]
    out = dict(request)
    if ext:
        out["ext"] = ext
    else:
        del out["ext"]
    return out


def _hook_outcomes(details: AuctionDetails | None) -> list[dict[str, Any]] | None:
    hooks = details.hooks if details is not None else None
    if hooks is None or not hooks.outcomes:
        return None
    return [stage_outcome_json(outcome, True) for outcome in hooks.outcomes]  # Go's Stage is json:"-"


def _start(record: dict[str, Any], details: AuctionDetails | None) -> str:
    if details is not None and details.started:
        return go_time(details.started)
    ts = record.get("ts")
    return ts if isinstance(ts, str) else GO_ZERO_TIME


def auction_object(record: dict[str, Any], details: AuctionDetails | None, request: Any) -> dict[str, Any]:
    """PBS-Go's logAuction (``/openrtb2/auction``)."""
    return {
        "Status": record["status"],
        "Errors": go_errors(record["errors"]),
        "Request": request,
        "Response": details.response if details is not None else None,
        "Account": account_json(details.account) if details is not None else None,
        "StartTime": _start(record, details),
        "HookExecutionOutcome": _hook_outcomes(details),
    }


def amp_object(record: dict[str, Any], details: AuctionDetails | None, request: Any) -> dict[str, Any]:
    """PBS-Go's logAMP (``/openrtb2/amp``)."""
    response = details.response if details is not None else None
    targeting = details.amp_targeting if details is not None else None
    if targeting is None and response is not None:
        targeting = amp_targeting(response)
    return {
        "Status": record["status"],
        "Errors": go_errors(record["errors"]),
        "Request": request,
        "AuctionResponse": response,
        "AmpTargetingValues": targeting,
        "Origin": details.origin if details is not None else "",
        "StartTime": _start(record, details),
        "HookExecutionOutcome": _hook_outcomes(details),
    }


def cookie_sync_object(record: dict[str, Any]) -> dict[str, Any]:
    """PBS-Go's logUserSync (``/cookie_sync``): each bidder as CookieSyncBidder's JSON."""
    bidders = []
    for entry in record["bidder_status"]:
        bidder: dict[str, Any] = {"bidder": entry["bidder"]}
        if entry.get("no_cookie"):
            bidder["no_cookie"] = True
        usersync = {k: v for k, v in (entry.get("usersync") or {}).items() if v}
        if usersync:
            bidder["usersync"] = usersync
        bidders.append(bidder)
    return {"Status": record["status"], "Errors": go_errors(record["errors"]), "BidderStatus": bidders}


def setuid_object(record: dict[str, Any]) -> dict[str, Any]:
    """PBS-Go's logSetUID (``/setuid``)."""
    return {
        "Status": record["status"],
        "Bidder": record["bidder"],
        "UID": record["uid"],
        "Errors": go_errors(record["errors"]),
        "Success": record["success"],
    }


def notification_object(record: dict[str, Any], account: Any) -> dict[str, Any]:
    """PBS-Go's NotificationEvent (``/event``): the EventRequest's JSON (omitempty) and the account."""
    request = {
        "type": record["type"],
        "format": record["format"],
        "analytics": "1",  # a notification recorded is one whose analytics is on
        "bidid": record["bidid"],
        "account_id": record["account"],
        "bidder": record["bidder"],
        "timestamp": record["timestamp"],
        "integration": record["integration"],
        "vtype": record.get("vtype"),
    }
    return {"request": {k: v for k, v in request.items() if v}, "account": account_json(account)}


# the record's event -> PBS-Go's request type (the file logger's "type")
REQUEST_TYPES = {
    "auction": "/openrtb2/auction",
    "amp": "/openrtb2/amp",
    "cookie_sync": "/cookie_sync",
    "setuid": "/set_uid",
    "notification": "/event",
}


def pbs_object(record: dict[str, Any], source: Any, request: Any) -> dict[str, Any] | None:
    """The PBS-Go object of an hbserver record (None for an event PBS-Go does not report: vtrack)."""
    event = record["event"]
    if event == "auction":
        return auction_object(record, source, request)
    if event == "amp":
        return amp_object(record, source, request)
    if event == "cookie_sync":
        return cookie_sync_object(record)
    if event == "setuid":
        return setuid_object(record)
    if event == "notification":
        return notification_object(record, source)
    return None
