"""Privacy per bidder in an auction: what a bidder may see of the user.

- GDPR in scope (``regs.gdpr`` = 1, or absent with ``gdpr.default_value: "1"``) and no consent for
  the bidder (purpose 1 and vendor consent for its ``gvl_vendor_id``, as for syncs; an empty or
  malformed string is no consent): user ids, ``buyeruid``, EIDs and device ids are removed, the
  IP is truncated (IPv4 /24, IPv6 /56) and geo rounded to two decimals (PBS-Go's scrubber).
- US Privacy opt-out of sale with ``ccpa.enforce``: the same scrub.
- COPPA (``regs.coppa`` = 1): the same, plus ``yob``/``gender`` and the whole precise geo.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any

from hbserver.privacy.ccpa import parse_us_privacy
from hbserver.privacy.enforcement import allow_bidder_sync
from hbserver.privacy.gvl import GlobalVendorList

DEVICE_IDS = ("ifa", "didsha1", "didmd5", "dpidsha1", "dpidmd5", "macsha1", "macmd5")
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
    user = request.get("user")
    if isinstance(user, dict):
        user = dict(user)
        for key in ("id", "buyeruid", "eids"):
            user.pop(key, None)
        if isinstance(user.get("ext"), dict) and "eids" in user["ext"]:
            user["ext"] = {k: v for k, v in user["ext"].items() if k != "eids"}
        if coppa:
            user.pop("yob", None)
            user.pop("gender", None)
        if isinstance(user.get("geo"), dict):
            user["geo"] = _geo(user["geo"], coppa)
        request["user"] = user
    device = request.get("device")
    if isinstance(device, dict):
        device = dict(device)
        for key in DEVICE_IDS:
            device.pop(key, None)
        if isinstance(device.get("ip"), str):
            device["ip"] = mask_ip(device["ip"])
        if isinstance(device.get("ipv6"), str):
            device["ipv6"] = mask_ip(device["ipv6"])
        if isinstance(device.get("geo"), dict):
            device["geo"] = _geo(device["geo"], coppa)
        request["device"] = device


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
