"""Beachfront adapter: banner imps in one call of Beachfront's own JSON to the display endpoint, and
one OpenRTB call per video imp to the video endpoint (``extra_info``'s ``video_endpoint``, default
``reachms.bfmio.com/bid.json?exchange_id``) with ``=<appId>`` appended, ``&prebidserver`` after it
for a ``videoResponseType: "nurl"`` imp (whose body also starts with ``"isPrebid": true``).

An imp is a banner when its first format has a non-zero size, a video when it has a video object;
one with both goes both ways. Its app id is ``appId``, else ``appIds.banner``/``appIds.video`` for
that call. Floors: ``imp.bidfloor`` in another currency is converted to USD (when that fails the
``bidfloor`` param stands in with a warning, or without one the imp is dropped), the param raises a
lower floor, and a floor of 0.01 or less is sent as none. The banner call carries the page, device
and user facts and the request's ``source.ext.schain``; a video call carries the request without
``ext``, its one imp (no banner, no ext, ``secure`` from the page, a missing or zero video size
300x250), ``cur: ["USD"]`` when none, a ``devicetype`` when none (2 on a site, else 1), the IP
255.255.255.255 when an adm call has none, and a ``domain`` made from the page or the app bundle.

As in PBS-Go, a failed video imp is dropped by its position in a list from which earlier failed
imps were already removed, so after two failures the wrong imp may go (``_drop_failed``). Every call
carries the same headers: JSON, the device's ``User-Agent``, ``Accept-Language`` and ``DNT``, and
``Cookie: __io_cid=<buyeruid>``.

The display answer is a JSON array of slots; bids get the id ``<slot>Banner``. A video answer is
OpenRTB (only the first seatbid is read): an adm bid gets the id ``<impid>AdmVideo``; a nurl bid
takes its imp id and size from the call's imp at its position, the id ``<impid>NurlVideo`` and as
``crid`` the third ``:``-separated part of its ``nurl``. A bid's ``ext.duration`` above 0 (the last
one read carries over to a later bid whose ext has none, as in PBS-Go) becomes its video duration,
with its first ``cat`` as primary category. Bids are video when the call went to the video endpoint,
else banner; the currency is always USD.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import orjson

from hbserver.adapters.base import (
    JSON_HEADERS,
    AdapterConfig,
    BidderError,
    BidderResponse,
    ConversionError,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
    bad_input,
    bad_server_response,
)
from hbserver.adapters.common import (
    JsonShapeError,
    Refusal,
    expect_object,
    expect_string,
    imp_ids,
    json_call,
    with_header,
)
from hbserver.adapters.golike import (
    ABSENT_OBJECT,
    GoKind,
    ImpExtError,
    go_answer,
    go_fields,
    go_imp,
    go_int,
    go_list,
    go_members,
    go_request_top,
    go_sized_int,
    go_value,
    go_wrap_int,
    imp_bidder_params,
    set_omitempty,
)

DEFAULT_VIDEO_ENDPOINT = "https://reachms.bfmio.com/bid.json?exchange_id"
NURL_SUFFIX = "&prebidserver"
ADAPTER_NAME = "BF_PREBID_S2S"
ADAPTER_VERSION = "1.0.0"
MIN_BID_FLOOR = 0.01
DEFAULT_VIDEO_SIZE = (300, 250)
FAKE_IP = "255.255.255.255"
NO_IMPS = "no valid impressions were found in the request"
NO_APP_ID = "unable to determine the appId(s) from the supplied extension"
BAD_ANSWER = "server response failed to unmarshal as valid rtb. Run with request.debug = 1 for more info"

_PARAMS = "openrtb_ext.ExtImpBeachfront"
_APP_IDS = "openrtb_ext.ExtImpBeachfrontAppIds"
_DEVICE_PC, _DEVICE_MOBILE = 2, 1
_ZERO_SCHAIN: Mapping[str, Any] = {"complete": 0, "nodes": None, "ver": ""}

# openrtb2.BidRequest's fields (a typed re-encoding drops any other key)
_REQUEST_FIELDS = frozenset(
    "id imp site app dooh device user test at tmax wseat bseat allimps cur wlang wlangb acat bcat cattax "
    "badv bapp source regs".split()
)


class _BadImp(Refusal, ValueError):
    """An imp this adapter cannot send; ``error`` is the bidder error PBS-Go reports for it."""


class _Params(NamedTuple):
    """``imp.ext.bidder`` as Go's ExtImpBeachfront holds it."""

    app_id: str
    video_app_id: str
    banner_app_id: str
    bidfloor: float
    response_type: str

    def app_id_for(self, media: str) -> str:
        """The app id of a banner or video call; _BadImp when there is none."""
        app_id = self.app_id or (self.video_app_id if media == "video" else self.banner_app_id)
        if not app_id:
            raise _BadImp(BidderError(NO_APP_ID))
        return app_id


