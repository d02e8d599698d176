"""Privacy per bidder in an auction: who is asked, and what each bidder may see of the user.

Follows PBS-Go's ``cleanOpenRTBRequests`` / ``isBidderBlockedByPrivacy`` / ``applyPrivacy``
(``exchange/utils.go``) with the scrubbers of ``privacy/scrubber.go``:

- **Who is asked.** The account's ``fetchBids`` activity, then TCF purpose 2 (basic ads) for the
  bidder's GVL vendor id when GDPR is enforced for the request (:mod:`hbserver.privacy.permissions`).
- **Ids.** ``transmitUfpd`` denied removes the user's first-party data and device ids; otherwise
  ``transmitEids`` denied (PBS-Java's activity) removes EIDs; without TCF legal basis for ids
  (purposes 2-10) device ids, ``user.id``/``buyeruid``/``yob``/``gender`` and EIDs go; a US
  Privacy opt-out of sale (CCPA enforced, bidder not in ``ext.prebid.nosale``) removes the same,
  masks the IP and rounds geo.
- **Precise geo.** ``transmitPreciseGeo`` denied, or no special feature 1 opt-in under TCF: the IP is
  masked (``privacy.ipv4/ipv6.anon_keep_bits``, 24 and 56 by default) and lat/lon rounded to two
  decimals.
- **LMT and COPPA.** ``device.lmt=1`` (with ``lmt.enforce``) and ``regs.coppa=1`` scrub device ids,
  user ids and demographics, EIDs and the IP; COPPA empties ``geo`` altogether.
- ``transmitTid`` denied removes ``source.tid`` and ``imp[].ext.tid``.
- **US states without precise geo** (hbserver's own account key
  ``privacy.geo.precise_geo_blocked_states``): a request whose ``device.geo`` is in the USA and in
  one of the listed regions reaches every bidder without ``lat``/``lon`` (device and user geo) and
  with its IPs masked as for ``transmitPreciseGeo``; country, region and metro still go.

Where PBS-Go removes only ``user.ext.eids`` (the 2.5 place), hbserver removes ``user.eids`` too: the
request is held in 2.6 places here, and the point of the scrub is that no EID reaches the bidder.
Each step is recorded as a reason (:class:`BidderPrivacy`) for warnings, metrics and analytics.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hbserver.auction.request.tids import drop_tids
from hbserver.config import Config
from hbserver.privacy.activity import COMPONENT_BIDDER, ActivityControl, ActivityRequest
from hbserver.privacy.ccpa import parse_us_privacy
from hbserver.privacy.gvl import GlobalVendorList
from hbserver.privacy.permissions import ALLOW_ALL, AuctionPermissions, GdprPermissions
from hbserver.privacy.regs import EMPTY_REGS, Regs, read_regs
from hbserver.privacy.tcf_policy import gdpr_default_applies, policy_for
from hbserver.privacy.vendorlists import VendorLists
from hbserver.stores.accounts import Account

DEVICE_IDS = ("ifa", "didsha1", "didmd5", "dpidsha1", "dpidmd5", "macsha1", "macmd5")
USER_DEMOGRAPHICS = ("id", "buyeruid", "yob", "gender")
USER_FPD = ("id", "buyeruid", "yob", "gender", "keywords", "kwarray", "data", "eids")
FETCH_BIDS = "fetchBids"
TRANSMIT_UFPD = "transmitUfpd"
TRANSMIT_EIDS = "transmitEids"
TRANSMIT_PRECISE_GEO = "transmitPreciseGeo"
TRANSMIT_TID = "transmitTid"

# Reasons, as they appear in warnings and in the analytics record.
BLOCKED_ACTIVITY = "activity fetchBids"
BLOCKED_TCF = "tcf purpose 2"
SCRUB_UFPD_ACTIVITY = "activity transmitUfpd"
SCRUB_EIDS_ACTIVITY = "activity transmitEids"
SCRUB_TCF_IDS = "tcf ids"
SCRUB_CCPA = "ccpa"
SCRUB_GEO_ACTIVITY = "activity transmitPreciseGeo"
SCRUB_TCF_GEO = "tcf special feature 1"
SCRUB_LMT = "lmt"
SCRUB_COPPA = "coppa"
SCRUB_TID_ACTIVITY = "activity transmitTid"
SCRUB_GEO_STATE = "precise_geo_blocked_states"

# PBS ChannelType names by hbserver request type.
_CHANNELS = {"amp": "amp", "openrtb2-app": "app", "openrtb2-dooh": "dooh", "openrtb2-web": "web"}


@dataclass(frozen=True, slots=True)
class BidderPrivacy:
    """What privacy did to one bidder: why it was not asked, or what was removed from its request."""

    blocked: str = ""
    scrubbed: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.blocked:
            out["blocked"] = self.blocked
        if self.scrubbed:
            out["scrubbed"] = list(self.scrubbed)
        return out


NOTHING_DONE = BidderPrivacy()


@dataclass(frozen=True, slots=True)
class AuctionPrivacy:
    """The request's privacy signals and the account's rules, read once per auction."""

    regs: Regs
    gdpr: GdprPermissions | None  # set when GDPR is enforced for this request
    ccpa_provided: bool  # a valid US Privacy string was sent
    ccpa: bool  # opt-out of sale, enforced on this channel
    nosale: frozenset[str] | None  # ext.prebid.nosale (lower case); None = none; "*" = every bidder
    lmt: bool
    coppa: bool
    activities: ActivityControl | None  # None: the account has no activity controls
    activity_request: ActivityRequest | None = None  # what gppSid/geo/gpc rules and privacy modules read
    ipv4_bits: int = 24
    ipv6_bits: int = 56
    # ext.prebid.createtids (PBS-Java) decides over the transmitTid activity; false: the auction already
    # dropped every tid (hbserver.auction.request.tids), true: no bidder's are removed
    create_tids: bool | None = None
    geo_blocked: bool = False  # device.geo is in a state of privacy.geo.precise_geo_blocked_states

    @property
    def any(self) -> bool:
        return (
            self.gdpr is not None or self.ccpa or self.lmt or self.coppa or self.activities is not None
            or self.geo_blocked
        )

    @property
    def gdpr_enforced(self) -> bool:
        return self.gdpr is not None

    def permissions(self, core: str, name: str, vendor_id: int) -> AuctionPermissions:
        gdpr = self.gdpr
        return ALLOW_ALL if gdpr is None else gdpr.auction(core, name, vendor_id)

    def blocked(self, name: str, permissions: AuctionPermissions) -> str:
        """Why ``name`` gets no request ("" = it is asked): PBS-Go's isBidderBlockedByPrivacy."""
        if self._denied(FETCH_BIDS, name):
            return BLOCKED_ACTIVITY
        if not permissions.allow_bid_request:
            return BLOCKED_TCF
        return ""

    def _denied(self, activity: str, name: str) -> bool:
        controls = self.activities
        return controls is not None and not controls.allowed(
            activity, COMPONENT_BIDDER, name, request=self.activity_request
        )

    def ccpa_applies(self, name: str) -> bool:
        if not self.ccpa:
            return False
        nosale = self.nosale
        return nosale is None or ("*" not in nosale and name.lower() not in nosale)

    def scrub(self, request: dict[str, Any], name: str, permissions: AuctionPermissions) -> tuple[str, ...]:
        """Apply PBS-Go's applyPrivacy to one bidder's own copy; the reasons of what was removed."""
        if (
            permissions.pass_id
            and permissions.pass_geo
            and self.activities is None
            and not (self.ccpa or self.lmt or self.coppa or self.geo_blocked)
        ):
            return ()  # consent for everything: the usual GDPR request
        reasons: list[str] = []
        ccpa = self.ccpa_applies(name)
        if self._denied(TRANSMIT_UFPD, name):
            _scrub_user_fpd(request)
            reasons.append(SCRUB_UFPD_ACTIVITY)
        else:
            if self._denied(TRANSMIT_EIDS, name):
                _drop_user_fields(request, ("eids",), ("eids",))  # PBS-Java's transmitEids activity
                reasons.append(SCRUB_EIDS_ACTIVITY)
            if not permissions.pass_id:
                _scrub_ids(request)
                reasons.append(SCRUB_TCF_IDS)
            if ccpa:
                self._scrub_ids_ip_demographics(request, full_geo=False)
                reasons.append(SCRUB_CCPA)
        if self._denied(TRANSMIT_PRECISE_GEO, name):
            self._mask_location(request)
            reasons.append(SCRUB_GEO_ACTIVITY)
        elif not permissions.pass_geo:
            self._mask_location(request)
            reasons.append(SCRUB_TCF_GEO)
        if self.geo_blocked:
            self._drop_precise_geo(request)
            reasons.append(SCRUB_GEO_STATE)
        if self.lmt or self.coppa:
            self._scrub_ids_ip_demographics(request, full_geo=self.coppa)
            reasons.append(SCRUB_COPPA if self.coppa else SCRUB_LMT)
        if self.create_tids is None and self._denied(TRANSMIT_TID, name):
            drop_tids(request)
            reasons.append(SCRUB_TID_ACTIVITY)
        return tuple(reasons)

    def _scrub_ids_ip_demographics(self, request: dict[str, Any], full_geo: bool) -> None:
        """PBS-Go ScrubDeviceIDsIPsUserDemoExt(..., "eids", full_geo)."""
        _drop_user_fields(request, (*USER_DEMOGRAPHICS, "eids"), ("eids",))
        device = request.get("device")
        if isinstance(device, dict):
            device = {k: v for k, v in device.items() if k not in DEVICE_IDS}
            self._mask_ips(device)
            request["device"] = device
        _scrub_geo(request, full_geo)

    def _mask_location(self, request: dict[str, Any]) -> None:
        """PBS-Go ScrubGeoAndDeviceIP: IPs masked, lat/lon rounded to two decimals."""
        device = request.get("device")
        if isinstance(device, dict):
            device = dict(device)
            self._mask_ips(device)
            request["device"] = device
        _scrub_geo(request, full=False)

    def _drop_precise_geo(self, request: dict[str, Any]) -> None:
        """IPs masked and no ``lat``/``lon``: the request's coarse geo (country, region, metro) stays."""
        device = request.get("device")
        if isinstance(device, dict):
            device = dict(device)
            self._mask_ips(device)
            request["device"] = device
        for holder_key in ("device", "user"):
            holder = request.get(holder_key)
            geo = holder.get("geo") if isinstance(holder, dict) else None
            if isinstance(geo, dict) and ("lat" in geo or "lon" in geo):
                request[holder_key] = {**holder, "geo": _without(geo, ("lat", "lon"))}

    def _mask_ips(self, device: dict[str, Any]) -> None:
        if isinstance(device.get("ip"), str):
            device["ip"] = mask_ip(device["ip"], self.ipv4_bits, self.ipv6_bits)
        if isinstance(device.get("ipv6"), str):
            device["ipv6"] = mask_ip(device["ipv6"], self.ipv4_bits, self.ipv6_bits)


