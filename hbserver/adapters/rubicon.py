"""Rubicon (Magnite) XAPI adapter: one request per imp (per media type with ``bidonmultiformat``).

Behaviour follows PBS-Go's rubicon adapter, proven against its JSON fixtures. The request is first
read as OpenRTB 2.6 (PBS-Go converts up), then the fields XAPI wants in 2.5 places are moved back:
``regs.gdpr``/``us_privacy`` and ``source.schain`` go into their ``ext``, ``user.consent`` and
``user.eids`` into ``user.ext``. First-party data becomes XAPI targeting (``ext.rp.target``).

Host settings in ``AdapterConfig.extra``: ``xapi`` = {``username``, ``password``, ``tracker``} (Basic
auth, and ``tk_xint`` added to the endpoint's query), ``external_url`` (sent as ``pbs_url``) and
``pbs_version`` (sent as ``pbs_version``; PBS-Go's version string).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

import orjson

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    ConversionError,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
    bad_input,
)
from hbserver.adapters.common import (
    AnswerAdapter,
    AnswerWording,
    JsonShapeError,
    decode_answer,
    expect_string,
    found,
    items_of,
    optional_object,
    seat_bids,
)
from hbserver.adapters.golike import NOT_AN_OBJECT, json_number_int64, with_query_param
from hbserver.numbers import INT64, int_or

_BADV_LIMIT = 50
_ANSWER_WORDING = AnswerWording(not_an_object="Bad response body: expected a JSON object")
_SITE_SEGTAXES = frozenset((1, 2, 5, 6))
_USER_SEGTAXES = frozenset((4,))
_BANNER_EXT = {"rp": {"mime": "text/html"}}
_USER_DROPPED = ("geo", "yob", "gender", "eids", "consent")
_MEDIA = ("banner", "video", "native", "audio")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _int64(value: Any) -> int:
    """A json.Number's Int64(): an integer, or a string of one (PBS-Go accepts both)."""
    if isinstance(value, int) and not isinstance(value, bool):
        text = str(value)  # orjson reads integers up to uint64: past int64 Go refuses them too
    else:
        text = "" if value is None else value if isinstance(value, str) else orjson.dumps(value).decode()
    return json_number_int64(text)


def _small_int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _fpd_into(source: Any, target: dict[str, Any]) -> None:
    """Copy first-party-data attributes into XAPI targeting: scalars become one-string lists,
    string lists stay, bool lists become string lists; anything else is skipped."""
    data = optional_object(source, "")
    if not data:
        return
    for key, value in data.items():
        if isinstance(value, str):
            target[key] = [value]
        elif isinstance(value, bool):
            target[key] = ["true" if value else "false"]
        elif _is_number(value):
            if value == int(value):
                target[key] = [str(int(value))]
        elif isinstance(value, list):
            if not value:
                target[key] = None  # PBS-Go writes a nil slice for an empty list
            elif all(isinstance(v, str) for v in value):
                target[key] = value
            elif all(isinstance(v, bool) for v in value):
                target[key] = ["true" if v else "false" for v in value]


def _segment_ids(data: Any, segtaxes: frozenset[int]) -> list[str]:
    """Segment ids of ``data`` records whose ``ext.segtax`` is an integer in ``segtaxes``."""
    ids: list[str] = []
    for record in data if isinstance(data, list) else ():
        if not isinstance(record, dict):
            continue
        ext = record.get("ext")
        if not isinstance(ext, dict):
            continue
        segtax = ext.get("segtax")
        if isinstance(segtax, bool) or not isinstance(segtax, int) or segtax not in segtaxes:
            continue
        for segment in record.get("segment") or ():
            ids.append(segment.get("id", "") if isinstance(segment, dict) else "")
    return ids


def _ext_data(parent: Mapping[str, Any]) -> Any:
    ext = parent.get("ext")
    return ext.get("data") if isinstance(ext, dict) else None