# --- params ----------------------------------------------------------------------------------------


def _decode_params(params: dict[str, Any]) -> _Params:
    """The params decoded field by field in document order (a null leaves a field as it was; a field
    named twice is decoded twice, ``appIds`` into the same struct); JsonShapeError names the first
    value of the wrong type."""
    app_id = video = banner = response_type = ""
    bidfloor = 0.0
    for name, value in go_members(params, "appId", "appIds", "bidfloor", "videoResponseType"):
        if value is None:
            continue
        if name == "appId":
            app_id = expect_string(value, f"{_PARAMS}.AppId")
        elif name == "videoResponseType":
            response_type = expect_string(value, f"{_PARAMS}.VideoResponseType")
        elif name == "bidfloor":
            bidfloor = float(go_value(value, GoKind.FLOAT, f"{_PARAMS}.BidFloor"))
        else:
            for key, item in go_members(expect_object(value, f"{_PARAMS}.AppIds"), "video", "banner"):
                if item is None:
                    continue
                if key == "video":
                    video = expect_string(item, f"{_APP_IDS}.Video")
                else:
                    banner = expect_string(item, f"{_APP_IDS}.Banner")
    return _Params(app_id, video, banner, bidfloor, response_type)


def _params(imp: Mapping[str, Any]) -> _Params:
    """The imp's params; _BadImp (bad input, PBS-Go's words) when ``imp.ext`` or they do not decode."""
    imp_id = imp.get("id", "")
    try:
        return _decode_params(imp_bidder_params(imp))
    except ImpExtError as exc:
        message = f"ignoring imp id={imp_id}, error while decoding extImpBidder, err: {exc}"
    except JsonShapeError as exc:
        message = f"ignoring imp id={imp_id}, error while decoding extImpBeachfront, err: {exc}"
    raise _BadImp(bad_input(message))


class _Floor(NamedTuple):
    """The floor an imp is sent with (PBS-Go's setBidFloor): ``error`` is a warning, or with ``fatal``
    the reason the imp is dropped."""

    bidfloor: float
    currency: str
    error: BidderError | None = None
    fatal: bool = False


def _floor(imp: Mapping[str, Any], params: _Params, info: RequestInfo) -> _Floor:
    """A floor in another currency converted to USD, the ``bidfloor`` param when higher, none at or
    below 0.01. A failed conversion falls back to the param with a warning when it is above 0.01;
    without one the imp is dropped."""
    floor = imp.get("bidfloor")
    floor = float(floor) if isinstance(floor, int | float) and not isinstance(floor, bool) else 0.0
    currency = imp.get("bidfloorcur")
    currency = currency if isinstance(currency, str) else ""
    if currency and currency.upper() != "USD" and floor > 0:
        try:
            floor = info.convert_currency(floor, currency, "USD")
        except ConversionError as exc:
            intro = (
                "The following error was recieved from the currency converter while attempting to convert "
                f"the imp.bidfloor value of {floor:.2f} from {currency} to USD:\n{exc}\n"
            )
            if params.bidfloor > MIN_BID_FLOOR:
                fallback = (
                    f"The provided value of imp.ext.beachfront.bidfloor, {params.bidfloor:.2f} USD "
                    "is being used as a fallback."
                )
                return _Floor(params.bidfloor, "USD", BidderError(intro + fallback))
            skipped = "A value of imp.ext.beachfront.bidfloor was not provided. The bid is being skipped."
            return _Floor(0.0, "", bad_input(intro + skipped), fatal=True)
    floor = max(floor, params.bidfloor)
    return _Floor(floor, "USD") if floor > MIN_BID_FLOOR else _Floor(0.0, "")


# --- page facts ------------------------------------------------------------------------------------


def _domain(page: str) -> str:
    """The host part of a page URL, as Beachfront's adapter cuts it (after ``//``, before ``/``)."""
    parts = page.split("//")
    return (parts[1] if len(parts) > 1 else parts[0]).split("/")[0]


def _secure(page: str) -> int:
    parts = page.split("://")
    return 1 if len(parts) > 1 and parts[0] == "https" else 0


