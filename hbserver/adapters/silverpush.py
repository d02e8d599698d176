"""SilverPush adapter: one OpenRTB 2.5 call per imp to the configured endpoint.

Each call carries one imp, banner or video (an imp with both loses both, as PBS-Go's copy does),
its floor the params' ``bidfloor`` (when zero: 0.05 for a banner, 0.1 for a video). A banner
without ``w``/``h`` takes its first format's size; a video gets ``maxduration`` 120 when it has
none, swaps in ``minduration`` when the maximum is below it, and must name ``api``, ``mimes`` and
``protocols``. The site's (else the app's) publisher id becomes the params' ``publisherId``, the
request ext ``{"bc": "sp_pb_ortb_1.0.0", "publisherId": ...}``; ``user.ext.data.eids`` with an id
replaces ``user.ext`` (``{"eids": ...}``); the device's OS and type are read from its user agent.
Bids are typed by ``mtype`` (1 banner, 2 video, else no type); the answer's currency is kept.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
    bad_input,
)
from hbserver.adapters.common import (
    AnswerWording,
    JsonShapeError,
    Refusal,
    banner_sized_by_first_format,
    expect_object,
    json_call,
    json_headers,
)
from hbserver.adapters.golike import (
    NOT_AN_OBJECT,
    GoKind,
    go_fields,
    go_imp,
    go_list,
    go_request_top,
    go_typed_bids,
    go_value,
)
from hbserver.adapters.steps import ParamsSpec

BIDDER_CONFIG = "sp_pb_ortb_1.0.0"
_PARAMS = ParamsSpec.of(
    {
        "struct": "openrtb_ext.ImpExtSilverpush",
        "fields": {"publisherId": ["PublisherId", "string"], "bidfloor": ["BidFloor", "float64"]},
    }
)
_DEFAULT_FLOORS = (("banner", 0.05), ("video", 0.1))
_VIDEO_REQUIRED = ("api", "mimes", "protocols")
_MOBILE = re.compile(r"(ios|ipod|ipad|iphone|android)")
_CTV = re.compile(
    r"(smart[-]?tv|hbbtv|appletv|googletv|hdmi|netcast\.tv|viera|nettv|roku|\bdtv\b|sonydtv|inettvbrowser|\btv\b)"
)
_IOS = re.compile(r"(iPhone|iPod|iPad)")
# (text in the user agent, OS) in the order PBS-Go looks; iOS is found by _IOS after Windows
_OS_MARKERS = (("Mac OS X", "macOS"), ("Android", "Android"), ("Linux", "Linux"))
_ANSWER_WORDING = AnswerWording(status_error=bad_input, not_an_object=NOT_AN_OBJECT, body_error=BidderError)
_BID_TYPES = {1: "banner", 2: "video"}


class _Dropped(Refusal):
    """See ``common.Refusal``."""


def os_of(ua: str) -> str:
    if "Windows" in ua:
        return "Windows"
    if _IOS.search(ua):
        return "iOS"
    return next((os for marker, os in _OS_MARKERS if marker in ua), "Unknown")


def device_type_of(ua: str) -> int:
    """1 (mobile), 3 (connected TV) or 2 (personal computer), read from the user agent."""
    lowered = ua.lower()
    if _MOBILE.search(lowered):
        return 1
    return 3 if _CTV.search(lowered) else 2


def _by_media_type(imp: Mapping[str, Any]) -> dict[str, Any]:
    """The imp with its video dropped when it has a banner and its banner dropped when it has a video."""
    out = dict(imp)
    if imp.get("banner") is not None:
        out.pop("video", None)
    if imp.get("video") is not None:
        out.pop("banner", None)
    return out


def _with_publisher(request: dict[str, Any], publisher_id: str) -> None:
    """The site's publisher id set (the rest of the publisher kept), else the app's publisher replaced."""
    site, app = request.get("site"), request.get("app")
    if isinstance(site, Mapping):
        publisher = site.get("publisher")
        request["site"] = {
            **site,
            "publisher": {**(publisher if isinstance(publisher, Mapping) else {}), "id": publisher_id},
        }
    elif isinstance(app, Mapping):
        request["app"] = {**app, "publisher": {"id": publisher_id}}


def _eids_of(data: Any) -> list[Any]:
    """``user.ext.data`` decoded as openrtb_ext.ExtUser, its eids; JsonShapeError where Go fails."""
    fields = go_fields(expect_object(data, "openrtb_ext.ExtUser"), "consent", "prebid", "eids")
    go_value(fields.get("consent"), GoKind.STRING, "openrtb_ext.ExtUser.Consent")
    prebid = go_fields(expect_object(fields.get("prebid"), "openrtb_ext.ExtUser.Prebid"), "buyeruids")
    for uid in expect_object(prebid.get("buyeruids"), "openrtb_ext.ExtUserPrebid.BuyerUIDs").values():
        go_value(uid, GoKind.STRING, "openrtb_ext.ExtUserPrebid.BuyerUIDs")
    eids = go_list(fields.get("eids"), "openrtb_ext.ExtUser.Eids")
    for eid in eids:
        eid_fields = go_fields(expect_object(eid, "openrtb2.EID"), "source", "uids")
        go_value(eid_fields.get("source"), GoKind.STRING, "openrtb2.EID.Source")
        for uid in go_list(eid_fields.get("uids"), "openrtb2.EID.UIDs"):
            uid_fields = go_fields(expect_object(uid, "openrtb2.UID"), "id", "atype")
            go_value(uid_fields.get("id"), GoKind.STRING, "openrtb2.UID.ID")
            go_value(uid_fields.get("atype"), GoKind.INT, "openrtb2.UID.AType")
    return eids


def _has_an_id(eids: list[Any]) -> bool:
    for eid in eids:
        uids = go_fields(eid or {}, "uids").get("uids") or []
        if uids and (go_fields(uids[0] or {}, "id").get("id") or ""):
            return True
    return False


def _with_user(request: dict[str, Any]) -> None:
    """``user.ext`` replaced by ``{"eids": ...}`` when ``user.ext.data.eids`` has an id; _Dropped
    when ``user.ext`` or its ``data`` does not decode."""
    user = request.get("user")
    if not isinstance(user, Mapping) or "ext" not in user:
        return
    ext = user["ext"]
    if ext is not None and not isinstance(ext, Mapping):
        raise _Dropped(bad_input("Invalid user.ext."))
    if not ext or "data" not in ext:
        return
    try:
        eids = _eids_of(ext["data"])
    except JsonShapeError:
        raise _Dropped(bad_input("Invalid user.ext.data.")) from None
    if _has_an_id(eids):
        request["user"] = {**user, "ext": {"eids": eids}}


def _with_device(request: dict[str, Any]) -> None:
    device = request.get("device")
    if not isinstance(device, Mapping):
        return
    ua = device.get("ua")
    if isinstance(ua, str) and ua:
        request["device"] = {**device, "os": os_of(ua), "devicetype": device_type_of(ua)}


def _sized_banner(banner: Mapping[str, Any]) -> dict[str, Any]:
    if banner.get("w") is not None and banner.get("h") is not None:
        return dict(banner)
    sized = banner_sized_by_first_format(banner)
    if sized is None:
        raise _Dropped(bad_input("No sizes provided for Banner."))
    return sized


def _checked_video(video: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(video)
    minimum, maximum = _number(out.get("minduration")), _number(out.get("maxduration")) or 120
    if maximum < minimum:
        maximum, minimum = minimum, 0
    out["minduration"], out["maxduration"] = minimum, maximum
    if any(out.get(name) is None for name in _VIDEO_REQUIRED) or minimum < 0:
        raise _Dropped(bad_input("Invalid or missing video field(s)"))
    return out


def _number(value: Any) -> int | float:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _imp_for_exchange(imp: dict[str, Any], floor: float) -> dict[str, Any]:
    out = dict(imp)
    if floor:
        out["bidfloor"] = floor
    else:
        default = next((value for kind, value in _DEFAULT_FLOORS if imp.get(kind) is not None), None)
        if default is not None:
            out["bidfloor"] = default
    if isinstance(imp.get("banner"), Mapping):
        out["banner"] = _sized_banner(imp["banner"])
    if isinstance(imp.get("video"), Mapping):
        out["video"] = _checked_video(imp["video"])
    return go_imp(out)


def request_for(request: Mapping[str, Any], imp: Mapping[str, Any]) -> dict[str, Any]:
    """The body of the call for one imp (see the module docstring); _Dropped when it cannot be made."""
    try:
        params = _PARAMS.read(imp)
    except JsonShapeError as exc:
        raise _Dropped(bad_input(str(exc))) from None
    publisher_id = params.get("publisherId", "")
    if not publisher_id:
        raise _Dropped(bad_input("Missing publisherId parameter."))
    body = go_request_top(request)
    _with_publisher(body, publisher_id)
    _with_user(body)
    _with_device(body)
    body["ext"] = {"bc": BIDDER_CONFIG, "publisherId": publisher_id}
    body["imp"] = [_imp_for_exchange(_by_media_type(imp), params.get("bidfloor", 0))]
    return body


class SilverPushAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint
        self.headers = json_headers(X_Openrtb_Version="2.5")

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        calls: list[RequestData] = []
        errors: list[BidderError] = []
        for imp in request.get("imp") or ():
            try:
                body = request_for(request, imp)
            except _Dropped as dropped:
                errors.append(dropped.error)
                continue
            calls.append(json_call(self.endpoint, body, [imp.get("id", "")], self.headers))
        return calls, errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        return go_typed_bids(response, lambda bid: TypedBid(bid, _BID_TYPES.get(bid.get("mtype"), "")), _ANSWER_WORDING)


def build(config: AdapterConfig) -> SilverPushAdapter:
    return SilverPushAdapter(config)
