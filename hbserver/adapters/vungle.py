"""Vungle adapter: one call per imp, the request written as Go's typed model with that imp alone.

Each imp's positive floor in another currency is converted to USD first. Its ext is sent as PBS-Go's
``vungleImpressionExt``: ``prebid`` (as ``ExtImpPrebid`` writes it again, null when absent), ``bidder``
as it came, a non-zero ``ae``, and ``vungle`` with the params plus the user's buyeruid as
``bid_token``; its ``tagid`` is the ``placement_reference_id``. The request goes as an app whose id is
the ``app_store_id``: the request's app with that id, or, for a site, an app of that id alone and no
site; a request with neither fails the imp. An imp that fails is left out with its error (PBS-Go's
words), the others are sent. Every bid is a video, under its seatbid's seat; the answer's currency.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    ConversionError,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
)
from hbserver.adapters.common import JsonShapeError, floor_in_usd, json_call
from hbserver.adapters.golike import (
    ImpExtError,
    decode_go_answer,
    go_ext_imp_prebid,
    go_field,
    go_typed_request,
    set_omitempty,
)
from hbserver.adapters.steps import ParamsSpec

# a literal Go map: the names are not canonicalised
HEADERS = {"Content-Type": "application/json", "Accept": "application/json", "X-OpenRTB-Version": "2.5"}
_VUNGLE_FIELDS = {
    "bid_token": ("BidToken", "string"),
    "app_store_id": ("PubAppStoreID", "string"),
    "placement_reference_id": ("PlacementRefID", "string"),
}
PARAMS = ParamsSpec("openrtb_ext.ImpExtVungle", _VUNGLE_FIELDS)
_EXT_VUNGLE = ParamsSpec("openrtb_ext.ImpExtVungle", _VUNGLE_FIELDS, bidder_only=True)  # ext.vungle's types
NO_APP = "failed constructing app, must have app or site object in bid request"


class _Failed(Exception):
    """An imp left out; the message is its error's."""


def _params(imp: Mapping[str, Any]) -> dict[str, Any]:
    """The imp's params; _Failed in PBS-Go's words when its ext or params do not decode."""
    ext_vungle = go_field(imp["ext"], "vungle") if isinstance(imp.get("ext"), Mapping) else None
    try:
        if ext_vungle is not None:  # vungleImpressionExt decodes its own vungle member too
            _EXT_VUNGLE.read({"ext": {"bidder": ext_vungle}})
    except JsonShapeError as exc:
        raise _Failed(f"failed unmarshalling imp ext (err){exc}") from None
    try:
        params = PARAMS.read(imp)
    except ImpExtError as exc:
        raise _Failed(f"failed unmarshalling imp ext (err){exc}") from None
    except JsonShapeError as exc:
        raise _Failed(f"failed unmarshalling bidder imp ext (err){exc}") from None
    return params


def vungle_ext(ext: Mapping[str, Any], params: Mapping[str, Any], bid_token: str) -> dict[str, Any]:
    """The imp's ext as Vungle gets it (``ext`` decoded: an object)."""
    prebid = go_field(ext, "prebid")
    out: dict[str, Any] = {"prebid": go_ext_imp_prebid(prebid) if isinstance(prebid, Mapping) else None}
    out["bidder"] = go_field(ext, "bidder")
    if go_field(ext, "ae"):
        out["ae"] = go_field(ext, "ae")
    out["vungle"] = {**params, "bid_token": bid_token}
    return out


def _app(request: Mapping[str, Any], store_id: str) -> dict[str, Any]:
    """The request's app with the store id (a site becomes an app of that id alone); _Failed without either."""
    if isinstance(request.get("app"), Mapping):
        app = dict(request["app"])
    elif request.get("site") is not None:
        app = {}
    else:
        raise _Failed(NO_APP)
    set_omitempty(app, "id", store_id)
    return app


def _buyeruid(request: Mapping[str, Any]) -> str:
    """The user's buyeruid ("" without a user: PBS-Go would panic)."""
    user = request.get("user")
    uid = user.get("buyeruid") if isinstance(user, Mapping) else None
    return uid if isinstance(uid, str) else ""


class VungleAdapter:
    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint

    def call(self, request: dict[str, Any], imp: dict[str, Any], info: RequestInfo) -> RequestData:
        """The call for one imp; _Failed when the imp is left out."""
        try:
            imp = floor_in_usd(imp, info)
        except ConversionError as exc:
            raise _Failed(f"failed to convert currency (err){exc}") from None
        params = _params(imp)
        imp = {**imp, "ext": vungle_ext(imp["ext"], params, _buyeruid(request))}
        set_omitempty(imp, "tagid", params["placement_reference_id"])
        body = {key: value for key, value in request.items() if key != "site"}
        body.update(imp=[imp], app=_app(request, params["app_store_id"]))
        return json_call(self.endpoint, go_typed_request(body), [imp.get("id", "")], HEADERS)

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        calls, errors = [], []
        for imp in request.get("imp") or ():
            try:
                calls.append(self.call(request, imp, info))
            except _Failed as exc:
                errors.append(BidderError(str(exc)))
        return calls, errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = decode_go_answer(response)
        if answer is None:
            return None, failure
        result = BidderResponse(currency=answer.cur or "USD")
        result.bids = [TypedBid(bid, "video", seat=seat) for seat, bids in answer.seatbids for bid in bids]
        return result, []


def build(config: AdapterConfig) -> VungleAdapter:
    return VungleAdapter(config.endpoint)
