"""Meta Audience Network adapter (bidder code ``audienceNetwork``): app traffic only, one call per imp.

Each call carries the request with that imp alone, the request id replaced by the imp's id and an
``ext`` of ``platformid`` plus ``authentication_id`` (an HMAC-SHA256 of that id keyed by the host's
app secret, in hex); the user's ``buyeruid`` (the bidder token, required) also goes as the
``X-Fb-Pool-Routing-Token`` header. A site request is refused. The imp's params give the tag id
``<publisherId>_<placementId>`` (a placement id of the form ``pub_placement`` carries both) and the
app's publisher. Placements are single-format: the imp keeps one media object (interstitials: video,
else banner; otherwise video, native, banner, audio in that order). A banner goes as ``w: -1`` with
a height of 50 or 250 (from ``h`` or the first such format), an interstitial banner as 0x0, a
non-rewarded video interstitial as a 0x0 banner, video with ``w``/``h`` 0 and ``ext.videotype`` for
rewarded inventory (``rwdd``, or ``ext.prebid.is_rewarded_inventory`` from OpenRTB 2.5), native as
``w``/``h`` -1 without its request. ``consented_providers_settings`` is dropped from the body.

A bid's ``adm`` is Meta's markup JSON: its ``bid_id`` becomes the bid's ``adid`` and ``crid``. Bids
are typed by the imp they fill, as the publisher asked for it. A failure status is bad input with
the ``X-Fb-An-Errors`` header's text.

A call that times out is followed by Meta's loss notification (PBS-Go's TimeoutBidder):
``GET <TIMEOUT_NOTIFICATION_URL>?partner=<platform id>&app=<app publisher id>&auction=<request id>&ortb_loss_code=2``,
made by the exchange (:func:`hbserver.auction.exchange.fanout.notify_timeouts`).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from functools import partial
from typing import Any

import orjson

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
from hbserver.adapters.common import JsonShapeError, expect_object, expect_string, json_call, json_headers
from hbserver.adapters.golike import (
    go_answer,
    go_field,
    go_fields,
    go_imp,
    go_json_object,
    go_request_top,
    imp_bidder_params,
    json_path_string,
    typed_bids,
)

BANNER_HEIGHTS = frozenset({50, 250})
TIMEOUT_NOTIFICATION_URL = "https://www.facebook.com/audiencenetwork/nurl/"
# PBS-Go refuses to build the adapter without these host settings; hbserver refuses every request
NO_PLATFORM_ID = "PartnerID is not configured. Did you set adapters.facebook.platform_id in the app config?"
NO_APP_SECRET = "AppSecret is not configured. Did you set adapters.facebook.app_secret in the app config?"
_PARAMS = "openrtb_ext.ExtImpFacebook"
_DROPPED_KEY = "consented_providers_settings"
_MEDIA = ("banner", "video", "audio", "native")


class _Refused(Exception):
    def __init__(self, error: BidderError) -> None:
        super().__init__(error.message)
        self.error = error


def _is_one(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value == 1


def resolve_imp_type(imp: Mapping[str, Any]) -> str:
    """The one format an imp is sent (and its bids typed) as: an interstitial's video, else its
    banner; otherwise video, native, banner, audio in that order (banner when it asks for none)."""
    if _is_one(imp.get("instl")):
        for kind in ("video", "banner"):
            if imp.get(kind) is not None:
                return kind
    for kind in ("video", "native", "banner", "audio"):
        if imp.get(kind) is not None:
            return kind
    return "banner"


def placement_and_publisher(imp: Mapping[str, Any]) -> tuple[str, str]:
    """(placement id, publisher id) from the imp's params; a placement id ``pub_placement`` names
    both. Raises _Refused (bad input) when either is missing or the placement id has more parts."""
    try:
        fields = go_fields(imp_bidder_params(imp), "placementId", "publisherId")
        placement = expect_string(fields.get("placementId"), f"{_PARAMS}.PlacementId")
        publisher = expect_string(fields.get("publisherId"), f"{_PARAMS}.PublisherId")
    except JsonShapeError as exc:
        raise _Refused(bad_input(str(exc))) from None
    if not placement:
        raise _Refused(bad_input("Missing placementId param"))
    parts = placement.split("_")
    if len(parts) == 1:
        if not publisher:
            raise _Refused(bad_input("Missing publisherId param"))
        return placement, publisher
    if len(parts) == 2:
        return parts[1], parts[0]
    raise _Refused(bad_input(f"Invalid placementId param '{placement}' and publisherId param '{publisher}'"))


def _rewarded(imp: dict[str, Any]) -> dict[str, Any]:
    """``imp`` with ``rwdd: 1`` when OpenRTB 2.5's ``ext.prebid.is_rewarded_inventory`` is 1, and a
    rewarded video's ``ext.videotype`` (``rewarded_interstitial`` for an interstitial)."""
    out = dict(imp)
    ext = imp.get("ext")
    prebid = ext.get("prebid") if isinstance(ext, dict) else None
    if not _is_one(imp.get("rwdd")) and isinstance(prebid, dict) and _is_one(prebid.get("is_rewarded_inventory")):
        out["rwdd"] = 1
    video = out.get("video")
    if _is_one(out.get("rwdd")) and video is not None:
        video = video if isinstance(video, dict) else {}
        try:
            video_ext = expect_object(video.get("ext"), "")
        except JsonShapeError as exc:
            raise _Refused(BidderError(str(exc))) from None
        kind = "rewarded_interstitial" if _is_one(imp.get("instl")) else "rewarded"
        out["video"] = {**video, "ext": {**video_ext, "videotype": kind}}
    return out