def _text(obj: Any, name: str) -> str:
    value = obj.get(name) if isinstance(obj, dict) else None
    return value if isinstance(value, str) else ""


def _device_type(request: Mapping[str, Any]) -> int:
    """PBS-Go's fallback device type: a PC on a site, otherwise a mobile device."""
    return _DEVICE_PC if request.get("site") is not None else _DEVICE_MOBILE


# --- banner call -----------------------------------------------------------------------------------


def _is_banner(imp: Mapping[str, Any]) -> bool:
    """A banner whose first format has a non-zero width and height (PBS-Go panics on an empty
    format list; here it is no banner)."""
    banner = imp.get("banner")
    formats = banner.get("format") if isinstance(banner, dict) else None
    if not isinstance(formats, list) or not formats or not isinstance(formats[0], dict):
        return False
    return bool(formats[0].get("w")) and bool(formats[0].get("h"))


def _size(value: Any) -> int:
    """A format's int64 side as Go's ``uint64`` conversion gives it (a negative one wraps)."""
    return go_wrap_int(value, signed=False) if isinstance(value, int) and not isinstance(value, bool) else 0


def _schain(source: Any) -> Any:
    """``source.ext.schain`` as Go's SupplyChain writes it again; the zero chain when there is none
    or ``source.ext`` does not decode as ExtRequestPrebidSChain."""
    ext = source.get("ext") if isinstance(source, dict) else None
    if ext is None:
        return _ZERO_SCHAIN
    try:
        fields = go_fields(expect_object(ext, ""), "bidders", "schain")
        for bidder in go_list(fields.get("bidders"), "openrtb_ext.ExtRequestPrebidSChain.Bidders"):
            expect_string(bidder, "openrtb_ext.ExtRequestPrebidSChain.Bidders")
        return _supply_chain(fields.get("schain"))
    except JsonShapeError:
        return _ZERO_SCHAIN


def _supply_chain(value: Any) -> dict[str, Any]:
    obj = expect_object(value, "openrtb_ext.ExtRequestPrebidSChain.SChain")
    fields = go_fields(obj, "complete", "nodes", "ver", "ext")
    out: dict[str, Any] = {
        "complete": go_sized_int(fields.get("complete"), "openrtb2.SupplyChain.Complete", 8),
        "nodes": None,
        "ver": expect_string(fields.get("ver"), "openrtb2.SupplyChain.Ver"),
    }
    if fields.get("nodes") is not None:
        out["nodes"] = [_supply_chain_node(node) for node in go_list(fields["nodes"], "openrtb2.SupplyChain.Nodes")]
    if fields.get("ext") is not None:
        out["ext"] = fields["ext"]
    return out


def _supply_chain_node(value: Any) -> dict[str, Any]:
    names = ("asi", "sid", "rid", "name", "domain", "hp", "ext")
    fields = go_fields(expect_object(value, "[]openrtb2.SupplyChainNode"), *names)
    out: dict[str, Any] = {}
    for name in ("asi", "sid", "rid", "name", "domain"):
        text = expect_string(fields.get(name), f"openrtb2.SupplyChainNode.{name.upper()}")
        if text or name in ("asi", "sid"):
            out[name] = text
    if fields.get("hp") is not None:
        out["hp"] = go_sized_int(fields["hp"], "openrtb2.SupplyChainNode.HP", 8)
    if fields.get("ext") is not None:
        out["ext"] = fields["ext"]
    return out


