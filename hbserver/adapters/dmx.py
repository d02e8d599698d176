"""DMX (districtm) adapter: the recipe ``recipes/dmx.yaml`` (the params struct, the answer and bid
typing) plus DMX's own call, one for the whole request:

* no user and no app: no call;
* the first imp's params name the publisher (``publisher_id``, else ``memberid``) and the seller
  (``?sellerid=`` on the endpoint); the app's or site's publisher gets that id when it has none and
  ``ext: {"dmx": {"id": ...}}`` always (a missing publisher is taken as empty: PBS-Go would panic);
* each imp goes once per media object it has: a banner with formats (sized from the first when
  ``w`` or ``h`` is missing), a video (protocols 2, 3, 5, 6, 7, 8 when it has none); ``bidfloor``,
  ``tagid`` and ``dmxid`` params set its floor and tagid (``secure: 1``); one without a tagid is
  left out; one without publisher or member id stops the request;
* the request needs an identifier: an app id (the device's IFA fills an empty one), a user id or
  user eids.

A video bid's ``adm`` gets the bid's ``nurl`` as an extra ``<Impression>`` after the first one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse, RequestData, RequestInfo
from hbserver.adapters.common import JsonShapeError, imp_ids, json_call
from hbserver.adapters.golike import GoAnswer, go_field, go_typed_request
from hbserver.adapters.recipe import RecipeAdapter
from hbserver.adapters.steps import MACRO_ESCAPES

NO_USER_OR_APP = "No user id or app id found. Could not send request to DMX."
MISSING_PARAMS = "Missing Params for auction to be send"
NO_IDENTIFIER = "This request contained no identifier"
DEFAULT_PROTOCOLS = [2, 3, 5, 6, 7, 8]


class _Stop(Exception):
    """The request gets no call; the message is the one error."""


def _with_publisher(place: Mapping[str, Any], publisher_id: str) -> dict[str, Any]:
    """The app or site with its publisher's id filled when empty and its ext DMX's."""
    publisher = dict(place.get("publisher") or {})
    if not publisher.get("id"):
        publisher["id"] = publisher_id
    publisher["ext"] = {"dmx": {"id": publisher_id} if publisher_id else {}}
    return {**place, "publisher": publisher}


def _has_eids(user: Mapping[str, Any]) -> bool:
    """Whether ``user.ext`` decodes as ``openrtb_ext.ExtUser`` with eids."""
    ext = user.get("ext")
    if not isinstance(ext, dict):
        return False
    consent, prebid, eids = go_field(ext, "consent"), go_field(ext, "prebid"), go_field(ext, "eids")
    decodes = isinstance(consent, str | None) and isinstance(prebid, dict | None)
    return decodes and isinstance(eids, list) and all(isinstance(eid, dict) for eid in eids) and bool(eids)


def _app_with_ifa(app: dict[str, Any], device: Any) -> dict[str, Any]:
    """The app with the device's IFA as its id when it has none."""
    ifa = go_field(device, "ifa") if isinstance(device, dict) else None
    return {**app, "id": ifa} if not app.get("id") and isinstance(ifa, str) and ifa else app


def _has_identifier(request: Mapping[str, Any]) -> bool:
    """Whether the (rewritten) request names its app or its user (an id or eids)."""
    app, user = request.get("app"), request.get("user")
    if isinstance(app, dict) and app.get("id"):
        return True
    return isinstance(user, dict) and (bool(user.get("id")) or _has_eids(user))


def dmx_imps(imp: dict[str, Any], params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The imps DMX gets for one imp: one per banner (with formats) and per video, each tagged."""
    out = []
    banner, video = imp.get("banner"), imp.get("video")
    if isinstance(banner, dict) and banner.get("format"):
        if banner.get("w") is None or banner.get("h") is None:
            first = banner["format"][0] if isinstance(banner["format"][0], dict) else {}
            banner = {**banner, "w": first.get("w") or 0, "h": first.get("h") or 0}
        out.append(_tagged(imp, params, "banner", banner))
    if isinstance(video, dict):
        video = {**video, "protocols": video.get("protocols") or DEFAULT_PROTOCOLS}
        out.append(_tagged(imp, params, "video", video))
    return [one for one in out if one.get("tagid")]


def _tagged(imp: dict[str, Any], params: Mapping[str, Any], kind: str, media: dict[str, Any]) -> dict[str, Any]:
    if not (params.get("publisher_id") or params.get("memberid")):
        raise _Stop(MISSING_PARAMS)
    out = {**imp, kind: media}
    if params.get("bidfloor"):
        out["bidfloor"] = params["bidfloor"]
    for name in ("tagid", "dmxid"):
        if params.get(name):
            out.update(tagid=params[name], secure=1)
    return out


class DmxAdapter(RecipeAdapter):
    """The recipe's params and answer, DMX's call and video markup."""

    def params_of(self, imp: Mapping[str, Any], errors: list[BidderError]) -> dict[str, Any]:
        """The imp's params; their zero values, the error kept, when its ext does not decode."""
        try:
            return self.recipe.params.read(imp)
        except JsonShapeError as exc:
            errors.append(BidderError(str(exc)))
            return {}

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        if request.get("user") is None and request.get("app") is None:
            return [], [BidderError(NO_USER_OR_APP)]
        errors: list[BidderError] = []
        imps = request.get("imp") or []
        first = self.params_of(imps[0], errors) if imps else {}
        publisher_id = first.get("publisher_id") or first.get("memberid") or ""
        out = dict(request)
        for holder in ("app", "site"):
            if isinstance(request.get(holder), dict):
                out[holder] = _with_publisher(request[holder], publisher_id)
        if isinstance(out.get("app"), dict):
            out["app"] = _app_with_ifa(out["app"], request.get("device"))
        try:
            sent = [one for imp in imps for one in dmx_imps(imp, self.params_of(imp, errors))]
        except _Stop as stop:
            return [], [BidderError(str(stop))]
        if not _has_identifier(out):
            return [], [BidderError(NO_IDENTIFIER)]
        body = go_typed_request({**out, "imp": sent})
        body["imp"] = body.get("imp") or None  # Go's nil slice
        seller = first.get("seller_id") or ""
        uri = self.endpoint + ("?sellerid=" + MACRO_ESCAPES["query"](seller) if seller else "")
        return [json_call(uri, body, imp_ids(sent), self.headers(request))], errors

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        result, errors = super().typed_bids(request, answer)
        for typed in result.bids if result is not None else ():
            bid = typed.bid
            if typed.bid_type == "video" and bid.get("adm"):
                impression = f"</Impression><Impression><![CDATA[{bid.get('nurl', '')}]]></Impression>"
                typed.bid = {**bid, "adm": bid["adm"].replace("</Impression>", impression, 1)}
        return result, errors


def build(config: AdapterConfig) -> DmxAdapter:
    return DmxAdapter.of_code("dmx", config)
