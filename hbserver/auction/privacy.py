"""Privacy per bidder in an auction: what a bidder may see of the user.

- GDPR in scope (``regs.gdpr`` = 1, or absent with ``gdpr.default_value: "1"``) and no consent for
  the bidder (purpose 1 and vendor consent for its ``gvl_vendor_id``, as for syncs; an empty or
  malformed string is no consent): user ids, ``buyeruid``, EIDs and device ids are removed, the
  IP is truncated (IPv4 /24, IPv6 /56) and geo rounded to two decimals (PBS-Go's scrubber).
- US Privacy opt-out of sale with ``ccpa.enforce``: the same scrub.
- COPPA (``regs.coppa`` = 1): the same, plus ``yob``/``gender`` and the whole precise geo.

Account activity controls (``privacy.allowactivities``, component type ``bidder``, PBS-Go's
``applyPrivacy``): ``fetchBids`` denied keeps the bidder out of the auction (the split's job);
``transmitUfpd`` denied removes the user's first-party data and device ids; ``transmitEids``
denied removes EIDs; ``transmitPreciseGeo`` denied truncates the IP and rounds geo as above;
``transmitTid`` denied removes ``source.tid`` and ``imp[].ext.tid``.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any

from hbserver.privacy.activity import COMPONENT_BIDDER, ActivityControl
from hbserver.privacy.ccpa import parse_us_privacy
from hbserver.privacy.enforcement import allow_bidder_sync
from hbserver.privacy.gvl import GlobalVendorList

DEVICE_IDS = ("ifa", "didsha1", "didmd5", "dpidsha1", "dpidmd5", "macsha1", "macmd5")
USER_IDS = ("id", "buyeruid", "eids")
USER_IDS_COPPA = (*USER_IDS, "yob", "gender")
USER_FPD = ("id", "buyeruid", "yob", "gender", "keywords", "kwarray", "data", "eids")
FETCH_BIDS = "fetchBids"
TRANSMIT_UFPD = "transmitUfpd"
TRANSMIT_EIDS = "transmitEids"
TRANSMIT_PRECISE_GEO = "transmitPreciseGeo"
TRANSMIT_TID = "transmitTid"
IPV4_KEEP_BITS = 24
IPV6_KEEP_BITS = 56


@dataclass(frozen=True, slots=True)
class AuctionPrivacy:
    """The request's privacy signals, read once per auction."""

    gdpr_applies: bool
    consent: str
    ccpa_opt_out: bool
    coppa: bool

    @property
    def any(self) -> bool:
        return self.gdpr_applies or self.ccpa_opt_out or self.coppa


def read_privacy(request: dict[str, Any], gdpr_enabled: bool, gdpr_default: str, enforce_ccpa: bool) -> AuctionPrivacy:
    """Signals from a request in 2.6 places (after :func:`hbserver.auction.ortb.upconvert`)."""
    regs = request.get("regs") or {}
    user = request.get("user") or {}
    signal = regs.get("gdpr")
    applies = gdpr_enabled and (signal == 1 or (signal is None and gdpr_default == "1"))
    consent = user.get("consent") if isinstance(user.get("consent"), str) else ""
    opt_out = False
    usp = regs.get("us_privacy")
    if enforce_ccpa and isinstance(usp, str) and usp:
        try:
            opt_out = parse_us_privacy(usp).opt_out_sale
        except ValueError:
            opt_out = False
    return AuctionPrivacy(applies, consent or "", opt_out, regs.get("coppa") == 1)


def must_scrub(privacy: AuctionPrivacy, vendor_id: int, gvl: GlobalVendorList | None) -> bool:
    if privacy.coppa or privacy.ccpa_opt_out:
        return True
    if privacy.gdpr_applies:
        return not allow_bidder_sync(privacy.consent, vendor_id, gvl)
    return False


