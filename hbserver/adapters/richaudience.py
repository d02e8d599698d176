"""Rich Audience adapter: one OpenRTB call per imp to ``ortb.richaudience.com``.

The request must carry a device IP (v4 or v6) when it has a device at all, else nothing is sent.
Each imp that passes goes alone in a copy of the request: ``pid`` becomes ``tagid``, the
``bidfloorcur`` param (else the imp's own, else ``USD``) its floor currency, and ``secure`` is 1
when ``site.page`` is an https URL (else 0). ``site.keywords`` / ``app.keywords`` become
``tagid=<the imp's original tagid>``, and a page URL fills an empty ``site.domain`` with its host.
A ``test`` param switches the call, and every later one, to test mode: ``test`` 1 and the device IP
``11.222.33.44``. A banner needs a size or formats, a video a width and height.

Answers are matched against the imps of the call that was sent: a bid for its imp is video when
that imp is (its width and height then become the imp's), else banner; a bid for another imp is
typed ``"no bidtype assigned"``, as PBS-Go does.
"""

from __future__ import annotations

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
    BAD_REQUEST_FROM_PUBLISHER,
    UNEXPECTED_STATUS,
    AnswerAdapter,
    AnswerWording,
    JsonShapeError,
    json_call,
)
from hbserver.adapters.golike import ImpExtError, go_members, imp_bidder_params
from hbserver.adapters.gourl import go_url_scheme_host

_HEADERS = {
    "Content-Type": "application/json;charset=utf-8",
    "Accept": "application/json",
    "X-Openrtb-Version": "2.5",
}
TEST_IP = "11.222.33.44"
NO_BID_TYPE = "no bidtype assigned"
_ANSWER_WORDING = AnswerWording(status=UNEXPECTED_STATUS + ".", bad_request=BAD_REQUEST_FROM_PUBLISHER)

# ExtImpRichaudience's fields (Go matches JSON keys to them case-insensitively) and their JSON types
_NUMBER = (int, float)
_PARAM_TYPES: dict[str, tuple[type, ...]] = {
    "pid": (str,),
    "supplytype": (str,),
    "bidfloor": _NUMBER,
    "bidfloorcur": (str,),
    "test": (bool,),
}



class _BadImp(ValueError):
    """An imp this adapter cannot send (the message is the bidder error's)."""


def _json_type_ok(value: Any, types: tuple[type, ...]) -> bool:
    if value is None:
        return True
    if isinstance(value, bool):
        return bool in types
    return isinstance(value, types)


def _params(imp: dict[str, Any]) -> dict[str, Any]:
    """The imp's Rich Audience params by lower-cased field name; _BadImp with PBS-Go's texts when
    ``imp.ext`` or ``imp.ext.bidder`` would not decode."""
    imp_id = imp.get("id", "")
    try:
        bidder = imp_bidder_params(imp, null_is_absent=True)  # absent or null: nothing Go can decode
    except ImpExtError:
        raise _BadImp(f"not found parameters ext in ImpID : {imp_id}") from None
    except JsonShapeError:
        raise _BadImp(f"invalid parameters ext in ImpID: {imp_id}") from None
    params: dict[str, Any] = {}
    for name, value in go_members(bidder, *_PARAM_TYPES):
        if not _json_type_ok(value, _PARAM_TYPES[name]):
            raise _BadImp(f"invalid parameters ext in ImpID: {imp_id}")
        params[name] = value
    return params


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""


