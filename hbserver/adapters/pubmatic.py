"""PubMatic (OpenWrap translator) adapter: every valid imp in one request.

Behaviour follows PBS-Go's pubmatic adapter, proven against its JSON fixtures. The params are turned
into OpenRTB places PubMatic reads: ``adSlot`` ("slot" or "slot@WxH") -> ``imp.tagid`` and banner
size, ``kadfloor`` -> ``imp.bidfloor`` (the higher floor wins), keywords/``dctr``/``pmzoneid`` and
imp first-party data -> ``imp.ext``; the first ``publisherId`` -> ``site/app.publisher.id``; the
OpenWrap ``wrapper`` (profile, version) and ``ext.prebid.bidderparams.acat`` -> ``request.ext``.
An imp PubMatic cannot take is dropped with an error; the others still go out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import orjson

from hbserver.adapters.base import (
    MTYPE_TO_TYPE,
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    TypedBid,
    bad_input,
    bad_server_response,
)
from hbserver.adapters.common import (
    AnswerAdapter,
    JsonShapeError,
    expect_object,
    expect_string,
    found,
    imp_ids,
    items_of,
    seat_bids,
)
from hbserver.adapters.golike import (
    ABSENT_OBJECT,
    GO_WORDING,
    NOT_AN_OBJECT,
    go_float_v,
    go_parse_float,
    json_member_text,
)
from hbserver.numbers import INT64, parse_int

_HEADERS = {"Content-Type": "application/json;charset=utf-8", "Accept": "application/json"}
_DCTR = "key_val"
_ZONE = "pmZoneId"
_ZONE_OLD = "pmZoneID"
_AD_UNIT = "dfp_ad_unit_code"
_NOT_TARGETING = frozenset(("pbadslot", "adserver"))


def _int(value: Any, where: str) -> int:
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise JsonShapeError(f"cannot unmarshal {where}: expects number or n, but found {found(value)}")


def _atoi(text: str) -> int:
    """Go's strconv.Atoi: an optional sign and ASCII digits, within int64; NumberError otherwise."""
    return parse_int(text, INT64)


def _parse_float(text: str) -> float | None:
    """Go's strconv.ParseFloat for a finite floor, else None."""
    value = go_parse_float(text)
    return value if value is not None and math.isfinite(value) else None


def _ad_slot(ad_slot: str, imp: dict[str, Any]) -> None:
    """Apply ``adSlot`` ("name" or "name@WxH[:...]") to the imp: tagid, and banner size if any."""
    slot = ad_slot.strip()
    if not slot:
        return
    if "@" not in slot:
        imp["tagid"] = slot
        return
    parts = slot.split("@")
    if len(parts) != 2 or not parts[0] or not parts[1]:
        raise JsonShapeError(f"Invalid adSlot {slot}")
    imp["tagid"] = parts[0].strip()
    size = parts[1].lower().split("x")
    if len(size) != 2:
        raise JsonShapeError(f"Invalid size provided in adSlot {slot}")
    try:
        width = _atoi(size[0].strip())
    except ValueError:
        raise JsonShapeError(f"Invalid width provided in adSlot {slot}") from None
    try:
        height = _atoi(size[1].split(":")[0].strip())
    except ValueError:
        raise JsonShapeError(f"Invalid height provided in adSlot {slot}") from None
    if imp.get("banner") is not None:
        imp["banner"] = {**imp["banner"], "w": width, "h": height}


def _banner_size(imp: dict[str, Any]) -> None:
    """A banner without w/h takes its first format's size (PubMatic needs one)."""
    banner = imp["banner"]
    if banner.get("w") is not None and banner.get("h") is not None:
        return
    formats = banner.get("format")
    if not formats or not isinstance(formats[0], dict):
        return
    imp["banner"] = {**banner, "w": formats[0].get("w", 0), "h": formats[0].get("h", 0)}


def _keywords(keywords: Any, ext: dict[str, Any]) -> None:
    if keywords is None:
        return
    if not isinstance(keywords, list):
        where = "openrtb_ext.ExtImpPubmatic.Keywords"
        raise JsonShapeError(f"cannot unmarshal {where}: expect [ or n, but found {found(keywords)}")
    for item in keywords:
        pair = expect_object(item, "openrtb_ext.ExtImpPubmatic.Keywords")
        values = pair.get("value") or []
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise JsonShapeError("cannot unmarshal openrtb_ext.ExtImpPubmaticKeyVal.Values: expect [ or n")
        if values:
            key = expect_string(pair.get("key"), "openrtb_ext.ExtImpPubmaticKeyVal.Key")
            ext[_ZONE if key == _ZONE_OLD else key] = ",".join(values)