def _banner_body(
    request: Mapping[str, Any], imps: list[dict[str, Any]], info: RequestInfo
) -> tuple[dict[str, Any] | None, list[BidderError]]:
    """Beachfront's display request for the banner imps (None when no imp is left) and the errors."""
    slots: list[dict[str, Any]] = []
    errors: list[BidderError] = []
    for imp in imps:
        try:
            params = _params(imp)
            app_id = params.app_id_for("banner")
        except _BadImp as exc:
            errors.append(exc.error)
            continue
        floor = _floor(imp, params, info)
        if floor.error is not None:
            errors.append(floor.error)
            if floor.fatal:
                continue
        formats = [f for f in imp["banner"]["format"] if isinstance(f, dict)]
        sizes = [{"w": _size(f.get("w")), "h": _size(f.get("h"))} for f in formats]
        slots.append({"slot": imp.get("id", ""), "id": app_id, "bidfloor": floor.bidfloor, "sizes": sizes})
    if not slots:
        return None, errors
    device = request.get("device")
    if _device_type(request) == _DEVICE_MOBILE:
        app = request.get("app")  # PBS-Go panics without one; here its facts are empty
        page, domain, mobile = _text(app, "bundle"), _text(app, "domain"), 1
    else:
        site = request["site"]
        page, mobile = _text(site, "page"), 0
        domain = _text(site, "domain") or _domain(page)
    secure = imps[0].get("secure")
    user = request.get("user")
    body = {
        "slots": slots,
        "domain": domain,
        "page": page,
        "referrer": "",
        "search": "",
        "secure": secure if secure is not None else _secure(page),
        "deviceOs": _text(device, "os"),
        "deviceModel": _text(device, "model"),
        "isMobile": mobile,
        "ua": _text(device, "ua"),
        "dnt": (device.get("dnt") or 0) if isinstance(device, dict) else 0,
        "user": {name: _text(user, name) for name in ("id", "buyeruid") if _text(user, name)},
        "adapterName": ADAPTER_NAME,
        "adapterVersion": ADAPTER_VERSION,
        "ip": _text(device, "ip"),
        "requestId": request.get("id", ""),
        "real204": True,
        "schain": _schain(request.get("source")),
    }
    return body, errors


# --- video calls -----------------------------------------------------------------------------------


class _VideoCall(NamedTuple):
    """One video imp's entry: its app id, ``adm``/``nurl`` ("" for an imp that failed before it got
    one) and the OpenRTB body (None likewise)."""

    app_id: str
    response_type: str
    body: dict[str, Any] | None


_FAILED = _VideoCall("", "", None)


def _sized_video(video: dict[str, Any]) -> dict[str, Any]:
    """The video with a missing or zero width or height set to 300x250's."""
    if video.get("w") and video.get("h"):
        return video
    out = dict(video)
    for name, default in zip(("w", "h"), DEFAULT_VIDEO_SIZE, strict=True):
        if not video.get(name):
            out[name] = default
    return out


def _video_base(request: Mapping[str, Any], imps: list[dict[str, Any]]) -> dict[str, Any]:
    """What every video call starts from: the request, typed, without ``ext``, with its video imps
    (as given: only the body of an imp whose floor fails keeps them, re-encoded then)."""
    base = go_request_top({key: value for key, value in request.items() if key in _REQUEST_FIELDS})
    base["imp"] = imps
    return base


def _video_call(
    base: dict[str, Any], imp: dict[str, Any], params: _Params, device_type: int, info: RequestInfo
) -> tuple[_VideoCall, _Floor]:
    """The entry for one video imp and its floor. When the floor is fatal the entry is the one PBS-Go
    keeps for the imp: its body still holds every video imp and no default ``cur``."""
    app_id = params.app_id_for("video")
    kind = "nurl" if params.response_type == "nurl" else "adm"
    body = dict(base)
    device = dict(base["device"]) if isinstance(base.get("device"), dict) else {}
    if kind == "adm" and not device.get("ip"):
        device["ip"] = FAKE_IP
    secure = 0
    site = base.get("site")
    if isinstance(site, dict) and not site.get("domain") and _text(site, "page"):
        body["site"] = {**site, "domain": _domain(site["page"])}
        secure = _secure(site["page"])
    app = base.get("app")
    if isinstance(app, dict) and not app.get("domain") and _text(app, "bundle"):
        chunks = app["bundle"].strip("_").split(".")
        if len(chunks) > 1:
            body["app"] = {**app, "domain": f"{chunks[1]}.{chunks[0]}"}
    if not device.get("devicetype"):
        device["devicetype"] = device_type
    body["device"] = device
    floor = _floor(imp, params, info)
    if floor.fatal:
        body["imp"] = [go_imp(video_imp, known_only=True) for video_imp in base["imp"]]
        return _VideoCall(app_id, kind, body), floor
    out = {key: value for key, value in imp.items() if key not in ("banner", "ext")}
    out["secure"] = secure
    set_omitempty(out, "bidfloor", floor.bidfloor)
    set_omitempty(out, "bidfloorcur", floor.currency)
    if isinstance(imp.get("video"), dict):
        out["video"] = _sized_video(imp["video"])
    if not body.get("cur"):
        body["cur"] = ["USD"]
    body["imp"] = [go_imp(out, known_only=True)]
    return _VideoCall(app_id, kind, body), floor