def read_privacy(
    request: dict[str, Any],
    config: Config,
    account: Account,
    request_type: str,
    gvl: GlobalVendorList | VendorLists | None,
) -> AuctionPrivacy:
    """The auction's privacy: signals of a request in 2.6 places and the host's and account's rules.

    Raises :class:`hbserver.privacy.regs.RegsError` (a 400) for a privacy field of the wrong type."""
    regs = read_regs(request) if ("regs" in request or "user" in request) else EMPTY_REGS
    settings = account.settings
    channel = _CHANNELS.get(request_type, "web")
    gdpr = None
    if config.gdpr.enabled:
        policy = policy_for(config.gdpr, settings.gdpr)
        signal = regs.gdpr_signal
        applies = signal == 1 or (
            signal == -1 and gdpr_default_applies(request, config.gdpr.default_value, policy.eea_countries)
        )
        if applies and policy.channel_enabled(channel):
            gdpr = GdprPermissions(
                policy,
                regs.consent,
                gvl=gvl,
                alias_gvl_ids=_alias_gvl_ids(request),
                publisher_id=account.id,  # PBS-Go's PubID: the account id
                non_standard_publishers=policy.non_standard_publishers,
            )
    ccpa_provided = False
    opt_out = False
    if regs.us_privacy:
        try:
            opt_out = parse_us_privacy(regs.us_privacy).opt_out_sale
            ccpa_provided = True
        except ValueError:
            pass
    ccpa = opt_out and _ccpa_enabled(config, settings.ccpa, channel)
    device = request.get("device")
    lmt = config.lmt.enforce and isinstance(device, dict) and device.get("lmt") == 1
    controls = account.activities if account.activities.any() else None
    activity_request = (
        ActivityRequest.from_request(request, regs) if controls is not None and controls.uses_request() else None
    )
    return AuctionPrivacy(
        regs=regs,
        gdpr=gdpr,
        ccpa_provided=ccpa_provided,
        ccpa=ccpa,
        nosale=_nosale(request) if ccpa else None,
        lmt=lmt,
        coppa=regs.coppa,
        activities=controls,
        activity_request=activity_request,
        ipv4_bits=settings.privacy.ipv4.anon_keep_bits,
        ipv6_bits=settings.privacy.ipv6.anon_keep_bits,
        create_tids=_create_tids(request),
        geo_blocked=_geo_blocked(request, settings.privacy.geo.precise_geo_blocked_states),
    )


