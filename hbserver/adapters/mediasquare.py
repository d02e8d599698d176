"""Mediasquare adapter (PBS-Go adapters/mediasquare): one call in Mediasquare's own words, not
OpenRTB, and an answer in its words too.

The call carries one ``code`` per imp whose ext and params decode and that has a usable medium (a
video, a banner with formats or with both ``w`` and ``h``, a native with a request): its owner and
code, the imp's tagid, the request and imp ids, its media and its floor keyed by size (``WxH``, or
``*`` for video and native). With them: the GDPR facts (``regs.gdpr`` = 1; the user's consent, else
``user.ext``'s ``consent`` or ``gdpr`` as Go's ``fmt`` prints it), ``regs.ext.dsa``, the buyeruid,
the test flag and the PBS version (``prebid-test-version`` in a test request, ``n/a`` without one),
and the request's device, app, site and user (``tech``). The call is made even without codes.

Each answer item becomes a bid: a video when it has ``video``, a native when it has ``native``, else
a banner; its ``dsa`` the bid's ``ext.dsa`` when it decodes as PBS-Go's ExtBidDSA.
"""

from __future__ import annotations

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
    bad_server_response,
)
from hbserver.adapters.common import JsonShapeError, expect_object, imp_ids, json_call
from hbserver.adapters.golike import (
    ABSENT_OBJECT,
    GoKind,
    ImpExtError,
    go_fields,
    go_float_v,
    go_json_object,
    go_list,
    go_sized_int,
    go_typed_request,
    go_value,
)
from hbserver.adapters.steps import ParamsSpec

PARAMS = ParamsSpec("openrtb_ext.ImpExtMediasquare", {"owner": ("Owner", "string"), "code": ("Code", "string")})
_MTYPES = {"banner": 1, "video": 2, "native": 4}


def go_sprint(value: Any) -> str:
    """A decoded JSON value as Go's ``fmt.Sprint`` prints an ``interface{}`` holding it."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return go_float_v(float(value))
    if isinstance(value, list):
        return "[" + " ".join(map(go_sprint, value)) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{key}:{go_sprint(value[key])}" for key in sorted(value)) + "]"
    return "<nil>"


def _ext_member(holder: Any, *names: str) -> dict[str, Any]:
    """``holder.ext``'s members ``names`` (case-insensitive); none when the ext is no object."""
    ext = holder.get("ext") if isinstance(holder, Mapping) else None
    return go_fields(ext, *names) if isinstance(ext, Mapping) else {}


def consent_string(request: Mapping[str, Any]) -> str:
    """The user's consent, else ``user.ext``'s ``consent`` or ``gdpr`` as Go prints it, else ""."""
    user = request.get("user")
    if not isinstance(user, Mapping):
        return ""
    if isinstance(user.get("consent"), str) and user["consent"]:
        return user["consent"]
    ext = _ext_member(user, "consent", "gdpr")
    for name in ("consent", "gdpr"):
        if ext.get(name) is not None:
            return go_sprint(ext[name])
    return ""


def msq_params(request: Mapping[str, Any], pbs_version: str) -> dict[str, Any]:
    """Everything of the call but its codes."""
    regs, user = request.get("regs"), request.get("user")
    typed = go_typed_request({**request, "imp": []})
    test = request.get("test") == 1
    out: dict[str, Any] = {
        "gdpr": {
            "consent_required": isinstance(regs, Mapping) and regs.get("gdpr") == 1,
            "consent_string": consent_string(request),
        },
        "type": "pbs",
        "pbjs": "prebid-test-version" if test else pbs_version or "n/a",
        "tech": {name: typed[name] for name in ("device", "app", "site", "user") if typed.get(name) is not None},
        "test": test,
        "user_uid": (user.get("buyeruid") or "") if isinstance(user, Mapping) else "",
    }
    dsa = _ext_member(regs, "dsa").get("dsa")
    if dsa is not None:
        out["dsa"] = dsa
    return out


def _floor(imp: Mapping[str, Any]) -> dict[str, Any]:
    floor = {"floor": imp.get("bidfloor") or 0, "currency": imp.get("bidfloorcur") or ""}
    return {name: value for name, value in floor.items() if value}