def _existing_target(ext: Any) -> dict[str, Any]:
    rp = ext.get("rp") if isinstance(ext, dict) else None
    target = rp.get("target") if isinstance(rp, dict) else None
    return dict(optional_object(target, "") or {})


def _is_video(imp: Mapping[str, Any]) -> bool:
    video = imp.get("video")
    if video is None:
        return False
    if imp.get("banner") is None:
        return True
    # XAPI's recommended video fields: with them a banner+video imp is treated as video
    return (
        video.get("mimes") is not None
        and video.get("protocols") is not None
        and bool(video.get("maxduration"))
        and bool(video.get("linearity"))
    )


def _native_request(native: Any) -> dict[str, Any] | None:
    """The parsed native request XAPI wants beside it (None for native 1.0/1.1)."""
    if native is None:
        raise JsonShapeError("Native object is not present for request")
    if native.get("ver") in ("1.0", "1.1"):
        return None
    try:
        parsed = orjson.loads(native.get("request") or "")
    except orjson.JSONDecodeError as exc:
        raise JsonShapeError(str(exc)) from None
    if not isinstance(parsed, dict):
        raise JsonShapeError(NOT_AN_OBJECT.format(found=found(parsed)))
    if not isinstance(parsed.get("eventtrackers"), list):
        raise JsonShapeError("Eventtrackers are not present or not of array type")
    context = parsed.get("context")
    if context is not None and not _is_number(context):
        raise JsonShapeError("Context is not of int type")
    if not _is_number(parsed.get("plcmttype")):
        raise JsonShapeError("Plcmttype is not present or not of int type")
    return parsed


def _split_multiformat(imp: dict[str, Any]) -> list[dict[str, Any]]:
    """One imp per media type present, each keeping only that media object."""
    parts = []
    for kind in _MEDIA:
        if imp.get(kind) is not None:
            part = {k: v for k, v in imp.items() if k not in _MEDIA or k == kind}
            parts.append(part)
    return parts


def _bidder_ext(imp: Mapping[str, Any]) -> dict[str, Any]:
    """imp.ext read as PBS-Go's rubiconExtImpBidder, with the same type errors."""
    ext = optional_object(imp.get("ext"), "") or {}
    optional_object(ext.get("prebid"), "rubicon.rubiconExtImpBidder.Prebid")
    bidder = optional_object(ext.get("bidder"), "rubicon.rubiconExtImpBidder.Bidder") or {}
    expect_string(ext.get("gpid"), "rubicon.rubiconExtImpBidder.Gpid")
    expect_string(ext.get("tid"), "rubicon.rubiconExtImpBidder.Tid")
    video = optional_object(bidder.get("video"), "openrtb_ext.ExtImpRubicon.Video")
    debug = optional_object(bidder.get("debug"), "openrtb_ext.ExtImpRubicon.Debug")
    keywords = bidder.get("keywords")
    if keywords is not None and not (isinstance(keywords, list) and all(isinstance(k, str) for k in keywords)):
        where = "openrtb_ext.ExtImpRubicon.Keywords"
        raise JsonShapeError(f"cannot unmarshal {where}: expect [ or n, but found {found(keywords)}")
    return {"ext": ext, "bidder": bidder, "video": video or {}, "debug": debug or {}}


def _eids_and_consent(user: Mapping[str, Any]) -> tuple[Any, str]:
    """user.eids/consent after PBS-Go's up-conversion (2.6 places win over user.ext)."""
    ext = user.get("ext") if isinstance(user.get("ext"), dict) else {}
    eids = user.get("eids")
    if eids is None:
        eids = ext.get("eids")
    consent = user.get("consent") or ""
    if not consent and isinstance(ext.get("consent"), str):
        consent = ext["consent"]
    return eids, consent


