"""Index Exchange adapter: every valid imp in one request, the request otherwise as received.

Behaviour follows PBS-Go's ix adapter, proven against its JSON fixtures. The single ``siteId`` of
the imps becomes ``site/app.publisher.id`` (several are reported in ``ext.ixdiag.multipleSiteIds``),
``sid`` is copied to ``imp.ext.sid``, a one-size banner gets ``w``/``h`` (and a sizeless one a
``format``), and ``ext.ixdiag`` carries diagnostics (Prebid.js and server version). Native markup
with 1.2 event trackers also lists their impression pixels in ``imptrackers`` for 1.1 renderers.

Host settings in ``AdapterConfig.extra``: ``pbs_version`` (sent as ``ixdiag.pbsv``, "unknown" if
empty).
"""

from __future__ import annotations

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
    AnswerWording,
    JsonShapeError,
    expect_object,
    expect_string,
    found,
    imp_ids,
)
from hbserver.adapters.golike import NOT_AN_OBJECT, go_json_text, go_members, go_read_float, imp_bidder_params
from hbserver.adapters.gonative import EVENT_IMPRESSION, METHOD_IMAGE, decode_native_response, encode_native_response

_HEADERS = {"Content-Type": "application/json;charset=utf-8", "Accept": "application/json"}
_BID_TYPES = frozenset(("banner", "video", "audio", "native"))
_ANSWER_WORDING = AnswerWording(bad_json="JSON parsing error: {}", not_an_object="JSON parsing error: " + NOT_AN_OBJECT)


def _array(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, list):
        return value
    raise JsonShapeError(f"cannot unmarshal {where}: expect [ or n, but found {found(value)}")


def _ix_params(imp: Mapping[str, Any]) -> tuple[str, str]:
    """(siteId, sid) from imp.ext.bidder; field names match case-insensitively, as in Go."""
    site_id = sid = ""
    for name, value in go_members(imp_bidder_params(imp), "siteId", "sid", "size"):
        if name == "siteId":
            site_id = expect_string(value, "openrtb_ext.ExtImpIx.SiteId")
        elif name == "sid":
            sid = expect_string(value, "openrtb_ext.ExtImpIx.Sid")
        elif value is not None:
            if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
                raise JsonShapeError(
                    f"cannot unmarshal openrtb_ext.ExtImpIx.Size: expect [ or n, but found {found(value)}"
                )
    return site_id, sid


def _banner(banner: Mapping[str, Any]) -> dict[str, Any]:
    """A sizeless banner gets its w/h as the one format; a one-format banner gets that w/h."""
    out = dict(banner)
    if not out.get("format") and out.get("w") is not None and out.get("h") is not None:
        out["format"] = [{"w": out["w"], "h": out["h"]}]
    formats = out.get("format")
    if isinstance(formats, list) and len(formats) == 1 and isinstance(formats[0], dict):
        out["w"] = formats[0].get("w", 0)
        out["h"] = formats[0].get("h", 0)
    return out


def _with_publisher(parent: Mapping[str, Any], site_ids: list[str]) -> dict[str, Any]:
    publisher = parent.get("publisher")
    publisher = dict(publisher) if isinstance(publisher, dict) else {}
    if len(site_ids) == 1:
        publisher["id"] = site_ids[0]
    return {**parent, "publisher": publisher}


def _request_ext(ext: Any, diag: dict[str, Any], version: str) -> dict[str, Any]:
    """request.ext as IX reads it (prebid, schain, ixdiag) with our diagnostics merged in."""
    ext = expect_object(ext, "")
    prebid = ext.get("prebid")
    channel = expect_object(prebid, "ix.ExtRequest.Prebid").get("channel")
    if channel is not None:
        diag["pbjsv"] = expect_string(
            expect_object(channel, "openrtb_ext.ExtRequestPrebid.Channel").get("version"),
            "openrtb_ext.ExtRequestPrebidChannel.Version",
        )
    diag["pbsv"] = version.split("-", 1)[0] if version else "unknown"
    diag["pbsp"] = "go"  # IX's name for the PBS-Go-compatible implementation
    ixdiag = {**expect_object(ext.get("ixdiag"), ""), **diag}
    out: dict[str, Any] = {}
    if prebid is not None:
        out["prebid"] = prebid
    if ext.get("schain") is not None:
        out["schain"] = ext["schain"]
    out["ixdiag"] = ixdiag
    return out


