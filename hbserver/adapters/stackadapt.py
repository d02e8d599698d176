"""StackAdapt adapter: every imp in one OpenRTB call to the endpoint with ``{{.PublisherID}}`` and
``{{.SupplyId}}`` filled (query-escaped) from the params, which all imps must share.

Per imp: ``placementId`` becomes ``tagid``, a positive ``bidfloor`` param the floor (in USD) and
``banner.expdir`` param the banner's ``expdir``. The site's (else the app's) publisher gets the
``publisherId`` as its id. Bids are typed by ``mtype`` alone; a native bid's ``adm`` is unwrapped
from ``{"native": {...}}`` when it has that key; ``${AUCTION_PRICE}`` in ``adm``, ``nurl`` and
``burl`` is replaced by the price.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote_plus

from hbserver.adapters.base import (
    JSON_HEADERS,
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
from hbserver.adapters.common import (
    AnswerWording,
    JsonShapeError,
    Refusal,
    expect_object,
    imp_ids,
    json_call,
    mtype_bid_type,
    resolve_macros,
)
from hbserver.adapters.golike import (
    NOT_AN_OBJECT,
    GoKind,
    ImpExtError,
    go_fields,
    go_imp,
    go_request_top,
    go_typed_bids,
    go_value,
    imp_bidder_params,
    json_member_text,
    with_auction_price,
)

_STRUCT = "openrtb_ext.ExtImpStackAdapt"
_ANSWER_WORDING = AnswerWording(not_an_object=NOT_AN_OBJECT, body_error=BidderError)


class _Refused(Refusal):
    """See ``common.Refusal``."""


def _params(imp: Mapping[str, Any], index: int) -> dict[str, Any]:
    """The imp's params decoded as ``openrtb_ext.ExtImpStackAdapt`` (zero values for null)."""
    try:
        params = imp_bidder_params(imp)
    except ImpExtError as exc:
        raise _Refused(bad_input(f"imp[{index}]: unable to unmarshal ext: {exc}")) from None
    except JsonShapeError as exc:
        raise _Refused(bad_input(f"imp[{index}]: unable to unmarshal bidder ext: {exc}")) from None
    fields = go_fields(params, "publisherId", "supplyId", "placementId", "banner", "bidfloor")
    try:
        out = {
            "publisherId": go_value(fields.get("publisherId"), GoKind.STRING, f"{_STRUCT}.PublisherId") or "",
            "supplyId": go_value(fields.get("supplyId"), GoKind.STRING, f"{_STRUCT}.SupplyId") or "",
            "placementId": go_value(fields.get("placementId"), GoKind.STRING, f"{_STRUCT}.PlacementId"),
            "bidfloor": go_value(fields.get("bidfloor"), GoKind.FLOAT, f"{_STRUCT}.BidFloor") or 0,
            "expdir": None,
        }
        banner = fields.get("banner")
        if banner is not None:
            banner = expect_object(banner, f"{_STRUCT}.Banner")
            expdir = go_fields(banner, "expdir").get("expdir")
            out["expdir"] = go_value(expdir, GoKind.INTS, "openrtb_ext.ExtImpStackAdaptBanner.ExpDir")
    except JsonShapeError as exc:
        raise _Refused(bad_input(f"imp[{index}]: unable to unmarshal bidder ext: {exc}")) from None
    return out


def _imp_as_sent(imp: dict[str, Any], params: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(imp)
    if params["placementId"] is not None:
        out["tagid"] = params["placementId"]
    if params["bidfloor"] > 0:
        out["bidfloor"], out["bidfloorcur"] = params["bidfloor"], "USD"
    if params["expdir"] and isinstance(imp.get("banner"), dict):
        out["banner"] = {**imp["banner"], "expdir": params["expdir"]}
    return go_imp(out)


def _with_publisher(request: Mapping[str, Any], publisher_id: str) -> dict[str, Any]:
    """The site (else the app) with its publisher's id set (omitted when empty, as Go does)."""
    out = go_request_top(request)
    for holder in ("site", "app"):
        if isinstance(request.get(holder), dict):
            publisher = request[holder].get("publisher")
            publisher = dict(publisher) if isinstance(publisher, dict) else {}
            publisher.pop("id", None)
            if publisher_id:
                publisher["id"] = publisher_id
            out[holder] = {**request[holder], "publisher": publisher}
            break
    return out


def native_adm(adm: str) -> str:
    """The raw ``native`` member of ``adm`` (jsonparser.Get: the first exact key at the top), ``adm``
    itself when it has none; BidderError when ``adm`` does not parse or the member is no object."""
    try:
        raw = json_member_text(adm, "native")
    except (ValueError, IndexError):
        raise _Refused(BidderError("unable to unmarshal native adm")) from None
    if raw is None:
        return adm
    if not raw.startswith("{"):
        raise _Refused(BidderError("unable to get native adm"))
    return raw


def _typed(bid: dict[str, Any]) -> TypedBid | BidderError:
    """The bid typed by its ``mtype``, a native bid's markup unwrapped, its price macro resolved."""
    kind = mtype_bid_type(bid)
    if kind is None:
        return bad_server_response(f"unsupported MType {bid.get('mtype', 0)}")
    if kind == "native":
        try:
            bid = {**bid, "adm": native_adm(bid.get("adm", ""))}
        except _Refused as refused:
            return refused.error
    return TypedBid(with_auction_price(bid), kind)


class StackAdaptAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps: list[dict[str, Any]] = []
        ids: tuple[str, str] = ("", "")
        try:
            for index, imp in enumerate(request.get("imp") or ()):
                params = _params(imp, index)
                if index == 0:
                    ids = (params["publisherId"], params["supplyId"])
                elif (params["publisherId"], params["supplyId"]) != ids:
                    message = f"imp[{index}]: all imps must have the same publisherId and supplyId"
                    raise _Refused(bad_input(message))
                imps.append(_imp_as_sent(imp, params))
        except _Refused as refused:
            return [], [refused.error]
        body = {**_with_publisher(request, ids[0]), "imp": imps}
        uri = resolve_macros(
            self.endpoint, {"PublisherID": quote_plus(ids[0], safe=""), "SupplyId": quote_plus(ids[1], safe="")}
        )
        return [json_call(uri, body, imp_ids(imps), JSON_HEADERS)], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        return go_typed_bids(response, _typed, _ANSWER_WORDING)


def build(config: AdapterConfig) -> StackAdaptAdapter:
    return StackAdaptAdapter(config)