def _schain(request: Mapping[str, Any]) -> Any:
    """The supply chain from its 2.6, 2.5 or 2.4 place, in that order."""
    source = request.get("source") if isinstance(request.get("source"), dict) else {}
    if source.get("schain") is not None:
        return source["schain"]
    source_ext = source.get("ext") if isinstance(source.get("ext"), dict) else {}
    if source_ext.get("schain") is not None:
        return source_ext["schain"]
    request_ext = request.get("ext") if isinstance(request.get("ext"), dict) else {}
    return request_ext.get("schain")


def _regs(regs: Any) -> Any:
    """regs with gdpr/us_privacy moved into regs.ext (XAPI reads the 2.5 places)."""
    if not isinstance(regs, dict):
        return regs
    ext = regs.get("ext") if isinstance(regs.get("ext"), dict) else {}
    gdpr = regs.get("gdpr")
    if gdpr is None:
        gdpr = ext.get("gdpr")
    usp = regs.get("us_privacy") or ext.get("us_privacy") or ""
    if gdpr is None and not usp:
        return regs
    new_ext = {key: ext[key] for key in ("dsa", "gpc") if ext.get(key) is not None}
    if gdpr is not None:
        new_ext["gdpr"] = gdpr
    if usp:
        new_ext["us_privacy"] = usp
    out = {k: v for k, v in regs.items() if k not in ("gdpr", "us_privacy")}
    out["ext"] = new_ext
    return out


def _max_bids(request: Mapping[str, Any]) -> Any:
    ext = request.get("ext")
    prebid = ext.get("prebid") if isinstance(ext, dict) else None
    multibid = prebid.get("multibid") if isinstance(prebid, dict) else None
    if not isinstance(multibid, list) or not multibid or not isinstance(multibid[0], dict):
        return None
    return multibid[0].get("maxbids")


