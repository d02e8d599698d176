"""One OpenRTB request per bidder (PBS-Go ``cleanOpenRTBRequests``, reference §3.2, §3.12).

Each bidder gets its imps with ``imp.ext = {"bidder": <its params>, "prebid": {allowed fields},
<other non-bidder keys>}``, a request ``ext.prebid`` holding only what bidders may see,
``user.buyeruid`` from ``user.ext.prebid.buyeruids`` or the ``uids`` cookie, privacy applied and
its OpenRTB version's field places. Copies are shallow and made only where something changes,
so a bidder's request shares untouched objects with the original: adapters must not mutate.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hbserver.auction.mergepatch import merge_patch
from hbserver.auction.ortb import downconvert
from hbserver.auction.privacy import AuctionPrivacy, must_scrub, scrub
from hbserver.auction.validate import ResolvedBidder, Validated
from hbserver.privacy.gvl import GlobalVendorList

IMP_PREBID_ALLOWED = ("is_rewarded_inventory", "options")
# request.ext.prebid fields a bidder sees (the rest - targeting, cache, storedrequest... - is the exchange's)
REQUEST_PREBID_KEPT = ("channel", "currency", "debug", "integration", "sdk", "server", "alternatebiddercodes")


@dataclass(slots=True)
class BidderRequest:
    name: str  # as spelled in the request
    resolved: ResolvedBidder
    request: dict[str, Any]
    scrubbed: bool


def split_request(
    request: dict[str, Any],
    validated: Validated,
    cookie_uids: Mapping[str, str],
    privacy: AuctionPrivacy,
    gvl: GlobalVendorList | None,
) -> list[BidderRequest]:
    """The per-bidder requests, in the order bidders first appear in the imps."""
    imps: list[dict[str, Any]] = request["imp"]
    ext = request.get("ext") or {}
    prebid = ext.get("prebid") or {}
    user = request.get("user") if isinstance(request.get("user"), dict) else None
    explicit_uids = _explicit_buyeruids(user)
    user_without_uids = _without_buyeruids(user) if explicit_uids is not None else user
    all_bidders = {name for bidders in validated.imp_bidders for name in bidders}
    legacy_keys = {key for imp in imps for key in (imp.get("ext") or {}) if key in all_bidders}
    out = []
    for name, resolved in validated.bidders.items():
        bidder_imps = [
            _bidder_imp(imp, name, bidders[name], legacy_keys)
            for imp, bidders in zip(imps, validated.imp_bidders, strict=True)
            if name in bidders
        ]
        if not bidder_imps:
            continue
        own = dict(request)
        own["imp"] = bidder_imps
        own_ext = _bidder_ext(ext, prebid, name, validated.aliases)
        if own_ext:
            own["ext"] = own_ext
        else:
            own.pop("ext", None)
        if user_without_uids is not None:
            own["user"] = user_without_uids
        uid = _buyeruid(name, resolved, explicit_uids, cookie_uids)
        if uid and not (user_without_uids or {}).get("buyeruid"):
            own["user"] = {**(user_without_uids or {}), "buyeruid": uid}
        scrubbed = privacy.any and must_scrub(privacy, resolved.bidder.gvl_vendor_id, gvl)
        if scrubbed:
            scrub(own, privacy.coppa)
        if resolved.bidder.openrtb_version != "2.6":
            downconvert(own)
        out.append(BidderRequest(name, resolved, own, scrubbed))
    return out


def _bidder_imp(imp: dict[str, Any], name: str, params: Any, legacy_keys: set[str]) -> dict[str, Any]:
    ext = imp.get("ext") or {}
    new_ext: dict[str, Any] = {"bidder": params}
    imp_prebid = ext.get("prebid") if isinstance(ext.get("prebid"), dict) else {}
    kept = {key: imp_prebid[key] for key in IMP_PREBID_ALLOWED if key in imp_prebid}
    if kept:
        new_ext["prebid"] = kept
    for key, value in ext.items():
        if key != "prebid" and key not in legacy_keys and key != "bidder":
            new_ext[key] = value
    new_imp = dict(imp)
    new_imp["ext"] = new_ext
    bidder_fpd = (imp_prebid.get("imp") or {}).get(name) if isinstance(imp_prebid.get("imp"), dict) else None
    if isinstance(bidder_fpd, dict):
        new_imp = merge_patch(new_imp, bidder_fpd)
    return new_imp


def _bidder_ext(ext: dict[str, Any], prebid: dict[str, Any], name: str, aliases: dict[str, str]) -> dict[str, Any]:
    new_prebid = {key: prebid[key] for key in REQUEST_PREBID_KEPT if key in prebid}
    params = (prebid.get("bidderparams") or {}).get(name) if isinstance(prebid.get("bidderparams"), dict) else None
    if params is not None:
        new_prebid["bidderparams"] = {name: params}
    if name in aliases:
        new_prebid["aliases"] = {name: aliases[name]}
    targeting = prebid.get("targeting")
    if isinstance(targeting, dict) and "includebrandcategory" in targeting:
        new_prebid["targeting"] = {"includebrandcategory": targeting["includebrandcategory"]}
    new_ext = {key: value for key, value in ext.items() if key != "prebid"}
    if new_prebid:
        new_ext["prebid"] = new_prebid
    return new_ext


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