class IxAdapter(AnswerAdapter):
    answer_wording = _ANSWER_WORDING

    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint
        self.version = str(config.extra.get("pbs_version", ""))

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        if not self.endpoint:
            return [], [bad_input(f"bidder {info.bidder} has no endpoint configured")]
        errors: list[BidderError] = []
        site_ids: set[str] = set()
        imps = []
        for imp in request.get("imp") or ():
            if not isinstance(imp, dict):
                continue
            try:
                site_id, sid = _ix_params(imp)
            except JsonShapeError as exc:
                errors.append(bad_input(str(exc)))
                continue
            if site_id:
                site_ids.add(site_id)
            out = dict(imp)
            if sid:
                out["ext"] = {**imp["ext"], "sid": sid}
            if isinstance(imp.get("banner"), dict):
                out["banner"] = _banner(imp["banner"])
            imps.append(out)

        body = dict(request)
        ordered_ids = sorted(site_ids)
        for key in ("site", "app"):
            if isinstance(request.get(key), dict):
                body[key] = _with_publisher(request[key], ordered_ids)
        diag: dict[str, Any] = {}
        if len(ordered_ids) > 1:
            diag["multipleSiteIds"] = ", ".join(ordered_ids)
        try:
            body["ext"] = _request_ext(request.get("ext"), diag, self.version)
        except JsonShapeError as exc:
            errors.append(bad_input(str(exc)))
        if not imps:
            return [], errors
        body["imp"] = imps
        return [RequestData("POST", self.endpoint, orjson.dumps(body), _HEADERS, imp_ids(imps))], errors

    def bids_from(
        self, request: dict[str, Any], call: RequestData, data: dict[str, Any]
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        try:
            _check_bid_response(data)
        except JsonShapeError as exc:
            return None, [bad_server_response(f"JSON parsing error: {exc}")]

        imp_types = {}
        for imp in request.get("imp") or ():
            if not isinstance(imp, dict) or not isinstance(imp.get("id"), str):
                continue
            for kind in ("banner", "video", "native", "audio"):
                if imp.get(kind) is not None:
                    imp_types[imp["id"]] = kind
                    break
        result = BidderResponse(currency=data.get("cur") or "USD")
        errors: list[BidderError] = []
        for seatbid in data.get("seatbid") or ():
            for bid in (seatbid.get("bid") if isinstance(seatbid, dict) else None) or ():
                if not isinstance(bid, dict):
                    continue
                try:
                    result.bids.append(_typed_bid(bid, imp_types))
                except JsonShapeError as exc:
                    errors.append(bad_server_response(str(exc)))
        if "ext" in data:
            try:
                result.fledge_auction_configs = _fledge(data["ext"])
            except JsonShapeError as exc:
                return None, [*errors, bad_server_response(str(exc))]
        return result, errors


_RESPONSE_STRINGS = {"id": "ID", "bidid": "BidID", "cur": "Cur", "customdata": "CustomData"}
_SEATBID_STRINGS = {"seat": "Seat"}
_BID_STRINGS = {
    "id": "ID",
    "impid": "ImpID",
    "adm": "AdM",
    "adid": "AdID",
    "crid": "CrID",
    "cid": "CID",
    "dealid": "DealID",
    "nurl": "NURL",
    "burl": "BURL",
    "lurl": "LURL",
}


def _check_bid_response(data: Any) -> None:
    """Fail where PBS-Go's typed BidResponse decoding would, with its words (the fields we read)."""
    if not isinstance(data, dict):
        raise JsonShapeError(NOT_AN_OBJECT.format(found=found(data)))
    for key, value in data.items():
        if key in _RESPONSE_STRINGS:
            expect_string(value, f"openrtb2.BidResponse.{_RESPONSE_STRINGS[key]}")
        elif key == "seatbid":
            for seatbid in _array(value, "openrtb2.BidResponse.SeatBid"):
                seatbid = expect_object(seatbid, "openrtb2.BidResponse.SeatBid")
                for seat_key, seat_value in seatbid.items():
                    if seat_key in _SEATBID_STRINGS:
                        expect_string(seat_value, f"openrtb2.SeatBid.{_SEATBID_STRINGS[seat_key]}")
                    elif seat_key == "bid":
                        for bid in _array(seat_value, "openrtb2.SeatBid.Bid"):
                            _check_bid(expect_object(bid, "openrtb2.SeatBid.Bid"))


def _check_bid(bid: Mapping[str, Any]) -> None:
    for key, value in bid.items():
        if key in _BID_STRINGS:
            expect_string(value, f"openrtb2.Bid.{_BID_STRINGS[key]}")
        elif key == "price":
            go_read_float(value, "openrtb2.Bid.Price")
        elif key == "cat" and value is not None:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise JsonShapeError(f"cannot unmarshal openrtb2.Bid.Cat: expect [ or n, but found {found(value)}")


def _prebid_ext(bid: Mapping[str, Any]) -> dict[str, Any]:
    ext = bid.get("ext")
    prebid = ext.get("prebid") if isinstance(ext, dict) else None
    return prebid if isinstance(prebid, dict) else {}


def _bid_type(bid: Mapping[str, Any], imp_types: Mapping[Any, str]) -> str:
    """mtype, else ext.prebid.type, else the media type of the bid's imp."""
    mtype = bid.get("mtype")
    kind = MTYPE_TO_TYPE.get(mtype) if isinstance(mtype, int) else None
    if kind is not None:
        return kind
    declared = _prebid_ext(bid).get("type")
    if isinstance(declared, str) and declared:
        if declared not in _BID_TYPES:
            raise JsonShapeError(f"invalid BidType: {declared}")
        return declared
    impid = bid.get("impid")
    kind = imp_types.get(impid) if isinstance(impid, str) else None
    if kind is None:
        raise JsonShapeError(f"unmatched impression id: {bid.get('impid', '')}")
    return kind


def _typed_bid(bid: dict[str, Any], imp_types: Mapping[Any, str]) -> TypedBid:
    kind = _bid_type(bid, imp_types)
    out = bid
    video = None
    if kind == "video":
        prebid_video = _prebid_ext(bid).get("video")
        if isinstance(prebid_video, dict):
            duration = prebid_video.get("duration")
            video = {"duration": duration if isinstance(duration, int) else 0, "primary_category": ""}
            if not bid.get("cat"):
                category = prebid_video.get("primary_category")
                out = {**bid, "cat": [category if isinstance(category, str) else ""]}
    elif kind == "native" and isinstance(bid.get("adm"), str):
        adm = _native_adm_with_imptrackers(bid["adm"])
        if adm != bid["adm"]:
            out = {**bid, "adm": adm}
    return TypedBid(out, kind, bid_video=video)


def _fledge(ext: Any) -> list[dict[str, Any]] | None:
    """Protected Audience configs from ext.protectedAudienceAuctionConfigs ([{bidId, config}])."""
    configs = expect_object(ext, "").get("protectedAudienceAuctionConfigs")
    if configs is None:
        return None
    out = []
    for item in _array(configs, "ix.ixRespExt.AuctionConfig"):
        item = expect_object(item, "ix.ixRespExt.AuctionConfig")
        imp_id = expect_string(item.get("bidId"), "ix.auctionConfig.BidId")
        if item.get("config") is not None:
            out.append({"impid": imp_id, "config": item["config"]})
    return out


# --- native markup: 1.2 event trackers mirrored into imptrackers --------------------------------


def _native_adm_with_imptrackers(adm: str) -> str:
    """The markup (1.1 ``{"native": {...}}`` or 1.2 bare) with impression-pixel event trackers
    also listed in ``imptrackers``, re-encoded as PBS-Go's native response types; unchanged if it
    has no event trackers or is not native JSON."""
    try:
        parsed = orjson.loads(adm)
    except orjson.JSONDecodeError:
        return adm
    if not isinstance(parsed, dict):
        return adm
    wrapped = parsed.get("native")
    if isinstance(wrapped, dict) and wrapped.get("eventtrackers"):
        encoded = _encode_native(wrapped)
        if encoded is not None:
            return '{"native":' + encoded + "}"
    if parsed.get("eventtrackers"):
        encoded = _encode_native(parsed)
        if encoded is not None:
            return encoded
    return adm


def _encode_native(native: Mapping[str, Any]) -> str | None:
    """``native`` through PBS-Go's native response type, the image pixels of its impression event
    trackers merged into ``imptrackers`` (deduplicated, sorted); None where it does not decode
    (PBS-Go leaves such markup alone)."""
    try:
        values = decode_native_response(native)
    except JsonShapeError:
        return None
    pixels = set(values["imptrackers"] or ())
    for tracker in values["eventtrackers"] or ():
        if tracker["event"] == EVENT_IMPRESSION and tracker["method"] == METHOD_IMAGE:
            pixels.add(tracker["url"])
    values["imptrackers"] = sorted(pixels)
    return go_json_text(encode_native_response(values), escape_html=False)  # PBS-Go's encoder has SetEscapeHTML(false)


def build(config: AdapterConfig) -> IxAdapter:
    return IxAdapter(config)