def _geo_blocked(request: dict[str, Any], states: list[str]) -> bool:
    """``device.geo`` is a US state of ``states`` (region compared case-insensitively)."""
    if not states:
        return False
    device = request.get("device")
    geo = device.get("geo") if isinstance(device, dict) else None
    if not isinstance(geo, dict):
        return False
    country, region = geo.get("country"), geo.get("region")
    if not isinstance(country, str) or country.upper() not in ("USA", "US") or not isinstance(region, str):
        return False
    region = region.upper()
    return any(region == state.upper() for state in states)


def _create_tids(request: dict[str, Any]) -> bool | None:
    ext = request.get("ext")
    prebid = ext.get("prebid") if isinstance(ext, dict) else None
    value = prebid.get("createtids") if isinstance(prebid, dict) else None
    return value if isinstance(value, bool) else None


def _ccpa_enabled(config: Config, account_ccpa: Any, channel: str) -> bool:
    """PBS-Go ccpaEnabled: the account's channel switch, else its ``enabled``, else ``ccpa.enforce``."""
    by_channel = getattr(account_ccpa.channel_enabled, channel, None)
    if by_channel is None:
        by_channel = getattr(account_ccpa.integration_enabled, channel, None)
    if by_channel is not None:
        return bool(by_channel)
    if account_ccpa.enabled is not None:
        return bool(account_ccpa.enabled)
    return config.ccpa.enforce


