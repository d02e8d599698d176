"""Microsoft (Monetize, the former AppNexus exchange) adapter: OpenRTB 2.6 to ``ib.adnxs.com/openrtb2``.

PBS-Go's newer adapter for the same exchange as appnexus, stricter and smaller: the params decode as
a typed struct (an imp whose ext does not decode is reported and left out), ``inv_code`` becomes
``tagid``, a banner without ``w``/``h`` takes its first format's and, without ``api``, the
``banner_frameworks`` param; the other params go to ``imp.ext.appnexus`` beside ``gpid``; an app's
``ext.prebid`` source and version fill a missing ``displaymanagerver``. ``ext.appnexus`` keeps its
known fields and gets ``hb_source`` (``extra_info``'s ``hb_source``/``hb_source_video``, 5 and 6 by
default), ``is_amp`` and the brand-category flags. The member goes into the URL as ``member_id`` and
must be the same for all imps. At most 10 imps per call, each call with ``X-Openrtb-Version: 2.6``.

Bids are typed by ``ext.appnexus.bid_ad_type`` (0 banner, 1 video, 3 native); the brand category id
becomes ``cat`` through Microsoft's table; the creative's video duration and the deal priority are
passed on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import orjson

from hbserver.adapters.appnexus import (
    AMP_ENTRY_POINT,
    BID_TYPES,
    VIDEO_ENTRY_POINT,
    chunks,
    with_member,
)
from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
)
from hbserver.adapters.common import (
    AnswerWording,
    JsonShapeError,
    app_display_manager_version,
    expect_object,
    found,
    imp_ids,
    json_call,
    json_headers,
)
from hbserver.adapters.golike import (
    ABSENT_OBJECT,
    NOT_AN_OBJECT,
    GoKind,
    go_fields,
    go_imp,
    go_int,
    go_members,
    go_request_top,
    go_typed_bids,
    go_value,
)

DEFAULT_HB_SOURCE = 5
DEFAULT_HB_SOURCE_VIDEO = 6
MEMBER_MISMATCH = "member id mismatch: all impressions must use the same member id"
MALFORMED_APPNEXUS_EXT = "malformed request ext.appnexus"
_ANSWER_WORDING = AnswerWording(body_error=BidderError)  # a body that does not decode: json-iterator's words
_HEADERS = json_headers(x_openrtb_version="2.6")

# openrtb_ext.ImpExtMsft: json name -> Go kind (a null leaves a value field as it was)
_PARAMS: Mapping[str, GoKind] = {
    "placement_id": GoKind.INT, "member": GoKind.INT, "inv_code": GoKind.STRING,
    "allow_smaller_sizes": GoKind.BOOL, "use_pmt_rule": GoKind.BOOL, "keywords": GoKind.STRING,
    "traffic_source_code": GoKind.STRING, "pubclick": GoKind.STRING, "ext_inv_code": GoKind.STRING,
    "ext_imp_id": GoKind.STRING, "banner_frameworks": GoKind.INTS,
}  # fmt: skip
_NULLABLE = (GoKind.BOOL, GoKind.INTS)  # Go pointers and slices: null sets them to nil
# params -> imp.ext.appnexus field (all omitempty)
_OUTGOING = (
    ("placement_id", "placement_id"), ("allow_smaller_sizes", "allow_smaller_sizes"),
    ("use_pmt_rule", "use_pmt_rule"), ("keywords", "keywords"), ("traffic_source_code", "traffic_source_code"),
    ("pubclick", "pub_click"), ("ext_inv_code", "ext_inv_code"), ("ext_imp_id", "ext_imp_id"),
)  # fmt: skip
# msft.requestExAppnexus: json name -> Go kind
_REQUEST_APPNEXUS: Mapping[str, GoKind] = {
    "include_brand_category": GoKind.BOOL, "brand_category_uniqueness": GoKind.BOOL,
    "is_amp": GoKind.INT, "hb_source": GoKind.INT,
}  # fmt: skip

# Microsoft brand category id -> IAB category (the table PBS-Go's msft adapter ships; not appnexus's)
IAB_CATEGORIES: Mapping[int, str] = {
    1: "IAB20-3", 2: "IAB18-5", 3: "IAB10-1", 4: "IAB2-3", 5: "IAB19-8", 6: "IAB22-1", 7: "IAB18-1",
    8: "IAB12-3", 9: "IAB5-1", 10: "IAB4-5", 11: "IAB13-4", 12: "IAB8-7", 13: "IAB9-7", 14: "IAB7-1",
    15: "IAB20-18", 16: "IAB10-7", 17: "IAB19-18", 18: "IAB13-6", 19: "IAB18-4", 20: "IAB1-5", 21: "IAB1-6",
    22: "IAB3-4", 23: "IAB19-13", 24: "IAB22-2", 25: "IAB3-9", 26: "IAB17-18", 27: "IAB19-6", 28: "IAB1-7",
    29: "IAB9-30", 30: "IAB20-7", 31: "IAB20-17", 32: "IAB7-32", 33: "IAB16-5", 34: "IAB19-34", 35: "IAB11-5",
    36: "IAB12-3", 37: "IAB11-4", 38: "IAB12-3", 39: "IAB9-30", 41: "IAB7-44", 42: "IAB7-1", 43: "IAB7-30",
    50: "IAB19-30", 51: "IAB17-12", 52: "IAB19-30", 53: "IAB3-1", 55: "IAB13-2", 56: "IAB19-30", 57: "IAB19-30",
    58: "IAB7-39", 59: "IAB22-1", 60: "IAB7-39", 61: "IAB21-3", 62: "IAB5-1", 63: "IAB12-3", 64: "IAB20-18",
    65: "IAB11-2", 66: "IAB17-18", 67: "IAB9-9", 68: "IAB9-5", 69: "IAB7-44", 71: "IAB22-3", 73: "IAB19-30",
    74: "IAB8-5", 78: "IAB22-1", 85: "IAB12-2", 86: "IAB22-3", 87: "IAB11-3", 112: "IAB7-32", 113: "IAB7-32",
    114: "IAB7-32", 115: "IAB7-32", 118: "IAB9-5", 119: "IAB9-5", 120: "IAB9-5", 121: "IAB9-5", 122: "IAB9-5",
    123: "IAB9-5", 124: "IAB9-5", 125: "IAB9-5", 126: "IAB9-5", 127: "IAB22-1", 132: "IAB1-2", 133: "IAB19-30",
    137: "IAB3-9", 138: "IAB19-3", 140: "IAB2-3", 141: "IAB2-1", 142: "IAB2-3", 143: "IAB17-13", 166: "IAB11-4",
    175: "IAB3-1", 176: "IAB13-4", 182: "IAB8-9", 183: "IAB3-5",
}  # fmt: skip


class _Refused(ValueError):
    """The request cannot be sent (the message is the bidder error's)."""


def hb_sources(extra_info: str) -> tuple[int, int]:
    """(hb_source, hb_source_video) from the host's extra info, 5 and 6 where empty or 0; ValueError
    ("malformed extra adapter info") when it does not decode."""
    if not extra_info:
        return DEFAULT_HB_SOURCE, DEFAULT_HB_SOURCE_VIDEO
    try:
        fields = go_fields(expect_object(orjson.loads(extra_info), ""), "hb_source", "hb_source_video")
        source = go_int(fields.get("hb_source"), "msft.extraAdapterInfo.HBSource")
        video = go_int(fields.get("hb_source_video"), "msft.extraAdapterInfo.HBSourceVideo")
    except (orjson.JSONDecodeError, JsonShapeError):
        raise ValueError("malformed extra adapter info") from None
    return source or DEFAULT_HB_SOURCE, video or DEFAULT_HB_SOURCE_VIDEO


def _decode_struct(obj: Any, kinds: Mapping[str, GoKind], struct: str) -> dict[str, Any]:
    """``obj`` decoded into a Go struct of ``kinds`` (null is the zero struct): the fields given, a
    null leaving a value field as it was; JsonShapeError for a value of the wrong type."""
    out: dict[str, Any] = {}
    for name, value in go_members(expect_object(obj, struct), *kinds):
        kind = kinds[name]
        if value is None and kind not in _NULLABLE:
            continue
        out[name] = go_value(value, kind, f"{struct}.{name}")
    return out


def _imp_params(imp: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """The imp's params and ``gpid`` (msft.impExtIncoming); JsonShapeError when they do not decode."""
    if "ext" not in imp:
        raise JsonShapeError(ABSENT_OBJECT)
    params: dict[str, Any] = {}
    gpid = ""
    for name, value in go_members(expect_object(imp["ext"], ""), "bidder", "gpid"):
        if name == "bidder":
            params = _decode_struct(value, _PARAMS, "openrtb_ext.ImpExtMsft")
        elif value is not None:
            gpid = go_value(value, GoKind.STRING, "msft.impExtIncoming.GPID")
    return params, gpid


def _given(value: Any) -> bool:
    """Whether Go writes an omitempty field: a bool pointer whenever set (false too), else non-zero."""
    return isinstance(value, bool) or value not in (None, 0, "")


def _outgoing_imp(
    imp: dict[str, Any], params: Mapping[str, Any], gpid: str, display_manager_ver: str
) -> dict[str, Any]:
    """The imp as sent: ``tagid``, banner size and api, ``displaymanagerver`` and the new ext."""
    out = dict(imp)
    if params.get("inv_code"):
        out["tagid"] = params["inv_code"]
    banner = imp.get("banner")
    if isinstance(banner, dict):
        banner = dict(banner)
        formats = banner.get("format")
        if banner.get("w") is None and banner.get("h") is None and formats and isinstance(formats[0], dict):
            banner["w"] = formats[0].get("w", 0)
            banner["h"] = formats[0].get("h", 0)
        if banner.get("api") is None and params.get("banner_frameworks"):
            banner["api"] = params["banner_frameworks"]
        out["banner"] = banner
    if not imp.get("displaymanagerver") and display_manager_ver:
        out["displaymanagerver"] = display_manager_ver
    appnexus = {ours: params[name] for name, ours in _OUTGOING if _given(params.get(name))}
    out["ext"] = {"appnexus": appnexus, **({"gpid": gpid} if gpid else {})}
    return go_imp(out)


def _includes_brand_category(ext: Mapping[str, Any]) -> bool:
    prebid = ext.get("prebid")
    targeting = prebid.get("targeting") if isinstance(prebid, dict) else None
    return isinstance(targeting, dict) and isinstance(targeting.get("includebrandcategory"), dict)


def _request_ext(request: Mapping[str, Any], is_amp: bool, hb_source: int) -> dict[str, Any]:
    """``request.ext`` with ``ext.appnexus`` rewritten; _Refused when either does not decode."""
    ext = request.get("ext")
    if ext is None:
        ext = {}
    if not isinstance(ext, dict):
        raise _Refused(NOT_AN_OBJECT.format(found=found(ext)))
    try:
        given = _decode_struct(ext.get("appnexus"), _REQUEST_APPNEXUS, "msft.requestExAppnexus")
    except JsonShapeError:
        raise _Refused(MALFORMED_APPNEXUS_EXT) from None
    appnexus = {name: given[name] for name in ("include_brand_category", "brand_category_uniqueness") if name in given}
    if _includes_brand_category(ext):
        appnexus["brand_category_uniqueness"] = appnexus["include_brand_category"] = True
    is_amp_value = 1 if is_amp else given.get("is_amp", 0)
    if is_amp_value:
        appnexus["is_amp"] = is_amp_value
    if hb_source:
        appnexus["hb_source"] = hb_source
    return {**ext, "appnexus": {name: value for name, value in appnexus.items() if value is not None}}


# msft.bidExtAppnexus's number fields: json name -> Go field
_BID_INTS: Mapping[str, GoKind] = {
    "bid_ad_type": GoKind.INT, "brand_id": GoKind.INT, "brand_category_id": GoKind.INT, "deal_priority": GoKind.INT,
}  # fmt: skip


@dataclass(slots=True)
class _BidFacts:
    """What msft.bidExt says about a bid."""

    bid_type: int = 0
    brand_category: int = 0
    duration: int = 0
    deal_priority: int = 0


def _duration(creative_info: Any, duration: int) -> int:
    """``creative_info.video.duration`` (``duration`` when not given); JsonShapeError when it does not decode."""
    for _, video in go_members(expect_object(creative_info, "msft.bidExtAppnexus.CreativeInfo"), "video"):
        for _, value in go_members(expect_object(video, "msft.bidExtCreative.Video"), "duration"):
            if value is not None:
                duration = go_int(value, "msft.bidExtVideo.Duration")
    return duration


def _bid_facts(ext: Any) -> _BidFacts:
    """``bid.ext`` decoded as msft.bidExt (a repeated key decodes into the same struct again);
    JsonShapeError (json-iterator's words) when it does not decode."""
    if ext is None:
        raise JsonShapeError(ABSENT_OBJECT)
    facts = _BidFacts()
    for _, appnexus in go_members(expect_object(ext, ""), "appnexus"):
        ints = _decode_struct(appnexus, _BID_INTS, "msft.bidExtAppnexus")
        facts.bid_type = ints.get("bid_ad_type", facts.bid_type)
        facts.brand_category = ints.get("brand_category_id", facts.brand_category)
        facts.deal_priority = ints.get("deal_priority", facts.deal_priority)
        for _, creative_info in go_members(appnexus or {}, "creative_info"):
            facts.duration = _duration(creative_info, facts.duration)
    return facts


def _typed(bid: dict[str, Any]) -> TypedBid:
    """The bid typed, its ``cat`` from the brand category; JsonShapeError or _Refused when it cannot be."""
    facts = _bid_facts(bid.get("ext"))
    bid_type = BID_TYPES.get(facts.bid_type)
    if bid_type is None:
        raise _Refused(f"unrecognized bid_ad_type in response: {facts.bid_type}")
    category = IAB_CATEGORIES.get(facts.brand_category)
    if category is not None:
        bid = {**bid, "cat": [category]}
    elif len(bid.get("cat") or ()) > 1:  # several categories cannot be mapped to one: none, so the bid is refused
        bid = {key: value for key, value in bid.items() if key != "cat"}
    return TypedBid(
        bid, bid_type, deal_priority=facts.deal_priority, bid_video={"duration": facts.duration, "primary_category": ""}
    )


def _typed_or_refused(bid: dict[str, Any]) -> TypedBid | BidderError:
    try:
        return _typed(bid)
    except (JsonShapeError, _Refused) as exc:
        return BidderError(str(exc))


class MsftAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        urlsplit(config.endpoint)  # ValueError where Go's url.Parse would refuse it too
        self.endpoint = config.endpoint
        self.hb_source, self.hb_source_video = hb_sources(str(config.extra.get("extra_info") or ""))

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        errors: list[BidderError] = []
        display_manager_ver = app_display_manager_version(request)
        imps: list[dict[str, Any]] = []
        member = 0
        for imp in request.get("imp") or ():
            try:
                params, gpid = _imp_params(imp)
            except JsonShapeError:
                errors.append(BidderError(f"failed to parse ext for impression id '{imp.get('id', '')}'"))
                continue
            imp_member = params.get("member", 0)
            if imp_member and member and imp_member != member:
                return [], [*errors, BidderError(MEMBER_MISMATCH)]
            member = member or imp_member
            imps.append(_outgoing_imp(imp, params, gpid, display_manager_ver))
        if not imps:
            return [], errors
        uri = with_member(self.endpoint, str(member)) if member else self.endpoint
        is_video = info.entry_point == VIDEO_ENTRY_POINT
        try:
            ext = _request_ext(
                request, info.entry_point == AMP_ENTRY_POINT, self.hb_source_video if is_video else self.hb_source
            )
        except _Refused as exc:
            return [], [*errors, BidderError(str(exc))]
        top = {**go_request_top(request), "ext": ext}
        calls = [json_call(uri, {**top, "imp": chunk}, imp_ids(chunk), _HEADERS) for chunk in chunks(imps)]
        return calls, errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        return go_typed_bids(response, _typed_or_refused, _ANSWER_WORDING)


def build(config: AdapterConfig) -> MsftAdapter:
    return MsftAdapter(config)