def _banner_sizes(banner: Mapping[str, Any]) -> list[list[int]] | None:
    formats = banner.get("format")
    if isinstance(formats, list) and formats:
        return [[fmt.get("w") or 0, fmt.get("h") or 0] for fmt in formats]
    if banner.get("w") is not None and banner.get("h") is not None:
        return [[banner["w"], banner["h"]]]
    return None


def media_of(imp: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The imp's ``mediatypes`` and ``floor``; None when it has no usable medium."""
    media: dict[str, Any] = {}
    floors: dict[str, Any] = {}
    floor = _floor(imp)
    video = imp.get("video")
    if isinstance(video, Mapping):
        media["video"] = go_typed_request({"imp": [{"video": video}]})["imp"][0]["video"]
        if video.get("w") is not None and video.get("h") is not None:
            floors[f"{video['w']}x{video['h']}"] = floor
        floors["*"] = floor
    banner = imp.get("banner")
    sizes = _banner_sizes(banner) if isinstance(banner, Mapping) else None
    if sizes is not None:
        media["banner"] = {"sizes": sizes}
        floors.update((f"{w}x{h}", floor) for w, h in sizes)
    native = imp.get("native")
    if isinstance(native, Mapping) and native.get("request"):
        media["native_request"] = native["request"]
        floors["*"] = floor
    return (media, floors) if media else None


def _params_error(where: str, exc: JsonShapeError) -> BidderError:
    text = "is empty." if str(exc) == ABSENT_OBJECT else str(exc)
    return BidderError(f"<MakeRequests> {where}: {text}")


def msq_code(request: Mapping[str, Any], imp: Mapping[str, Any]) -> dict[str, Any] | None:
    """The imp's code, None when it has no usable medium; JsonShapeError when its ext or params do
    not decode."""
    params = PARAMS.read(imp)
    media = media_of(imp)
    if media is None:
        return None
    return {
        "adunit": imp.get("tagid") or "",
        "auctionid": request.get("id") or "",
        "bidid": imp.get("id") or "",
        "code": params["code"],
        "owner": params["owner"],
        "mediatypes": media[0],
        "floor": media[1],
    }


# the answer's items (msqResponseBids): JSON name -> (Go field, kind); video and native read apart
_ITEM_FIELDS: Mapping[str, tuple[str, GoKind]] = {
    "id": ("ID", GoKind.STRING), "ad": ("Ad", GoKind.STRING), "bid_id": ("BidId", GoKind.STRING),
    "bidder": ("Bidder", GoKind.STRING), "cpm": ("Cpm", GoKind.FLOAT), "currency": ("Currency", GoKind.STRING),
    "creative_id": ("CreativeId", GoKind.STRING), "height": ("Height", GoKind.INT), "width": ("Width", GoKind.INT),
    "net_revenue": ("NetRevenue", GoKind.BOOL), "transaction_id": ("TransactionId", GoKind.STRING),
    "ttl": ("Ttl", GoKind.INT), "adomain": ("ADomain", GoKind.STRINGS), "burl": ("BURL", GoKind.STRING),
}  # fmt: skip
_ITEM = "mediasquare.msqResponseBids"
_ZERO: Mapping[GoKind, Any] = {GoKind.STRING: "", GoKind.FLOAT: 0, GoKind.INT: 0, GoKind.BOOL: False}


def read_item(item: Any) -> dict[str, Any]:
    """One answer item as Go decodes it (absent fields as their zero values, ``video``, ``native``
    and ``dsa`` as they came); JsonShapeError in json-iterator's words."""
    given = go_fields(expect_object(item, f"[]{_ITEM}"), *_ITEM_FIELDS, "video", "native", "dsa")
    out: dict[str, Any] = {}
    for name, (go_name, kind) in _ITEM_FIELDS.items():
        value = go_value(given.get(name), kind, f"{_ITEM}.{go_name}")
        out[name] = _ZERO.get(kind) if value is None else value
    if given.get("video") is not None:
        video = go_fields(expect_object(given["video"], f"{_ITEM}.Video"), "xml", "url")
        for name, value in video.items():
            go_value(value, GoKind.STRING, f"mediasquare.msqResponseBidsVideo.{name.capitalize()}")
    out["video"] = given.get("video")
    out["native"] = None if given.get("native") is None else expect_object(given["native"], f"{_ITEM}.Native")
    out["dsa"] = given.get("dsa")
    return out


def read_answer(body: bytes) -> list[dict[str, Any]]:
    """The answer's items (``responses``); JsonShapeError when it does not decode."""
    answer = expect_object(go_json_object(body), "")
    members = go_fields(answer, "infos", "responses")
    infos = go_fields(expect_object(members.get("infos"), "mediasquare.msqResponse.Infos"), "version", "description")
    for name, value in infos.items():
        go_value(value, GoKind.STRING, f"mediasquare.msqResponse.Infos.{name.capitalize()}")
    return [read_item(item) for item in go_list(members.get("responses"), "mediasquare.msqResponse.Responses")]


def bid_dsa(dsa: Any) -> dict[str, Any] | None:
    """``dsa`` decoded as PBS-Go's ``openrtb_ext.ExtBidDSA`` and written again; None when it does not
    decode."""
    if not isinstance(dsa, dict):
        return None
    fields = go_fields(dsa, "adrender", "behalf", "paid")
    try:
        adrender = fields.get("adrender")
        out = {} if adrender is None else {"adrender": go_sized_int(adrender, "", 8)}
        for name in ("behalf", "paid"):
            value = go_value(fields.get(name), GoKind.STRING, "")
            if value:
                out[name] = value
    except JsonShapeError:
        return None
    return out


def typed_item(item: Mapping[str, Any]) -> TypedBid:
    """The bid an answer item becomes."""
    kind = "video" if item["video"] is not None else "native" if item["native"] is not None else "banner"
    bid: dict[str, Any] = {"id": item["id"], "impid": item["bid_id"], "price": item["cpm"] or 0}
    optional = {
        "adm": item["ad"], "adomain": item["adomain"], "w": item["width"], "h": item["height"],
        "crid": item["creative_id"], "mtype": _MTYPES[kind], "burl": item["burl"],
    }  # fmt: skip
    bid.update((name, value) for name, value in optional.items() if value)
    dsa = bid_dsa(item["dsa"])
    if dsa is not None:
        bid["ext"] = {"dsa": dsa}
    meta: dict[str, Any] = {"mediaType": kind}
    if item["adomain"] is not None:
        meta["advertiserDomains"] = item["adomain"]
    return TypedBid(bid, kind, bid_meta=meta)


class MediasquareAdapter:
    """See the module docstring."""

    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint
        self.pbs_version: str = config.extra.get("pbs_version", "") or ""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        if request.get("imp") is None:
            return [], [BidderError("<MakeRequests> request: is empty.")]
        codes, errors = [], []
        for imp in request["imp"]:
            try:
                code = msq_code(request, imp)
            except ImpExtError as exc:
                errors.append(_params_error("imp[ext]", exc))
                continue
            except JsonShapeError as exc:
                errors.append(_params_error("imp-bidder[ext]", exc))
                continue
            if code is not None:
                codes.append(code)
        body = {"codes": codes or None, **msq_params(request, self.pbs_version)}
        return [json_call(self.endpoint, body, imp_ids(request["imp"]))], errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        status = response.status
        if status == 400:
            return None, [bad_input(f"<MakeBids> Unexpected status code: {status}.")]
        if status != 200:
            text = f"<MakeBids> Unexpected status code: {status}. Run with request.debug = 1 for more info."
            return None, [bad_server_response(text)]
        try:
            items = read_answer(response.body)
        except JsonShapeError as exc:
            return None, [bad_server_response(f"<MakeBids> Unexpected status code: 406. Bad server response: {exc}.")]
        if not items:
            text = "<MakeBids> Unexpected status code: 204. No responses found into body content."
            return None, [bad_server_response(text)]
        result = BidderResponse(bids=[typed_item(item) for item in items])
        result.currency = items[-1]["currency"] or "USD"
        return result, []


def build(config: AdapterConfig) -> MediasquareAdapter:
    return MediasquareAdapter(config)