def _prebid(request: dict[str, Any]) -> Mapping[str, Any]:
    ext = request.get("ext")
    prebid = ext.get("prebid") if isinstance(ext, dict) else None
    return prebid if isinstance(prebid, dict) else {}


def _alias_gvl_ids(request: dict[str, Any]) -> dict[str, int]:
    ids = _prebid(request).get("aliasgvlids")
    if not isinstance(ids, dict):
        return {}
    return {str(k): v for k, v in ids.items() if isinstance(v, int) and not isinstance(v, bool)}


def _nosale(request: dict[str, Any]) -> frozenset[str] | None:
    nosale = _prebid(request).get("nosale")
    if not isinstance(nosale, list) or not nosale:
        return None
    return frozenset(str(b).lower() for b in nosale if isinstance(b, str))


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


def _drop_device_ids(request: dict[str, Any]) -> None:
    if isinstance(request.get("device"), dict):
        request["device"] = _without(request["device"], DEVICE_IDS)


def _scrub_user_fpd(request: dict[str, Any]) -> None:
    """PBS-Go ScrubUserFPD: device ids, user ids, demographics, keywords, data and EIDs."""
    _drop_user_fields(request, USER_FPD, ("data", "eids"))
    _drop_device_ids(request)


def _scrub_ids(request: dict[str, Any]) -> None:
    """PBS-Go ScrubGdprID: device ids, user id/buyeruid/yob/gender and EIDs."""
    _drop_user_fields(request, (*USER_DEMOGRAPHICS, "eids"), ("eids",))
    _drop_device_ids(request)


def _scrub_geo(request: dict[str, Any], full: bool) -> None:
    for holder_key in ("device", "user"):
        holder = request.get(holder_key)
        if isinstance(holder, dict) and isinstance(holder.get("geo"), dict):
            request[holder_key] = {**holder, "geo": {} if full else _rounded(holder["geo"])}


def _rounded(geo: dict[str, Any]) -> dict[str, Any]:
    """lat/lon rounded half up to two decimals, as PBS-Go's scrubGeoPrecision."""
    geo = dict(geo)
    for key in ("lat", "lon"):
        value = geo.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            geo[key] = int(value * 100.0 + 0.5) / 100.0
    return geo


def mask_ip(value: str, ipv4_bits: int = 24, ipv6_bits: int = 56) -> str:
    """``value`` with all but its first bits zeroed (IPv4 keeps ``ipv4_bits``, IPv6 ``ipv6_bits``);
    not an address -> ""."""
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        return ""
    keep = ipv4_bits if address.version == 4 else ipv6_bits
    network = ipaddress.ip_network(f"{address}/{keep}", strict=False)
    return str(network.network_address)