def scrub(request: dict[str, Any], coppa: bool) -> None:
    """Remove what identifies the user from a bidder's own copy of the request (copies nested objects)."""
    _drop_user_fields(request, USER_IDS_COPPA if coppa else USER_IDS, ("eids",))
    if isinstance(request.get("device"), dict):
        request["device"] = _without(request["device"], DEVICE_IDS)
    _mask_location(request, full=coppa)


def apply_activities(request: dict[str, Any], activities: ActivityControl, bidder: str) -> None:
    """What the account's activity controls deny ``bidder`` to see, removed from its own copy."""
    if not activities.allowed(TRANSMIT_UFPD, COMPONENT_BIDDER, bidder):
        _scrub_user_fpd(request)
    elif not activities.allowed(TRANSMIT_EIDS, COMPONENT_BIDDER, bidder):
        _scrub_eids(request)
    if not activities.allowed(TRANSMIT_PRECISE_GEO, COMPONENT_BIDDER, bidder):
        _mask_location(request, full=False)
    if not activities.allowed(TRANSMIT_TID, COMPONENT_BIDDER, bidder):
        _scrub_tids(request)


def _without(value: Any, keys: tuple[str, ...]) -> Any:
    return {k: v for k, v in value.items() if k not in keys} if isinstance(value, dict) else value


def _drop_user_fields(request: dict[str, Any], keys: tuple[str, ...], ext_keys: tuple[str, ...]) -> None:
    """``user`` without ``keys`` and ``user.ext`` without ``ext_keys`` (both copied)."""
    user = request.get("user")
    if isinstance(user, dict):
        user = _without(user, keys)
        if isinstance(user.get("ext"), dict):
            user["ext"] = _without(user["ext"], ext_keys)
        request["user"] = user


def _scrub_user_fpd(request: dict[str, Any]) -> None:
    _drop_user_fields(request, USER_FPD, ("data", "eids"))
    if isinstance(request.get("device"), dict):
        request["device"] = _without(request["device"], DEVICE_IDS)


def _scrub_eids(request: dict[str, Any]) -> None:
    _drop_user_fields(request, ("eids",), ("eids",))


def _mask_location(request: dict[str, Any], full: bool) -> None:
    """IP addresses truncated; geo rounded to two decimals, or (``full``) without any precise field."""
    device = request.get("device")
    if isinstance(device, dict):
        device = dict(device)
        for key in ("ip", "ipv6"):
            if isinstance(device.get(key), str):
                device[key] = mask_ip(device[key])
        if isinstance(device.get("geo"), dict):
            device["geo"] = _geo(device["geo"], full)
        request["device"] = device
    user = request.get("user")
    if isinstance(user, dict) and isinstance(user.get("geo"), dict):
        request["user"] = {**user, "geo": _geo(user["geo"], full)}


def _scrub_tids(request: dict[str, Any]) -> None:
    source = request.get("source")
    if isinstance(source, dict) and "tid" in source:
        request["source"] = _without(source, ("tid",))
    imps = request.get("imp")
    if isinstance(imps, list) and any(isinstance(imp.get("ext"), dict) and "tid" in imp["ext"] for imp in imps):
        request["imp"] = [
            {**imp, "ext": _without(imp["ext"], ("tid",))} if isinstance(imp.get("ext"), dict) else imp
            for imp in imps
        ]


def _geo(geo: dict[str, Any], full: bool) -> dict[str, Any]:
    geo = dict(geo)
    if full:
        for key in ("lat", "lon", "metro", "city", "zip"):
            geo.pop(key, None)
        return geo
    for key in ("lat", "lon"):
        value = geo.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            geo[key] = round(value, 2)
    return geo


def mask_ip(value: str) -> str:
    """``value`` with all but its first bits zeroed (IPv4 keeps 24, IPv6 56); not an address -> ""."""
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        return ""
    keep = IPV4_KEEP_BITS if address.version == 4 else IPV6_KEEP_BITS
    network = ipaddress.ip_network(f"{address}/{keep}", strict=False)
    return str(network.network_address)