class RichaudienceAdapter(AnswerAdapter):
    answer_wording = _ANSWER_WORDING

    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        site, app, device = request.get("site"), request.get("app"), request.get("device")
        secure = 0
        domain = None
        if isinstance(site, dict) and _string(site.get("page")):
            parsed = go_url_scheme_host(site["page"])
            if parsed is not None:
                secure = 1 if parsed[0] == "https" else 0
                if not site.get("domain") and parsed[1]:
                    domain = parsed[1]
        if isinstance(device, dict) and not device.get("ip") and not device.get("ipv6"):
            return [], [bad_input("request.Device.IP is required")]

        calls: list[RequestData] = []
        errors: list[BidderError] = []
        test_mode = False  # once an imp asks for it, the calls of the later imps are test calls too
        for imp in request.get("imp") or ():
            try:
                params = _params(imp)
            except _BadImp as exc:
                errors.append(bad_input(str(exc)))
                continue
            out = dict(imp)
            if params.get("pid"):
                out["tagid"] = params["pid"]
            if params.get("test"):
                test_mode = True
            if params.get("bidfloorcur"):
                out["bidfloorcur"] = params["bidfloorcur"]
            elif not imp.get("bidfloorcur"):
                out["bidfloorcur"] = "USD"
            out["secure"] = secure
            banner, video = imp.get("banner"), imp.get("video")
            if (
                isinstance(banner, dict)
                and banner.get("w") is None
                and banner.get("h") is None
                and not banner.get("format")
            ):
                errors.append(bad_input("request.Banner.Format is required"))
                continue
            if video is not None and (not isinstance(video, dict) or not video.get("w") or not video.get("h")):
                errors.append(bad_input("request.Video.Sizes is required"))
                continue

            body = dict(request)
            body["imp"] = [out]
            keywords = "tagid=" + _string(imp.get("tagid"))
            if isinstance(app, dict):
                body["app"] = {**app, "keywords": keywords}
            if isinstance(site, dict):
                body["site"] = {**site, "keywords": keywords}
                if domain is not None:
                    body["site"]["domain"] = domain
            if test_mode:
                body["device"] = {**(device if isinstance(device, dict) else {}), "ip": TEST_IP}
                body["test"] = 1
            calls.append(json_call(self.endpoint, body, [imp.get("id", "")], _HEADERS))
        return calls, errors

    def bids_from(
        self, request: dict[str, Any], call: RequestData, answer: dict[str, Any]
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        try:
            sent = orjson.loads(call.body or b"")
        except orjson.JSONDecodeError as exc:
            return None, [bad_server_response(f"Bad request body: {exc}")]
        try:
            bids = _answer_bids(answer)
        except ValueError as exc:
            return None, [bad_server_response(str(exc))]
        imps = sent.get("imp") if isinstance(sent, dict) else None
        result = BidderResponse(currency=_string(answer.get("cur")) or "USD")
        for imp in imps if isinstance(imps, list) else ():
            if not isinstance(imp, dict):
                continue
            imp_id = _string(imp.get("id"))
            video = imp.get("video")
            for bid in bids:  # one dict per bid: a later imp's sizes show in its earlier entries, as in Go
                if imp_id != _string(bid.get("impid")):
                    bid_type = NO_BID_TYPE
                elif isinstance(video, dict):
                    bid_type = "video"
                    bid["w"], bid["h"] = video.get("w", 0), video.get("h", 0)
                else:
                    bid_type = "banner"
                result.bids.append(TypedBid(bid, bid_type))
        return result, []


def _answer_bids(answer: dict[str, Any]) -> list[dict[str, Any]]:
    """Copies of the answer's bids in order; ValueError when ``seatbid`` is not OpenRTB's shape."""
    seatbids = answer.get("seatbid")
    if seatbids is None:
        return []
    if not isinstance(seatbids, list):
        raise ValueError("Bad response body: seatbid must be an array")
    out = []
    for seatbid in seatbids:
        if seatbid is None:
            continue
        bids = seatbid.get("bid") if isinstance(seatbid, dict) else None
        if not isinstance(seatbid, dict) or not isinstance(bids, list | None):
            raise ValueError("Bad response body: seatbid[].bid must be an array")
        for bid in bids or ():
            if bid is None:
                continue
            if not isinstance(bid, dict):
                raise ValueError("Bad response body: a bid must be an object")
            out.append(dict(bid))
    return out


def build(config: AdapterConfig) -> RichaudienceAdapter:
    return RichaudienceAdapter(config)