class RubiconAdapter(AnswerAdapter):
    answer_wording = _ANSWER_WORDING

    def __init__(self, config: AdapterConfig) -> None:
        xapi = config.extra.get("xapi") or {}
        self.username = str(xapi.get("username", ""))
        password = str(xapi.get("password", ""))
        self.endpoint = config.endpoint
        self.uri = with_query_param(config.endpoint, "tk_xint", str(xapi.get("tracker", ""))) if config.endpoint else ""
        self.external_url = str(config.extra.get("external_url", ""))
        self.pbs_version = str(config.extra.get("pbs_version", ""))
        token = base64.b64encode(f"{self.username}:{password}".encode()).decode()
        self.headers = {
            "Content-Type": "application/json;charset=utf-8",
            "Accept": "application/json",
            "User-Agent": "prebid-server/1.0",
            "Authorization": f"Basic {token}",
        }

    # --- requests ---------------------------------------------------------------------------

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        if not self.endpoint:
            return [], [bad_input(f"bidder {info.bidder} has no endpoint configured")]
        errors: list[BidderError] = []
        parsed: list[tuple[dict[str, Any], dict[str, Any]]] = []
        for imp in request.get("imp") or ():
            if not isinstance(imp, dict):
                continue
            try:
                bidder_ext = _bidder_ext(imp)
            except JsonShapeError as exc:
                errors.append(bad_input(str(exc)))
                continue
            if bidder_ext["bidder"].get("bidonmultiformat") is True:
                parsed.extend((part, bidder_ext) for part in _split_multiformat(imp))
            else:
                parsed.append((imp, bidder_ext))

        shared = self._shared_parts(request)
        calls = []
        for imp, bidder_ext in parsed:
            try:
                calls.append(self._one_request(request, imp, bidder_ext, shared, info))
            except (JsonShapeError, ConversionError) as exc:
                errors.append(bad_input(str(exc)))
        return calls, errors

    def _shared_parts(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Request parts that do not depend on the imp, computed once."""
        out = {k: v for k, v in request.items() if k not in ("imp", "cur", "ext", "user")}
        device = request.get("device")
        if isinstance(device, dict):
            out["device"] = {**device, "ext": {"rp": {"pixelratio": device.get("pxratio", 0)}}}
        schain = _schain(request)
        if schain is not None:
            source = request.get("source") if isinstance(request.get("source"), dict) else {}
            out["source"] = {k: v for k, v in source.items() if k not in ("schain", "ext")}
            out["source"]["ext"] = {"schain": schain}
        if "regs" in request:
            out["regs"] = _regs(request["regs"])
        badv = request.get("badv")
        if isinstance(badv, list) and len(badv) > _BADV_LIMIT:
            out["badv"] = badv[:_BADV_LIMIT]
        return out

    def _imp_target(self, request: Mapping[str, Any], imp: Mapping[str, Any], parts: dict[str, Any]) -> dict[str, Any]:
        """XAPI imp targeting from params, site/app ext.data, page and imp ext.data."""
        ext, bidder = parts["ext"], parts["bidder"]
        target = _existing_target(ext)
        _fpd_into(bidder.get("inventory"), target)
        site, app = request.get("site"), request.get("app")
        if isinstance(site, dict):
            _fpd_into(_ext_data(site), target)
            if site.get("page"):
                target["page"] = [site["page"]]
        elif isinstance(app, dict):
            _fpd_into(_ext_data(app), target)
        data = ext.get("data")
        if data is not None:
            _fpd_into(data, target)
            data = optional_object(data, "") or {}
        adserver = optional_object((data or {}).get("adserver"), "rubicon.rubiconData.AdServer") or {}
        pbadslot = expect_string((data or {}).get("pbadslot"), "rubicon.rubiconData.PbAdSlot")
        if pbadslot:
            target["pbadslot"] = pbadslot
        else:
            name = expect_string(adserver.get("name"), "rubicon.rubiconAdServer.Name")
            adslot = expect_string(adserver.get("adslot"), "rubicon.rubiconAdServer.AdSlot")
            if name == "gam" and adslot:
                target["dfp_ad_unit_code"] = adslot
        if bidder.get("keywords"):
            target["keywords"] = bidder["keywords"]
        target["pbs_login"] = self.username
        target["pbs_version"] = self.pbs_version
        target["pbs_url"] = self.external_url
        return target

    def _one_request(
        self,
        request: Mapping[str, Any],
        imp: dict[str, Any],
        parts: dict[str, Any],
        shared: dict[str, Any],
        info: RequestInfo,
    ) -> RequestData:
        ext, bidder = parts["ext"], parts["bidder"]
        target = self._imp_target(request, imp, parts)
        site_id = _int64(bidder.get("siteId"))
        zone_id = _int64(bidder.get("zoneId"))

        rp = {"zone_id": zone_id, "target": target, "track": {"mint": "", "mint_version": ""}}
        imp_ext: dict[str, Any] = {"rp": rp}
        for key in ("gpid", "skadn", "tid"):
            if ext.get(key):
                imp_ext[key] = ext[key]
        max_bids = _max_bids(request)
        if max_bids is not None:
            imp_ext["maxbids"] = max_bids
        out_imp = {**imp, "ext": imp_ext, "secure": 1}
        prebid = ext.get("prebid") or {}
        if not out_imp.get("rwdd") and prebid.get("is_rewarded_inventory"):
            out_imp["rwdd"] = prebid["is_rewarded_inventory"]
        self._resolve_floor(out_imp, info)

        body = dict(shared)
        user = request.get("user")
        if isinstance(user, dict):
            body["user"] = self._user(user, bidder)

        _shape_media(imp, out_imp, parts["video"])
        _set_site_or_app(body, request, site_id, _int64(bidder.get("accountId")))
        body["imp"] = [out_imp]
        return RequestData("POST", self.uri, orjson.dumps(body), self.headers, [imp.get("id", "")])

    @staticmethod
    def _resolve_floor(imp: dict[str, Any], info: RequestInfo) -> None:
        """A floor in another currency is converted to USD (XAPI takes USD floors only)."""
        floor = imp.get("bidfloor") if _is_number(imp.get("bidfloor")) else 0
        currency = imp.get("bidfloorcur") if isinstance(imp.get("bidfloorcur"), str) else ""
        if floor > 0 and currency and currency.upper() != "USD":
            try:
                imp["bidfloor"] = info.convert_currency(floor, currency, "USD")
            except ConversionError:
                raise JsonShapeError(f"Unable to convert provided bid floor currency from {currency} to USD") from None
            imp["bidfloorcur"] = "USD"
        elif currency and floor >= 0:
            imp["bidfloorcur"] = "USD"

    @staticmethod
    def _user(user: Mapping[str, Any], bidder: Mapping[str, Any]) -> dict[str, Any]:
        """user with first-party data as XAPI visitor targeting and 2.6 fields moved to ext."""
        ext = user.get("ext") if isinstance(user.get("ext"), dict) else {}
        target = _existing_target(ext)
        _fpd_into(bidder.get("visitor"), target)
        _fpd_into(ext.get("data"), target)
        iab = _segment_ids(user.get("data"), _USER_SEGTAXES)
        if iab:
            target["iab"] = iab
        eids, consent = _eids_and_consent(user)
        new_ext: dict[str, Any] = {}
        if eids:
            new_ext["eids"] = eids
        new_ext["rp"] = {"target": target}
        if consent:
            new_ext["consent"] = consent
        out = {k: v for k, v in user.items() if k not in _USER_DROPPED}
        out["ext"] = new_ext
        return out

    # --- bids -------------------------------------------------------------------------------

    def bids_from(
        self, request: dict[str, Any], call: RequestData, data: dict[str, Any]
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        sent, failure = decode_answer(ResponseData(200, call.body or b""), _ANSWER_WORDING)  # the call we made
        if sent is None:
            return None, failure

        sent_imps = sent.get("imp")
        sent_imp = sent_imps[0] if isinstance(sent_imps, list) and sent_imps and isinstance(sent_imps[0], dict) else {}
        bid_type = "video" if _is_video(sent_imp) else "banner" if sent_imp.get("banner") is not None else "native"
        overrides = _cpm_overrides(request)
        default_override = _request_cpm_override(request)

        result = BidderResponse(currency=data.get("cur") or "USD")
        for seatbid in items_of(data.get("seatbid")):
            if not isinstance(seatbid, dict):
                continue
            buyer = _atoi(seatbid.get("buyer"))
            seat = seatbid.get("seat") or ""
            for bid in seat_bids(seatbid):
                if not isinstance(bid, dict):
                    continue
                impid = bid.get("impid")
                override = (overrides.get(impid) if isinstance(impid, str) else None) or default_override
                out = _typed_bid(bid, buyer, seat, override, data)
                if out is not None:
                    result.bids.append(TypedBid(out, bid_type))
        return result, []


def _atoi(value: Any) -> int:
    """Go's strconv.Atoi of a string; 0 for anything else or what it refuses."""
    return int_or(value, 0, INT64) if isinstance(value, str) else 0


def _typed_bid(
    bid: dict[str, Any], buyer: int, seat: str, cpm_override: float, response: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The bid as returned to the exchange, or None for a zero price."""
    out = {k: v for k, v in bid.items() if k != "adm_native"}
    ext = _ext_with_meta(bid.get("ext"), buyer, seat)
    if ext is not None:
        out["ext"] = ext
    if cpm_override > 0:
        out["price"] = cpm_override
    if not out.get("price"):
        return None
    if out.get("id") == "0":
        out["id"] = response.get("bidid", "")
    if not out.get("adm"):
        # XAPI sends native markup as a JSON object; an absent one becomes "null", as in PBS-Go
        out["adm"] = orjson.dumps(bid.get("adm_native")).decode()
    return out


def _ext_with_meta(ext: Any, buyer: int, seat: str) -> dict[str, Any] | None:
    """bid.ext with ``prebid.meta`` carrying the buyer (network id) and seat, if either is known."""
    if buyer <= 0 and not seat:
        return None
    if ext is not None and not isinstance(ext, dict):
        return None
    meta = {"networkId": buyer} if buyer else {}
    if seat:
        meta["seat"] = seat
    ext = ext or {}
    out: dict[str, Any] = {}
    prebid = ext.get("prebid")
    if isinstance(prebid, dict):
        old_meta = prebid.get("meta")
        if isinstance(old_meta, dict):
            meta = {**{k: v for k, v in old_meta.items() if k not in ("networkId", "seat")}, **meta}
        out["prebid"] = {**prebid, "meta": meta}
    else:
        out["prebid"] = {"meta": meta}
    if ext.get("bidder") is not None:
        out["bidder"] = ext["bidder"]
    return out


def _cpm_override_of(debug: Any) -> float:
    value = debug.get("cpmoverride") if isinstance(debug, dict) else None
    return float(value) if _is_number(value) else 0.0


def _cpm_overrides(request: Mapping[str, Any]) -> dict[str, float]:
    """imp id -> the debug price override its params set (``debug.cpmoverride``)."""
    out = {}
    for imp in request.get("imp") or ():
        ext = imp.get("ext") if isinstance(imp, dict) else None
        bidder = ext.get("bidder") if isinstance(ext, dict) else None
        if isinstance(bidder, dict):
            out[imp.get("id")] = _cpm_override_of(bidder.get("debug"))
    return out


def _request_cpm_override(request: Mapping[str, Any]) -> float:
    node: Any = request.get("ext")
    for key in ("prebid", "bidders", "rubicon"):
        node = node.get(key) if isinstance(node, dict) else None
    return _cpm_override_of(node.get("debug") if isinstance(node, dict) else None)


def build(config: AdapterConfig) -> RubiconAdapter:
    return RubiconAdapter(config)


def _shape_media(imp: Mapping[str, Any], out_imp: dict[str, Any], video_params: Mapping[str, Any]) -> None:
    """XAPI takes one media type per imp: video (with its ext from the video params), else banner,
    else native (with ``request_native``); the others are removed from ``out_imp``."""
    if _is_video(imp):
        video_ext: dict[str, Any] = {}
        for key in ("skip", "skipdelay"):
            if _small_int(video_params.get(key)):
                video_ext[key] = video_params[key]
        if out_imp.pop("rwdd", 0) == 1:
            video_ext["videotype"] = "rewarded"
        size_id = _small_int(video_params.get("size_id"))
        video_ext["rp"] = {"size_id": size_id} if size_id else {}
        out_imp["video"] = {**imp["video"], "ext": video_ext}
        out_imp.pop("banner", None)
        out_imp.pop("native", None)
    elif imp.get("banner") is not None:
        banner = imp["banner"]
        w, h = banner.get("w"), banner.get("h")
        if not banner.get("format") and (w is None or h is None or h == 0):
            raise JsonShapeError("rubicon imps must have at least one imp.format element")
        out_imp["banner"] = {**banner, "ext": _BANNER_EXT}
        out_imp.pop("video", None)
        out_imp.pop("native", None)
    else:
        request_native = _native_request(imp.get("native"))
        out_imp.pop("video", None)
        if request_native is not None:
            out_imp["native"] = {**imp["native"], "request_native": request_native}


def _set_site_or_app(body: dict[str, Any], request: Mapping[str, Any], site_id: int, account_id: int) -> None:
    """The request's site (with its content's IAB segments) or app, with XAPI's site and account ids."""
    publisher = {"ext": {"rp": {"account_id": account_id}}}
    site, app = request.get("site"), request.get("app")
    if isinstance(site, dict):
        site_rp: dict[str, Any] = {"site_id": site_id}
        content = site.get("content")
        if isinstance(content, dict):
            iab = _segment_ids(content.get("data"), _SITE_SEGTAXES)
            if iab:
                site_rp["target"] = {"iab": iab}
        body["site"] = {**site, "ext": {"rp": site_rp}, "publisher": publisher}
    elif isinstance(app, dict):
        body["app"] = {**app, "ext": {"rp": {"site_id": site_id}}, "publisher": publisher}
