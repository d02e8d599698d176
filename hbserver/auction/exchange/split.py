"""One OpenRTB request per bidder (PBS-Go ``cleanOpenRTBRequests``, reference §3.2, §3.12).

Each bidder gets its imps with ``imp.ext = {"bidder": <its params>, "prebid": {allowed fields},
<other non-bidder keys>}``, a request ``ext.prebid`` holding only what bidders may see,
``user.buyeruid`` from ``user.ext.prebid.buyeruids`` or the ``uids`` cookie, privacy applied and
its OpenRTB version's field places. Copies are shallow and made only where something changes,
so a bidder's request shares untouched objects with the original: adapters must not mutate.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hbserver.auction.common.mergepatch import merge_patch
from hbserver.auction.exchange.capabilities import fit_imps, preferred_media_type, request_channel
from hbserver.auction.exchange.fpd import BidderData
from hbserver.auction.exchange.privacy import NOTHING_DONE, AuctionPrivacy, BidderPrivacy
from hbserver.auction.request.ortb import DownconvertMemo, downconvert, has_26_fields
from hbserver.auction.request.validate import ResolvedBidder, Validated
from hbserver.bidders.registry import Bidder
from hbserver.floors.enforce import adjust_floors_for_bidder
from hbserver.privacy.regs import legacy_from_gpp

IMP_PREBID_ALLOWED = ("is_rewarded_inventory", "options")
# request.ext.prebid fields a bidder sees (the rest - targeting, cache, storedrequest... - is the exchange's)
# alternatebiddercodes and multibid are each bidder's own part (split_request's bidder_prebid)
REQUEST_PREBID_KEPT = ("channel", "currency", "debug", "integration", "sdk", "server")
APP_CHANNEL = {"name": "app", "version": ""}  # an app request without a channel has this one


@dataclass(slots=True)
class BidderRequest:
    name: str  # as spelled in the request
    resolved: ResolvedBidder
    request: dict[str, Any]
    privacy: BidderPrivacy  # what privacy removed from its request
    buyeruid_scrubbed: bool = False  # it had a buyeruid that privacy removed (PBS-Go's metric)


def split_request(
    request: dict[str, Any],
    validated: Validated,
    cookie_uids: Mapping[str, str],
    privacy: AuctionPrivacy,
    blocked: dict[str, BidderPrivacy] | None = None,
    notices: dict[str, list[str]] | None = None,
    bidder_data: BidderData | None = None,
    bidder_prebid: Callable[[str], dict[str, Any] | None] | None = None,
    floor_factor: Callable[[str], float] | None = None,
    server: dict[str, Any] | None = None,
    account_preferred: Mapping[str, str] | None = None,
) -> list[BidderRequest]:
    """The per-bidder requests, in the order bidders first appear in the imps.

    A bidder privacy keeps out of the auction (the account's ``fetchBids`` activity, TCF purpose 2)
    gets no request; ``blocked[name]`` says why. The others get their own copy with what privacy
    allows them to see (:meth:`AuctionPrivacy.scrub`).
    Each bidder's imps keep only the media types its capabilities allow on the request's channel
    (``capabilities.fit_imps``); what that removed goes to ``notices[name]`` as warnings.
    ``bidder_prebid(name)``: keys of that bidder's own ``ext.prebid`` (its alternatebiddercodes, multibid).
    ``floor_factor(name)``: its bid adjustment factor, which its imps' floors are divided by (PBS-Go's
    applyBidAdjustmentToFloor, with the account's ``price_floors.adjust_for_bid_adjustment``).
    ``server``: the host's ``ext.prebid.server`` (:func:`~hbserver.auction.exchange.server_ext.server_ext`),
    in place of the request's own. ``account_preferred``: the account's ``preferredmediatype`` (bidder ->
    media type), for a bidder without multi-format support whose ``biddercontrols`` name none.
    """
    split = _Split(request, validated, privacy, bidder_data is not None, server)
    out = []
    for name, resolved in validated.bidders.items():
        bidder_imps = split.imps_of(name)
        if not bidder_imps:
            continue
        bidder = resolved.bidder
        permissions = None
        if split.guarded:
            permissions = privacy.permissions(bidder.code, name, bidder.gvl_vendor_id)
            reason = privacy.blocked(name, permissions)
            if reason:
                if blocked is not None:
                    blocked[name] = BidderPrivacy(blocked=reason)
                continue
        bidder_imps, dropped = fit_imps(
            bidder_imps, bidder.media_types, split.channel, bidder.multiformat_supported,
            "" if bidder.multiformat_supported else _preferred(split.prebid, name, account_preferred),
        )  # fmt: skip
        if dropped and notices is not None:
            notices.setdefault(name, []).extend(dropped)
        if not bidder_imps:
            continue
        if floor_factor is not None:
            bidder_imps = adjust_floors_for_bidder(bidder_imps, floor_factor(name))
        own_prebid = bidder_prebid(name) if bidder_prebid else None
        own = split.request_for(name, resolved, bidder_imps, own_prebid, cookie_uids)
        if bidder_data is not None:  # schain, EID permissions, FPD per bidder (hbserver.auction.exchange.fpd)
            bidder_data.apply(own, name)
        out.append(split.finished(name, resolved, own, permissions))
    return out


def _preferred(prebid: Mapping[str, Any], name: str, account: Mapping[str, str] | None) -> str:
    """PBS-Go ``getBidderPreferredMediaTypeMap``: the request's ``prefmtype``, else the account's."""
    return preferred_media_type(prebid, name) or (account.get(name, "") if account else "")


class _Split:
    """What every bidder's request shares, worked out once per auction, and the steps of one bidder's."""

    def __init__(
        self,
        request: dict[str, Any],
        validated: Validated,
        privacy: AuctionPrivacy,
        has_data: bool,
        server: dict[str, Any] | None = None,
    ) -> None:
        self.request = request
        self.validated = validated
        self.privacy = privacy
        self.guarded = privacy.any
        imps: list[dict[str, Any]] = request["imp"]
        ext = request.get("ext") or {}
        self.prebid = ext.get("prebid") or {}
        user = request.get("user") if isinstance(request.get("user"), dict) else None
        self.explicit_uids = _explicit_buyeruids(user)
        self.user_without_uids = _without_buyeruids(user) if self.explicit_uids is not None else user
        all_bidders = {name for bidders in validated.imp_bidders for name in bidders}
        legacy_keys = {key for imp in imps for key in (imp.get("ext") or {}) if key in all_bidders}
        self.shared = [_ImpParts(imp, legacy_keys) for imp in imps]
        self.shared_ext = _SharedExt(ext, self.prebid, server, request.get("app") is not None)
        # 2.5 bidders get 2.6 fields moved; most requests have none (a bidder's imp FPD might add rwdd)
        self.needs_downconvert = (
            has_26_fields(request) or any(parts.fpd is not None for parts in self.shared) or has_data
        )  # has_data: schains, bidderconfig FPD
        self.channel = request_channel(request)
        self.memo: DownconvertMemo = {}  # regs/user/source converted to 2.5 once, shared by the 2.5 bidders

    def imps_of(self, name: str) -> list[dict[str, Any]]:
        return [
            parts.for_bidder(name, bidders[name])
            for parts, bidders in zip(self.shared, self.validated.imp_bidders, strict=True)
            if name in bidders
        ]

    def request_for(
        self,
        name: str,
        resolved: ResolvedBidder,
        imps: list[dict[str, Any]],
        own_prebid: dict[str, Any] | None,
        cookie_uids: Mapping[str, str],
    ) -> dict[str, Any]:
        """The bidder's own copy: its imps, its ``ext``, its user and buyeruid."""
        own = dict(self.request)
        own["imp"] = imps
        own_ext = self.shared_ext.for_bidder(name, self.validated.aliases, own_prebid)
        if own_ext:
            own["ext"] = own_ext
        else:
            own.pop("ext", None)
        user_without_uids = self.user_without_uids
        if user_without_uids is not None:
            own["user"] = user_without_uids
        uid = _buyeruid(name, resolved, self.explicit_uids, cookie_uids)
        if uid and not (user_without_uids or {}).get("buyeruid"):
            own["user"] = {**(user_without_uids or {}), "buyeruid": uid}
        return own

    def finished(
        self, name: str, resolved: ResolvedBidder, own: dict[str, Any], permissions: Any
    ) -> BidderRequest:
        """Privacy's scrub, the GPP legacy fields for a bidder without GPP, the 2.5 down-conversion."""
        privacy = self.privacy
        done = NOTHING_DONE
        uid_removed = False
        if self.guarded:
            had_uid = _has_buyeruid(own)
            reasons = privacy.scrub(own, name, permissions)
            if reasons:
                done = BidderPrivacy(scrubbed=reasons)
                uid_removed = had_uid and not _has_buyeruid(own)
        convert = self.needs_downconvert
        bidder = resolved.bidder
        if privacy.regs.gpp is not None and not bidder.gpp_supported:
            legacy = legacy_from_gpp(own, privacy.regs)
            if legacy is not None:  # regs.gdpr, user.consent, regs.us_privacy filled in from GPP
                own = legacy
                convert = True
        if convert and not takes_26(name, bidder):
            downconvert(own, self.memo)
        return BidderRequest(name, resolved, own, done, uid_removed)


def takes_26(name: str, bidder: Bidder) -> bool:
    """Does the bidder named ``name`` in the request get OpenRTB 2.6 places?

    PBS-Go (``exchange/utils.go``, ``cleanOpenRTBRequests``) looks the bidder-info up by the name as
    the request spells it and down-converts unless that entry declares ``openrtb.version: 2.6``: a
    request alias (``ext.prebid.aliases``) or another spelling of a bidder's code has no entry and
    gets 2.5, whatever its core bidder declares. A host or definition alias is an entry of its own.
    """
    return bidder.openrtb_version == "2.6" and name == bidder.code


class _ImpParts:
    """What every bidder's copy of one imp shares, worked out once per auction."""

    __slots__ = ("ext_rest", "fpd", "imp", "kept")

    def __init__(self, imp: dict[str, Any], legacy_keys: set[str]) -> None:
        self.imp = imp
        ext = imp.get("ext") or {}
        imp_prebid = ext.get("prebid") if isinstance(ext.get("prebid"), dict) else {}
        # imp.ext.prebid fields bidders may see, then the other non-bidder imp.ext keys
        self.kept = {key: imp_prebid[key] for key in IMP_PREBID_ALLOWED if key in imp_prebid}
        self.ext_rest = [
            (key, value) for key, value in ext.items() if key != "prebid" and key != "bidder" and key not in legacy_keys
        ]
        fpd = imp_prebid.get("imp")
        self.fpd: dict[str, Any] | None = fpd if isinstance(fpd, dict) and fpd else None

    def for_bidder(self, name: str, params: Any) -> dict[str, Any]:
        new_ext: dict[str, Any] = {"bidder": params}
        if self.kept:
            new_ext["prebid"] = self.kept
        for key, value in self.ext_rest:
            new_ext[key] = value
        new_imp = dict(self.imp)
        new_imp["ext"] = new_ext
        bidder_fpd = self.fpd.get(name) if self.fpd is not None else None
        if isinstance(bidder_fpd, dict):
            new_imp = merge_patch(new_imp, bidder_fpd)
        return new_imp


class _SharedExt:
    """The request ``ext`` every bidder sees, worked out once per auction; :meth:`for_bidder` adds its own."""

    __slots__ = ("bidderparams", "brand_category", "kept", "rest")

    def __init__(
        self, ext: dict[str, Any], prebid: dict[str, Any], server: dict[str, Any] | None = None, app: bool = False
    ) -> None:
        self.kept = [(key, prebid[key]) for key in REQUEST_PREBID_KEPT if key in prebid]
        if app and prebid.get("channel") is None:  # PBS-Go's fillChannel (endpoints/openrtb2/auction.go)
            self.kept = [item for item in self.kept if item[0] != "channel"]
            self.kept.append(("channel", APP_CHANNEL))
        if server is not None:  # the host's replaces the request's (PBS-Go's HoldAuction)
            self.kept = [item for item in self.kept if item[0] != "server"]
            self.kept.append(("server", server))
        params = prebid.get("bidderparams")
        self.bidderparams: dict[str, Any] = params if isinstance(params, dict) else {}
        targeting = prebid.get("targeting")
        self.brand_category = (
            {"includebrandcategory": targeting["includebrandcategory"]}
            if isinstance(targeting, dict) and "includebrandcategory" in targeting
            else None
        )
        self.rest = [(key, value) for key, value in ext.items() if key != "prebid"]

    def for_bidder(self, name: str, aliases: dict[str, str], own: dict[str, Any] | None = None) -> dict[str, Any]:
        new_prebid = dict(self.kept)
        if own:
            new_prebid.update(own)
        params = self.bidderparams.get(name)
        if params is not None:
            new_prebid["bidderparams"] = {name: params}
        if name in aliases:
            new_prebid["aliases"] = {name: aliases[name]}
        if self.brand_category is not None:
            new_prebid["targeting"] = self.brand_category
        new_ext = dict(self.rest)
        if new_prebid:
            new_ext["prebid"] = new_prebid
        return new_ext


def _has_buyeruid(request: dict[str, Any]) -> bool:
    user = request.get("user")
    return isinstance(user, dict) and bool(user.get("buyeruid"))


def _explicit_buyeruids(user: dict[str, Any] | None) -> dict[str, str] | None:
    if user is None or not isinstance(user.get("ext"), dict):
        return None
    prebid = user["ext"].get("prebid")
    if not isinstance(prebid, dict) or not isinstance(prebid.get("buyeruids"), dict):
        return None
    return {str(k).lower(): v for k, v in prebid["buyeruids"].items() if isinstance(v, str)}


def _without_buyeruids(user: dict[str, Any] | None) -> dict[str, Any] | None:
    if user is None:
        return None
    user_ext = dict(user["ext"])
    prebid = {k: v for k, v in user_ext["prebid"].items() if k != "buyeruids"}
    if prebid:
        user_ext["prebid"] = prebid
    else:
        del user_ext["prebid"]
    new_user = dict(user)
    if user_ext:
        new_user["ext"] = user_ext
    else:
        del new_user["ext"]
    return new_user


def _buyeruid(
    name: str, resolved: ResolvedBidder, explicit: dict[str, str] | None, cookie_uids: Mapping[str, str]
) -> str:
    """``user.ext.prebid.buyeruids[<name>]`` (case-insensitive), else the cookie's uid under the core
    bidder's syncer key; expired uids still count (PBS)."""
    if explicit:
        uid = explicit.get(name.lower())
        if uid:
            return uid
    return cookie_uids.get(resolved.bidder.sync_key, "")