def _drop_failed(calls: list[_VideoCall], failed: Iterable[int]) -> list[_VideoCall]:
    """PBS-Go's removal of failed video imps: each by its original position in the list as it is
    after the earlier removals (so a later good imp can go instead); a position past the end
    empties the list."""
    for index in failed:
        if len(calls) < index + 1:
            return []
        del calls[index]
    return calls


def _video_calls(
    request: Mapping[str, Any], imps: list[dict[str, Any]], info: RequestInfo
) -> tuple[list[_VideoCall], list[BidderError]]:
    base = _video_base(request, imps)
    device_type = _device_type(request)
    calls: list[_VideoCall] = []
    failed: list[int] = []
    errors: list[BidderError] = []
    for index, imp in enumerate(imps):
        try:
            call, floor = _video_call(base, imp, _params(imp), device_type, info)
        except _BadImp as exc:
            failed.append(index)
            errors.append(exc.error)
            calls.append(_FAILED)
            continue
        if floor.error is not None:
            errors.append(floor.error)
            if floor.fatal:
                failed.append(index)
        calls.append(call)
    return _drop_failed(calls, failed), errors


# --- the adapter -----------------------------------------------------------------------------------


def _video_endpoint(extra_info: str) -> str:
    """``video_endpoint`` from the host's extra info (the default when empty or not given);
    ValueError when the extra info does not decode."""
    if not extra_info:
        return DEFAULT_VIDEO_ENDPOINT
    try:
        data = orjson.loads(extra_info)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"invalid extra info: {exc}") from None
    try:
        endpoint = expect_string(
            go_fields(expect_object(data, ""), "video_endpoint").get("video_endpoint"),
            "beachfront.ExtraInfo.VideoEndpoint",
        )
    except JsonShapeError as exc:
        raise ValueError(f"invalid extra info: {exc}") from None
    return endpoint or DEFAULT_VIDEO_ENDPOINT


def _headers(request: Mapping[str, Any]) -> dict[str, str]:
    headers = dict(JSON_HEADERS)
    device = request.get("device")
    if isinstance(device, dict):
        with_header(headers, "User-Agent", device.get("ua"))
        with_header(headers, "Accept-Language", device.get("language"))
        with_header(headers, "DNT", device.get("dnt"))
    return headers


class BeachfrontAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.banner_endpoint = config.endpoint
        self.video_endpoint = _video_endpoint(str(config.extra.get("extra_info") or ""))

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        banner_imps = [imp for imp in imps if _is_banner(imp)]
        video_imps = [imp for imp in imps if imp.get("video") is not None]
        if not banner_imps and not video_imps:
            return [], [BidderError(NO_IMPS)]
        errors: list[BidderError] = []
        banner = None
        if banner_imps:
            banner, errors = _banner_body(request, banner_imps, info)
        videos: list[_VideoCall] = []
        if video_imps:
            videos, video_errors = _video_calls(request, video_imps, info)
            errors += video_errors
        adm = [call for call in videos if call.response_type == "adm"]
        nurl = [call for call in videos if call.response_type == "nurl"]
        headers = _headers(request)
        user = request.get("user")
        if _text(user, "buyeruid") and (banner is not None or adm or nurl):
            headers["Cookie"] = "__io_cid=" + user["buyeruid"]
        calls = []
        if banner is not None:
            calls.append(json_call(self.banner_endpoint, banner, (slot["slot"] for slot in banner["slots"]), headers))
        for call in adm:
            uri = f"{self.video_endpoint}={call.app_id}"
            calls.append(json_call(uri, call.body, _imp_ids(call.body), headers))
        for call in nurl:
            uri = f"{self.video_endpoint}={call.app_id}{NURL_SUFFIX}"
            calls.append(json_call(uri, {"isPrebid": True, **(call.body or {})}, _imp_ids(call.body), headers))
        return calls, errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        if response.status != 200:
            return None, _status_errors(response.status, call.uri)
        try:
            sent = expect_object(orjson.loads(call.body or b""), "")
        except (orjson.JSONDecodeError, JsonShapeError) as exc:
            return None, [BidderError(str(exc))]
        bids = self._answer_bids(response.body, call.uri, sent)
        if bids is None:
            return None, [bad_server_response(BAD_ANSWER)]
        bid_type = "video" if call.uri.split("=")[0] == self.video_endpoint else "banner"
        result = BidderResponse()
        duration = 0
        for bid in bids:
            try:
                duration = _duration(bid, duration)
            except JsonShapeError:
                result.bids.append(TypedBid(bid, bid_type))
                continue
            if duration > 0:
                categories = bid.get("cat") or []
                video = {"duration": duration, "primary_category": categories[0] if categories else ""}
                result.bids.append(TypedBid(bid, bid_type, bid_video=video))
            else:
                result.bids.append(TypedBid(bid, bid_type))
        return result, []

    @staticmethod
    def _answer_bids(body: bytes, uri: str, sent: Mapping[str, Any]) -> list[dict[str, Any]] | None:
        """The answer's bids: the first seatbid's of an OpenRTB answer, else those of a display answer
        (a list of slots); None when it is neither."""
        try:
            answer = go_answer(body)
        except JsonShapeError:
            answer = None
        if answer is None or not answer.seatbids:
            return _slot_bids(body)
        bids = answer.seatbids[0][1]
        if not uri.endswith(NURL_SUFFIX):
            for bid in bids:
                bid["id"] = f"{bid['impid']}AdmVideo"
            return bids
        imps = sent.get("imp")
        imps = imps if isinstance(imps, list) else []
        out = []
        for bid, imp in zip(bids, imps, strict=False):  # PBS-Go panics on a bid past the imps
            imp = imp if isinstance(imp, dict) else {}
            video = imp.get("video") if isinstance(imp.get("video"), dict) else {}
            bid["impid"] = imp.get("id") or ""
            bid["id"] = f"{bid['impid']}NurlVideo"
            set_omitempty(bid, "crid", _nurl_crid(bid.get("nurl") or ""))
            set_omitempty(bid, "w", video.get("w") or 0)
            set_omitempty(bid, "h", video.get("h") or 0)
            out.append(bid)
        return out


