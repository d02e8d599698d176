"""AppNexus (Xandr / Microsoft Curate) adapter: OpenRTB 2.5 to ``ib.adnxs.com/openrtb2``.

What it changes in the request, per imp: the params move to ``imp.ext.appnexus`` (placement id,
keywords flattened to ``k=v,k=v2,k``, traffic source, payment rule, private sizes, external
codes) beside ``gpid``; ``inv_code`` becomes ``tagid``; ``reserve`` is the floor when the imp has
none; a banner without ``w``/``h`` takes its first format's and gets ``pos`` from ``position``; an
app's ``ext.prebid`` source and version fill a missing ``displaymanagerver``. At request level:
``ext.appnexus`` carries ``hb_source`` (5, 6 for video), ``is_amp``, the brand-category flags, and
``source.ext.schain`` moves to ``ext.schain``. The member goes into the URL as ``member_id`` and
must be the same for all imps. At most 10 imps per call; a video request whose params ask for
``generate_ad_pod_id`` sends one call group per pod (imp ids ``<pod>_<n>``), each with its own id.

Bids are typed by ``ext.appnexus.bid_ad_type`` (0 banner, 1 video, 3 native); the brand category
id becomes ``cat`` through the table below.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from hbserver.adapters.base import (
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
    app_display_manager_version,
    imp_ids,
    items_of,
    seat_bids,
    string_param,
    typed_bid_response,
)
from hbserver.adapters.golike import go_string_int, with_query_value
from hbserver.numbers import INT64, NumberError, int_or

DEFAULT_PLATFORM_ID = 5
MAX_IMPS_PER_REQUEST = 10
AMP_ENTRY_POINT = "openrtb2-amp"
VIDEO_ENTRY_POINT = "openrtb2-video"
_POSITIONS = {"above": 1, "below": 3}  # OpenRTB banner.pos: above / below the fold
BID_TYPES = {0: "banner", 1: "video", 3: "native"}

# AppNexus brand category id -> IAB category (the table PBS ships for this bidder).
IAB_CATEGORIES: dict[int, str] = {
    1: "IAB20-3", 2: "IAB18-5", 3: "IAB10-1", 4: "IAB2-3", 5: "IAB19-8", 7: "IAB18-1", 8: "IAB14-1",
    9: "IAB5-1", 10: "IAB4-5", 11: "IAB13-4", 12: "IAB8-7", 13: "IAB19-2", 14: "IAB7-1", 15: "IAB20-18",
    16: "IAB10-7", 17: "IAB19-18", 18: "IAB13-6", 19: "IAB18-4", 20: "IAB1-5", 21: "IAB1-6", 22: "IAB19-28",
    23: "IAB19-13", 24: "IAB22-2", 25: "IAB3-9", 26: "IAB17-26", 27: "IAB19-6", 28: "IAB1-7", 29: "IAB9-5",
    30: "IAB20-7", 31: "IAB20-17", 32: "IAB7-32", 33: "IAB16-5", 34: "IAB19-34", 37: "IAB11-4", 39: "IAB9-30",
    41: "IAB7-44", 51: "IAB17-12", 53: "IAB3-1", 55: "IAB13-2", 61: "IAB21-3", 62: "IAB6-4", 63: "IAB15-10",
    65: "IAB11-2", 67: "IAB9-9", 69: "IAB7-1", 71: "IAB22-2", 74: "IAB8-5", 87: "IAB3-7",
}



class _BadParams(ValueError):
    """An imp this adapter cannot send (the message is the bidder error's)."""


@dataclass(slots=True)
class _Params:
    placement_id: int
    inv_code: str
    member: str
    keywords: str
    traffic_source_code: str
    reserve: float
    position: str
    use_pmt_rule: bool | None
    private_sizes: Any
    generate_ad_pod_id: bool
    ext_inv_code: str
    external_imp_id: str


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _string(params: dict[str, Any], name: str) -> str:
    return string_param(params, name, _BadParams, "appnexus params")


def _int_or_digits(params: dict[str, Any], name: str) -> int:
    """An id given as a number or as a string of digits ("" and absent are 0): PBS-Go's
    ``jsonutil.StringInt`` (jsonparser.ParseInt: an optional minus, ASCII digits, within int64)."""
    value = params.get(name)
    if value is None or value == "":
        return 0
    try:
        number = go_string_int(value)
    except NumberError as exc:
        raise _BadParams(f"appnexus params: {name}: {exc}") from None
    if number is None:
        raise _BadParams(f"appnexus params: {name} must be an integer or a string of digits")
    return number


def _flag(params: dict[str, Any], name: str) -> bool | None:
    value = params.get(name)
    if value is not None and not isinstance(value, bool):
        raise _BadParams(f"appnexus params: {name} must be a boolean")
    return value


def _pairs(key: Any, values: Any) -> Iterator[str]:
    if values is not None and not (isinstance(values, list) and all(isinstance(v, str) for v in values)):
        raise _BadParams("appnexus params: keywords values must be arrays of strings")
    if not values:
        yield str(key)
        return
    for value in values:
        yield f"{key}={value}"


def _keywords(value: Any) -> str:
    """keywords as a string, a list of {key, value: [...]} or an object of key -> [values]."""
    if value is None or isinstance(value, str):
        return value or ""
    if isinstance(value, list):
        if not all(isinstance(kv, dict) for kv in value):
            raise _BadParams("appnexus params: keywords must be a string, an array of {key, value} or an object")
        return ",".join(pair for kv in value for pair in _pairs(kv.get("key", ""), kv.get("value")))
    if isinstance(value, dict):
        return ",".join(pair for key, values in value.items() for pair in _pairs(key, values))
    raise _BadParams("appnexus params: keywords must be a string, an array of {key, value} or an object")


def _params(bidder: Any) -> _Params:
    if bidder is None:
        bidder = {}
    if not isinstance(bidder, dict):
        raise _BadParams("appnexus params: imp.ext.bidder must be an object")
    member = bidder.get("member")
    if _is_int(member):
        member = str(member)
    elif member is not None and not isinstance(member, str):
        raise _BadParams("appnexus params: member must be an integer or a string")
    reserve = bidder.get("reserve", 0)
    if not _is_number(reserve):
        raise _BadParams("appnexus params: reserve must be a number")
    use_pmt_rule = _flag(bidder, "use_pmt_rule")
    if use_pmt_rule is None:
        use_pmt_rule = _flag(bidder, "use_payment_rule")  # the older spelling, when the new one is absent
    return _Params(
        placement_id=_int_or_digits(bidder, "placement_id") or _int_or_digits(bidder, "placementId"),
        inv_code=_string(bidder, "inv_code") or _string(bidder, "invCode"),
        member=member or "",
        keywords=_keywords(bidder.get("keywords")),
        traffic_source_code=_string(bidder, "traffic_source_code") or _string(bidder, "trafficSourceCode"),
        reserve=reserve,
        position=_string(bidder, "position"),
        use_pmt_rule=use_pmt_rule,
        private_sizes=bidder.get("private_sizes"),
        generate_ad_pod_id=bool(_flag(bidder, "generate_ad_pod_id")),
        ext_inv_code=_string(bidder, "ext_inv_code"),
        external_imp_id=_string(bidder, "external_imp_id"),
    )


def _imp_ext(params: _Params, gpid: str) -> dict[str, Any]:
    """The outgoing imp.ext: only ``appnexus`` (empty values left out) and ``gpid``."""
    ours: dict[str, Any] = {}
    if params.placement_id:
        ours["placement_id"] = params.placement_id
    if params.keywords:
        ours["keywords"] = params.keywords
    if params.traffic_source_code:
        ours["traffic_source_code"] = params.traffic_source_code
    if params.use_pmt_rule is not None:
        ours["use_pmt_rule"] = params.use_pmt_rule
    if params.private_sizes is not None:
        ours["private_sizes"] = params.private_sizes
    if params.ext_inv_code:
        ours["ext_inv_code"] = params.ext_inv_code
    if params.external_imp_id:
        ours["external_imp_id"] = params.external_imp_id
    ext: dict[str, Any] = {"appnexus": ours}
    if gpid:
        ext["gpid"] = gpid
    return ext


def _build_imp(imp: dict[str, Any], display_manager_ver: str) -> tuple[dict[str, Any], _Params]:
    """A new imp for the outgoing request (the one given is left as it is) and its params."""
    ext = imp.get("ext")
    if not isinstance(ext, dict):
        raise _BadParams("appnexus params: imp.ext must be an object")
    params = _params(ext.get("bidder"))
    gpid = ext.get("gpid") or ""
    if not isinstance(gpid, str):
        raise _BadParams("imp.ext.gpid must be a string")
    if not params.placement_id and not (params.inv_code and params.member):
        raise _BadParams("No placement or member+invcode provided")
    out = dict(imp)
    if params.inv_code:
        out["tagid"] = params.inv_code
    floor = imp.get("bidfloor")
    if not (_is_number(floor) and floor > 0) and params.reserve > 0:
        out["bidfloor"] = params.reserve
    banner = imp.get("banner")
    if isinstance(banner, dict):
        banner = dict(banner)
        if params.position in _POSITIONS:
            banner["pos"] = _POSITIONS[params.position]
        formats = banner.get("format")
        if banner.get("w") is None and banner.get("h") is None and formats and isinstance(formats[0], dict):
            banner["w"] = formats[0].get("w", 0)
            banner["h"] = formats[0].get("h", 0)
        out["banner"] = banner
    if not imp.get("displaymanagerver") and display_manager_ver:
        out["displaymanagerver"] = display_manager_ver
    out["ext"] = _imp_ext(params, gpid)
    return out, params


def with_member(endpoint: str, member: str) -> str:
    """The endpoint with ``member_id`` set in its query (parameters sorted by name, as Go encodes)."""
    return with_query_value(endpoint, "member_id", member)


def _appnexus_ext(ext: dict[str, Any], is_amp: int, hb_source: int) -> dict[str, Any]:
    """``ext.appnexus``: the known fields of any given one, brand-category flags, AMP, source."""
    given = ext.get("appnexus")
    if given is None:
        given = {}
    if not isinstance(given, dict):
        raise _BadParams("request.ext.appnexus must be an object")
    out: dict[str, Any] = {}
    for name in ("include_brand_category", "brand_category_uniqueness"):
        value = given.get(name)
        if value is not None:
            if not isinstance(value, bool):
                raise _BadParams(f"request.ext.appnexus.{name} must be a boolean")
            out[name] = value
    adpod_id = given.get("adpod_id")
    if adpod_id is not None and not isinstance(adpod_id, str):
        raise _BadParams("request.ext.appnexus.adpod_id must be a string")
    prebid = ext.get("prebid")
    targeting = prebid.get("targeting") if isinstance(prebid, dict) else None
    if isinstance(targeting, dict) and isinstance(targeting.get("includebrandcategory"), dict):
        out["brand_category_uniqueness"] = True
        out["include_brand_category"] = True
    if is_amp:
        out["is_amp"] = is_amp
    if hb_source:
        out["hb_source"] = hb_source
    if adpod_id:
        out["adpod_id"] = adpod_id
    return out


def _move_schain(request: dict[str, Any], out: dict[str, Any], ext: dict[str, Any]) -> None:
    """OpenRTB 2.5's ``source.ext.schain`` goes to ``ext.schain``, where AppNexus reads it."""
    source = request.get("source")
    if not isinstance(source, dict):
        return
    source_ext = source.get("ext")
    if not isinstance(source_ext, dict) or "schain" not in source_ext:
        return
    rest = {key: value for key, value in source_ext.items() if key != "schain"}
    new_source = {key: value for key, value in source.items() if key != "ext"}
    if rest:
        new_source["ext"] = rest
    out["source"] = new_source
    ext["schain"] = source_ext["schain"]


def chunks(imps: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    for start in range(0, len(imps), MAX_IMPS_PER_REQUEST):
        yield imps[start : start + MAX_IMPS_PER_REQUEST]


def _pods(imps: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Imps grouped by pod: the part of the imp id before the first ``_``."""
    pods: dict[str, list[dict[str, Any]]] = {}
    for imp in imps:
        pods.setdefault(str(imp.get("id", "")).split("_", 1)[0], []).append(imp)
    return pods


def _int_field(data: dict[str, Any], name: str) -> int:
    value = data.get(name, 0)
    if value is None:
        return 0
    if not _is_int(value):
        raise _BadParams(f"bid.ext.appnexus.{name} must be an integer")
    return value


class AppnexusAdapter(AnswerAdapter):
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint
        platform_id = str(config.extra.get("platform_id", ""))
        self.hb_source = int_or(platform_id, DEFAULT_PLATFORM_ID, INT64)  # strconv.Atoi, else the default
        # Ad pod ids (63-bit, non-negative); tests replace it with a constant.
        self.random_int: Callable[[], int] = lambda: random.getrandbits(63)

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        errors: list[BidderError] = []
        display_manager_ver = app_display_manager_version(request)
        imps: list[dict[str, Any]] = []
        member = ""
        generate_pod_id: bool | None = None
        for imp in request.get("imp") or ():
            try:
                out, params = _build_imp(imp, display_manager_ver)
            except _BadParams as exc:
                errors.append(bad_input(str(exc)))
                continue
            if params.member:
                if not member:
                    member = params.member
                elif member != params.member:
                    errors.append(bad_input(
                        "all request.imp[i].ext.prebid.bidder.appnexus.member params must match. "
                        f"Request contained member IDs {member} and {params.member}"
                    ))
                    return [], errors
            if generate_pod_id is None:
                generate_pod_id = params.generate_ad_pod_id
            elif generate_pod_id != params.generate_ad_pod_id:
                errors.append(bad_input("generate ad pod option should be same for all pods in request"))
                return [], errors
            imps.append(out)
        if not imps:
            return [], errors

        uri = with_member(self.endpoint, member) if member else self.endpoint
        is_video = int(info.entry_point == VIDEO_ENTRY_POINT)
        ext = request.get("ext")
        if ext is not None and not isinstance(ext, dict):
            return [], [*errors, bad_input("request.ext must be an object")]
        ext = dict(ext or {})
        try:
            appnexus = _appnexus_ext(ext, int(info.entry_point == AMP_ENTRY_POINT), self.hb_source + is_video)
        except _BadParams as exc:
            return [], [*errors, bad_input(str(exc))]
        base = dict(request)
        _move_schain(request, base, ext)
        base["ext"] = ext

        calls: list[RequestData] = []
        if is_video and generate_pod_id:
            for pod in _pods(imps).values():
                ext["appnexus"] = {**appnexus, "adpod_id": str(self.random_int())}
                calls.extend(self._calls(base, pod, uri))
        else:
            ext["appnexus"] = appnexus
            calls.extend(self._calls(base, imps, uri))
        return calls, errors

    @staticmethod
    def _calls(base: dict[str, Any], imps: list[dict[str, Any]], uri: str) -> Iterator[RequestData]:
        for chunk in chunks(imps):
            base["imp"] = chunk
            yield RequestData("POST", uri, orjson.dumps(base), imp_ids=imp_ids(chunk))

    def bids_from(
        self, request: dict[str, Any], call: RequestData, data: dict[str, Any]
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        bids = (bid for seatbid in items_of(data.get("seatbid")) for bid in seat_bids(seatbid))
        return typed_bid_response(bids, self._typed_or_refused, data.get("cur") or "USD")

    @classmethod
    def _typed_or_refused(cls, bid: Any) -> TypedBid | BidderError:
        try:
            return cls._typed(bid)
        except _BadParams as exc:
            return bad_server_response(str(exc))

    @staticmethod
    def _typed(bid: Any) -> TypedBid:
        if not isinstance(bid, dict):
            raise _BadParams("a bid is not a JSON object")
        ext = bid.get("ext")
        if not isinstance(ext, dict):
            raise _BadParams(f"bid {bid.get('id')}: ext must be an object")
        ours = ext.get("appnexus") or {}
        if not isinstance(ours, dict):
            raise _BadParams(f"bid {bid.get('id')}: ext.appnexus must be an object")
        bid_type = BID_TYPES.get(_int_field(ours, "bid_ad_type"))
        if bid_type is None:
            raise _BadParams(f"Unrecognized bid_ad_type in response from appnexus: {ours['bid_ad_type']}")
        creative = ours.get("creative_info")
        video = creative.get("video") if isinstance(creative, dict) else None
        duration = _int_field(video, "duration") if isinstance(video, dict) else 0
        category = IAB_CATEGORIES.get(_int_field(ours, "brand_category_id"))
        if category is not None:
            bid["cat"] = [category]
        elif len(bid.get("cat") or ()) > 1:
            del bid["cat"]  # several categories cannot be mapped to one: no category, so the bid is refused
        return TypedBid(
            bid, bid_type,
            deal_priority=_int_field(ours, "deal_priority"),
            bid_video={"duration": duration, "primary_category": ""},
        )


def build(config: AdapterConfig) -> AppnexusAdapter:
    return AppnexusAdapter(config)