def _dctr_value(value: Any) -> str | None:
    """One imp.ext.data value as dctr text (Go's %v formatting), or None to skip it."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return go_float_v(float(value))
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return ",".join(v.strip() for v in value)
    return None


def _first_party_data(data: Any, ext: dict[str, Any]) -> None:
    """imp.ext.data: the GAM ad unit (or pbadslot) and the other keys as dctr targeting."""
    if not isinstance(data, dict):
        return
    adserver = data.get("adserver")
    if isinstance(adserver, dict) and adserver.get("name") == "gam":
        adslot = adserver.get("adslot")
        if isinstance(adslot, str) and adslot:
            ext[_AD_UNIT] = adslot
    if _AD_UNIT not in ext and isinstance(data.get("pbadslot"), str):
        ext[_AD_UNIT] = data["pbadslot"]
    dctr = ext.get(_DCTR) or ""
    for key, value in data.items():
        if key in _NOT_TARGETING:
            continue
        if dctr:
            dctr += "|"  # PBS-Go writes the separator before knowing the value is usable
        text = _dctr_value(value)
        if text is not None:
            dctr += f"{key.strip()}={text}"
    if dctr:
        ext[_DCTR] = dctr.removesuffix("|")


def _display_manager(request: Mapping[str, Any]) -> tuple[str, str]:
    """The SDK name and version from app.ext.prebid, else app.ext (for imps that lack them)."""
    app = request.get("app")
    ext = app.get("ext") if isinstance(app, dict) else None
    if not isinstance(ext, dict):
        return "", ""
    for node in (ext.get("prebid"), ext):
        if isinstance(node, dict):
            source, version = node.get("source"), node.get("version")
            if isinstance(source, str) and source and isinstance(version, str) and version:
                return source, version
    return "", ""


def _bidder_code(request_prebid: Mapping[str, Any], info: RequestInfo) -> str:
    """The code PubMatic reports bids under: the alias this request runs as, if any."""
    if info.adapter_code and info.bidder.lower() != info.adapter_code.lower():
        return info.bidder
    aliases = request_prebid.get("aliases")
    if isinstance(aliases, dict):
        for alias in sorted(aliases):
            if str(aliases[alias]).lower() == info.bidder.lower():
                return alias
    return info.bidder


def _marketplace(request_prebid: Mapping[str, Any], bidder: str) -> dict[str, Any] | None:
    """The alternate bidder codes PubMatic may bid under (ext.prebid.alternatebiddercodes)."""
    codes = request_prebid.get("alternatebiddercodes")
    if codes is None:
        return None
    codes = expect_object(codes, "openrtb_ext.ExtRequestPrebid.AlternateBidderCodes")
    allowed = [bidder]
    own = (codes.get("bidders") or {}).get(bidder) if isinstance(codes.get("bidders"), dict) else None
    if codes.get("enabled") is True and isinstance(own, dict) and own.get("enabled") is True:
        extra = own.get("allowedbiddercodes")
        if isinstance(extra, list) and extra != ["*"]:
            allowed = allowed + [code for code in extra if isinstance(code, str)]
        else:
            allowed = ["all"]
    return {"allowedbidders": allowed}


def _request_ext(request: Mapping[str, Any], info: RequestInfo) -> dict[str, Any]:
    """request.ext as sent: the wrapper (always, once a request ext exists), acat, marketplace."""
    if "ext" not in request:
        return {}
    try:
        ext = expect_object(request["ext"], "")
        prebid = expect_object(ext.get("prebid"), "openrtb_ext.ExtRequest.Prebid")
        params = expect_object(prebid.get("bidderparams"), "openrtb_ext.ExtRequestPrebid.BidderParams")
        marketplace = _marketplace(prebid, info.bidder)
    except JsonShapeError as exc:
        raise JsonShapeError(f"error decoding Request.ext : {exc}") from None
    wrapper: dict[str, Any] = {}
    if params.get("wrapper") is not None:
        given = expect_object(params["wrapper"], "pubmatic.pubmaticWrapperExt")
        wrapper["profile"] = _int(given.get("profile"), "pubmatic.pubmaticWrapperExt.ProfileID")
        wrapper["version"] = _int(given.get("version"), "pubmatic.pubmaticWrapperExt.VersionID")
    wrapper["biddercode"] = _bidder_code(prebid, info)
    out: dict[str, Any] = {"wrapper": wrapper}
    if "acat" in params:
        acat = params["acat"]
        if acat is not None and not (isinstance(acat, list) and all(isinstance(a, str) for a in acat)):
            raise JsonShapeError(f"cannot unmarshal []string: expect [ or n, but found {found(acat)}")
        if acat:
            out["acat"] = [a.strip() for a in acat]
    if marketplace is not None:
        out["marketplace"] = marketplace
    return out


def _imp(
    imp: Mapping[str, Any], display: tuple[str, str], want_wrapper: bool
) -> tuple[dict[str, Any], dict[str, Any] | None, str]:
    """The imp as sent, plus its OpenWrap wrapper params and trimmed publisher id."""
    if imp.get("banner") is None and imp.get("video") is None and imp.get("native") is None:
        raise JsonShapeError(
            f"invalid MediaType. PubMatic only supports Banner, Video and Native. Ignoring ImpID={imp.get('id', '')}"
        )
    out = {k: v for k, v in imp.items() if k != "audio"}
    if not imp.get("displaymanager") and not imp.get("displaymanagerver") and all(display):
        out["displaymanager"], out["displaymanagerver"] = display

    ext = expect_object(imp.get("ext"), "")
    expect_object(ext.get("prebid"), "pubmatic.ExtImpBidderPubmatic.Prebid")
    gpid = expect_string(ext.get("gpid"), "pubmatic.ExtImpBidderPubmatic.GpId")
    ae = _int(ext.get("ae"), "pubmatic.ExtImpBidderPubmatic.AE")
    if "bidder" not in ext:
        raise JsonShapeError(ABSENT_OBJECT)  # Go decodes the absent raw value
    params = expect_object(ext["bidder"], "")
    publisher_id = expect_string(params.get("publisherId"), "openrtb_ext.ExtImpPubmatic.PublisherId").strip()

    wrapper = None
    if want_wrapper and params.get("wrapper") is not None:
        wrapper = _imp_wrapper(params["wrapper"], imp)

    _ad_slot(expect_string(params.get("adSlot"), "openrtb_ext.ExtImpPubmatic.AdSlot"), out)
    if out.get("banner") is not None:
        _banner_size(out)
    kadfloor = expect_string(params.get("kadfloor"), "openrtb_ext.ExtImpPubmatic.Kadfloor")
    if kadfloor:
        floor = _parse_float(kadfloor.strip())
        if floor is not None:
            current = imp.get("bidfloor")
            out["bidfloor"] = max(floor, current) if isinstance(current, int | float) else floor

    imp_ext: dict[str, Any] = {}
    _keywords(params.get("keywords"), imp_ext)
    dctr = expect_string(params.get("dctr"), "openrtb_ext.ExtImpPubmatic.Dctr")
    if dctr:
        imp_ext[_DCTR] = dctr
    zone = expect_string(params.get("pmzoneid"), "openrtb_ext.ExtImpPubmatic.PmZoneID")
    if zone:
        imp_ext[_ZONE] = zone
    if ext.get("data"):
        _first_party_data(ext["data"], imp_ext)
    if ae:
        imp_ext["ae"] = ae
    if gpid:
        imp_ext["gpid"] = gpid
    if ext.get("skadn"):
        imp_ext["skadn"] = ext["skadn"]
    if imp_ext:
        out["ext"] = imp_ext
    else:
        out.pop("ext", None)
    return out, wrapper, publisher_id


def _imp_wrapper(raw: Any, imp: Mapping[str, Any]) -> dict[str, Any]:
    """The imp's OpenWrap wrapper params (profile, version), or PBS-Go's error naming the imp."""
    try:
        given = expect_object(raw, "pubmatic.pubmaticWrapperExt")
        return {
            "profile": _int(given.get("profile"), "pubmatic.pubmaticWrapperExt.ProfileID"),
            "version": _int(given.get("version"), "pubmatic.pubmaticWrapperExt.VersionID"),
        }
    except JsonShapeError as exc:
        raise JsonShapeError(
            f"Error in Wrapper Parameters = {exc}  for ImpID = {imp.get('id', '')} "
            f"WrapperExt = {orjson.dumps(raw).decode()}"
        ) from None


def _with_publisher(parent: Mapping[str, Any], publisher_id: str) -> dict[str, Any]:
    publisher = parent.get("publisher")
    publisher = dict(publisher) if isinstance(publisher, dict) else {}
    if publisher_id:
        publisher["id"] = publisher_id
    else:
        publisher.pop("id", None)
    return {**parent, "publisher": publisher}


class PubmaticAdapter(AnswerAdapter):
    answer_wording = GO_WORDING

    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        if not self.endpoint:
            return [], [bad_input(f"bidder {info.bidder} has no endpoint configured")]
        try:
            ext = _request_ext(request, info)
        except JsonShapeError as exc:
            return [], [bad_input(str(exc))]
        wrapper = ext.get("wrapper")
        need_wrapper = not (wrapper and wrapper.get("profile") and wrapper.get("version"))
        publisher_id = ""
        display = _display_manager(request)
        errors: list[BidderError] = []
        imps = []
        for imp in request.get("imp") or ():
            if not isinstance(imp, dict):
                continue
            try:
                out, imp_wrapper, imp_publisher = _imp(imp, display, need_wrapper)
            except JsonShapeError as exc:
                errors.append(bad_input(str(exc)))
                continue
            imps.append(out)
            if need_wrapper and imp_wrapper is not None:
                wrapper = ext.setdefault("wrapper", {})
                for key in ("profile", "version"):
                    if not wrapper.get(key):
                        wrapper[key] = imp_wrapper[key]
                need_wrapper = not (wrapper.get("profile") and wrapper.get("version"))
            if not publisher_id:
                publisher_id = imp_publisher
        if not imps:
            return [], errors

        if wrapper is not None:
            ext["wrapper"] = {k: v for k, v in wrapper.items() if v}
        body = {**request, "imp": imps, "ext": ext}
        if isinstance(request.get("site"), dict):
            body["site"] = _with_publisher(request["site"], publisher_id)
        elif isinstance(request.get("app"), dict):
            body["app"] = _with_publisher(request["app"], publisher_id)
        return [RequestData("POST", self.endpoint, orjson.dumps(body), _HEADERS, imp_ids(imps))], errors

    def bids_from(
        self, request: dict[str, Any], call: RequestData, data: dict[str, Any]
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        result = BidderResponse(currency=data.get("cur") or "USD")
        errors: list[BidderError] = []
        for seatbid in items_of(data.get("seatbid")):
            for bid in seat_bids(seatbid):
                if not isinstance(bid, dict):
                    continue
                typed = _typed_bid(bid, errors)
                if typed is not None:
                    result.bids.append(typed)
        result.fledge_auction_configs = _fledge(data.get("ext"))
        return result, errors


def _typed_bid(bid: dict[str, Any], errors: list[BidderError]) -> TypedBid | None:
    mtype = bid.get("mtype")
    kind = MTYPE_TO_TYPE.get(mtype) if isinstance(mtype, int) else None
    if kind is None:
        errors.append(
            bad_server_response(
                f"failed to parse bid mtype ({bid.get('mtype') or 0}) for impression id {bid.get('impid', '')}"
            )
        )
        return None
    out = bid
    cat = bid.get("cat")
    if isinstance(cat, list) and len(cat) > 1:
        out = {**bid, "cat": cat[:1]}
    typed = TypedBid(out, kind, bid_video={"duration": 0, "primary_category": ""})
    ext = bid.get("ext")
    if "ext" not in bid or (ext is not None and not isinstance(ext, dict)):
        errors.append(bad_server_response(NOT_AN_OBJECT.format(found=found(ext)) if "ext" in bid else ABSENT_OBJECT))
    elif ext is not None:
        seat = ext.get("marketplace")
        typed.seat = seat if isinstance(seat, str) else ""
        priority = ext.get("prebiddealpriority")
        if isinstance(priority, int) and not isinstance(priority, bool) and priority > 0:
            typed.deal_priority = priority
        video = ext.get("video")
        if isinstance(video, dict) and isinstance(video.get("duration"), int):
            typed.bid_video = {"duration": video["duration"], "primary_category": ""}
        typed.bid_meta = {"mediaType": "video" if ext.get("ibv") is True else kind}
    if kind == "native":
        adm = _native_adm(out.get("adm") or "")
        if adm is None:
            errors.append(bad_server_response("unable to unmarshal native adm"))
        elif adm != out.get("adm"):
            typed.bid = {**out, "adm": adm}
    return typed


def _native_adm(adm: str) -> str | None:
    """Native markup as PubMatic's translator may wrap it ({"native": {...}}), unwrapped
    byte for byte; None when it is not a JSON object."""
    try:
        parsed = orjson.loads(adm)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(parsed, dict):
        return None
    if "native" not in parsed:
        return adm
    try:
        raw = json_member_text(adm, "native")
    except (ValueError, IndexError):
        raw = None
    if raw is None:
        return adm
    return raw[1:-1] if raw.startswith('"') else raw


def _fledge(ext: Any) -> list[dict[str, Any]] | None:
    """Protected Audience configs PubMatic returns in ext.fledge_auction_configs (imp id -> config)."""
    configs = ext.get("fledge_auction_configs") if isinstance(ext, dict) else None
    if not isinstance(configs, dict):
        return None
    return [{"impid": imp_id, "config": config} for imp_id, config in configs.items()]


def build(config: AdapterConfig) -> PubmaticAdapter:
    return PubmaticAdapter(config)