def _single_format(imp: dict[str, Any]) -> dict[str, Any]:
    """``imp`` with its one media object (see ``resolve_imp_type``), a banner sized as Meta takes it.
    Raises _Refused for a native or audio interstitial and a banner without a height Meta takes."""
    kind = resolve_imp_type(imp)
    imp_id = imp.get("id", "")
    interstitial = _is_one(imp.get("instl"))
    if interstitial and kind not in ("banner", "video"):
        raise _Refused(bad_input(f"imp #{imp_id}: interstitial imps are only supported for banner and video"))
    out = dict(imp)
    if interstitial and kind == "video" and not _is_one(imp.get("rwdd")):
        out["banner"], kind = {}, "banner"  # Meta's non-rewarded interstitial shape
    if kind != "audio":
        for other in _MEDIA:
            if other != kind:
                out.pop(other, None)
    if kind != "banner":
        return out
    banner = {key: value for key, value in _object(out.get("banner")).items() if key != "format"}
    if interstitial:
        out["banner"] = {**banner, "w": 0, "h": 0}
        return out
    height = banner.get("h")
    if height is None:
        height = _format_height(_object(imp.get("banner")).get("format"))
        if height is None:
            raise _Refused(bad_input(f"imp #{imp_id}: banner height required"))
    if height not in BANNER_HEIGHTS or isinstance(height, bool):
        raise _Refused(bad_input(f"imp #{imp_id}: only banner heights 50 and 250 are supported"))
    out["banner"] = {**banner, "w": -1, "h": height}
    return out


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _format_height(formats: Any) -> int | None:
    """The first format height Meta takes (50 or 250), None when there is none."""
    for item in formats if isinstance(formats, list) else ():
        height = _object(item).get("h")
        if isinstance(height, int) and not isinstance(height, bool) and height in BANNER_HEIGHTS:
            return height
    return None


def _imp_as_sent(imp: dict[str, Any]) -> dict[str, Any]:
    """The imp as Meta's JSON takes it: video ``w``/``h`` 0, native ``w``/``h`` -1 without its
    ``request`` and ``ver``."""
    out = go_imp(imp)
    kind = resolve_imp_type(out)
    if kind == "video":
        out["video"] = {**out["video"], "w": 0, "h": 0}
    elif kind == "native":
        native = {key: value for key, value in _object(out["native"]).items() if key not in ("request", "ver")}
        out["native"] = {**native, "w": -1, "h": -1}
    return out


def drop_first_key(value: Any, key: str) -> bool:
    """Remove the first member named ``key`` found depth-first in document order (PBS-Go's
    ``jsonutil.DropElement``); True when one was removed. Changes ``value`` in place."""
    if isinstance(value, dict):
        if key in value:
            del value[key]
            return True
        return any(drop_first_key(item, key) for item in value.values())
    if isinstance(value, list):
        return any(drop_first_key(item, key) for item in value)
    return False


def _copied(value: Any) -> Any:
    """A deep copy of JSON data (dicts and lists), so the body can be edited in place."""
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copied(item) for item in value]
    return value


class AudienceNetworkAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint
        self.platform_id = str(config.extra.get("platform_id") or "")
        self.app_secret = str(config.extra.get("app_secret") or "")

    def auth_id(self, request_id: str) -> str:
        """HMAC-SHA256 of the (per-imp) request id keyed by the app secret, in hex."""
        return hmac.new(self.app_secret.encode(), request_id.encode(), hashlib.sha256).hexdigest()

    def make_timeout_notification(self, call: RequestData) -> RequestData | None:
        """Meta's loss notification for a call that timed out (PBS-Go MakeTimeoutNotification); None
        when the call's body has no string ``id`` or ``app.publisher.id`` (Go's error: nothing is sent).
        The values go into the URL as they are, as Go's Sprintf puts them."""
        try:
            body = orjson.loads(call.body or b"")
            request_id = json_path_string(body, "id")
            publisher = json_path_string(body, "app", "publisher", "id")
        except ValueError:
            return None
        uri = (
            f"{TIMEOUT_NOTIFICATION_URL}?partner={self.platform_id}&app={publisher}&auction={request_id}"
            "&ortb_loss_code=2"
        )
        return RequestData("GET", uri, None, {})

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        refused = self._refusal(request)
        if refused is not None:
            return [], [refused]
        token = request["user"]["buyeruid"]
        headers = json_headers(x_fb_pool_routing_token=token)
        calls: list[RequestData] = []
        errors: list[BidderError] = []
        for imp in request["imp"]:
            try:
                body = self._body(request, imp if isinstance(imp, dict) else {})
            except _Refused as refusal:
                errors.append(refusal.error)
                continue
            calls.append(json_call(self.endpoint, body, [body["id"]], headers))
        return calls, errors

    def _refusal(self, request: Mapping[str, Any]) -> BidderError | None:
        """Why no call is made at all (PBS-Go's order of checks), None when calls may be."""
        if not self.platform_id:
            return BidderError(NO_PLATFORM_ID)
        if not self.app_secret:
            return BidderError(NO_APP_SECRET)
        imps = request.get("imp")
        if not isinstance(imps, list) or not imps:
            return bad_input("No impressions provided")
        user = request.get("user")
        token = user.get("buyeruid") if isinstance(user, dict) else None
        if not isinstance(token, str) or not token:
            return bad_input("Missing bidder token in 'user.buyeruid'")
        if request.get("site") is not None:
            return bad_input("Site impressions are not supported.")
        return None

    def _body(self, request: Mapping[str, Any], imp: dict[str, Any]) -> dict[str, Any]:
        """The request Meta gets for one imp; raises _Refused when the imp cannot go."""
        placement, publisher = placement_and_publisher(imp)
        imp_id = imp["id"] if isinstance(imp.get("id"), str) else ""
        sent = _rewarded(imp)
        sent["tagid"] = f"{publisher}_{placement}"
        sent.pop("ext", None)
        sent = _single_format(sent)
        body = {key: value for key, value in go_request_top(request).items() if value is not None}
        body.update(id=imp_id, imp=[_imp_as_sent(sent)])
        body["ext"] = {"platformid": self.platform_id, "authentication_id": self.auth_id(imp_id)}
        app = body.get("app")
        if isinstance(app, dict):
            body["app"] = {**app, "publisher": {"id": publisher} if publisher else {}}
        body = _copied(body)
        drop_first_key(body, _DROPPED_KEY)
        return body

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        if response.status == 204:
            return None, []
        if response.status != 200:
            message = _header(response.headers, "X-Fb-An-Errors")
            return None, [bad_input(f"Unexpected status code {response.status} with error message '{message}'")]
        try:
            answer = go_answer(response.body)
        except JsonShapeError as exc:
            return None, [BidderError(str(exc))]
        return typed_bids(answer, partial(_typed_bid, request=request))


def _header(headers: Mapping[str, str], name: str) -> str:
    wanted = name.lower()
    return next((value for key, value in headers.items() if key.lower() == wanted), "")


def markup_bid_id(adm: str) -> str:
    """``bid_id`` of Meta's markup JSON; JsonShapeError (json-iterator's words) when it is no object."""
    markup = go_json_object(adm)
    return expect_string(go_field(expect_object(markup, ""), "bid_id"), "audienceNetwork.facebookAdMarkup.BidID")


def _typed_bid(bid: dict[str, Any], request: Mapping[str, Any]) -> TypedBid | BidderError:
    """The bid with ``adid``/``crid`` from its markup, typed by its imp; else the bad server
    response that refuses it."""
    bid_id = bid.get("id", "")
    adm = bid.get("adm") or ""
    if not adm:
        return bad_server_response(f"Bid {bid_id} missing 'adm'")
    try:
        markup_id = markup_bid_id(adm)
    except JsonShapeError as exc:
        return bad_server_response(str(exc))
    if not markup_id:
        return bad_server_response(f"bid {bid_id} missing 'bid_id' in 'adm'")
    for imp in request.get("imp") or ():
        if isinstance(imp, dict) and imp.get("id") == bid.get("impid"):
            return TypedBid({**bid, "adid": markup_id, "crid": markup_id}, resolve_imp_type(imp))
    message = f"bid {bid_id} 'impid' {bid.get('impid', '')} does not match any imp in the bid request"
    return bad_server_response(message)


def build(config: AdapterConfig) -> AudienceNetworkAdapter:
    return AudienceNetworkAdapter(config)