def _status_errors(status: int, uri: str) -> list[BidderError]:
    """What a non-200 answer gives: nothing for 204, else one error naming the status and the URI."""
    if status == 204:
        return []
    text = f"status code {status} from {uri}. Run with request.debug = 1 for more info"
    if status >= 500:
        return [bad_server_response(f"server error {text}")]
    if status >= 400:
        return [bad_input(f"request error {text}")]
    return [BidderError(f"unexpected {text}")]


def _imp_ids(body: Mapping[str, Any] | None) -> list[str]:
    return imp_ids((body or {}).get("imp") or ())


def _nurl_crid(nurl: str) -> str:
    """The creative id in a nurl: its third ``:``-separated part ("" with none; PBS-Go panics on a
    nurl with exactly one ``:``)."""
    parts = nurl.split(":")
    return parts[2] if len(parts) > 2 else ""


def _duration(bid: Mapping[str, Any], previous: int) -> int:
    """``ext.duration`` decoded into the duration PBS-Go reuses from bid to bid: a bid whose ext
    names none keeps ``previous``; JsonShapeError when the ext does not decode (or is absent)."""
    ext = bid.get("ext")
    if ext is None:
        raise JsonShapeError(ABSENT_OBJECT)
    duration = previous
    for _, value in go_members(expect_object(ext, ""), "duration"):
        if value is not None:
            duration = go_int(value, "beachfront.beachfrontVideoBidExtension.Duration")
    return duration


_SLOT_KINDS = {"crid": str, "slot": str, "adm": str}


def _slot_bids(body: bytes) -> list[dict[str, Any]] | None:
    """The bids of a display answer (a JSON array of slots, or null); None when it is not one."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if data is None:
        return []
    if not isinstance(data, list):
        return None
    bids = []
    for item in data:
        if item is not None and not isinstance(item, dict):
            return None
        fields = go_fields(item or {}, "crid", "price", "w", "h", "slot", "adm")
        slot: dict[str, Any] = {"crid": "", "price": 0.0, "w": 0, "h": 0, "slot": "", "adm": ""}
        for name, value in fields.items():
            if value is None:
                continue
            if name in _SLOT_KINDS and not isinstance(value, str):
                return None
            if name == "price" and (isinstance(value, bool) or not isinstance(value, int | float)):
                return None
            if name in ("w", "h") and _size(value) != value:
                return None
            slot[name] = value
        bid: dict[str, Any] = {"id": f"{slot['slot']}Banner", "impid": slot["slot"], "price": slot["price"]}
        for name in ("adm", "crid", "w", "h"):
            set_omitempty(bid, name, slot[name])
        bids.append(bid)
    return bids


def build(config: AdapterConfig) -> BeachfrontAdapter:
    return BeachfrontAdapter(config)
