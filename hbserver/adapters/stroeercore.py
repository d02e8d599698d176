"""Ströer Core adapter: the whole request in one call to the configured endpoint, each imp's ``tagid``
its ``sid`` (an imp whose ext or params do not decode is still sent, as it came, its error kept).

The answer is Ströer's own, ``{"bids": [...]}``: each bid becomes an OpenRTB bid (``bidId`` its imp
id, ``cpm`` its price, ``ad`` its markup), typed by its ``mtype`` text (``banner`` or ``video``;
any other drops the bid with a bad server response). A bid's ``dsa`` (the deprecated place) is moved
into its ``ext``. Every price is in EUR.
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
    bad_server_response,
)
from hbserver.adapters.common import JsonShapeError, expect_object, json_call
from hbserver.adapters.golike import (
    GoKind,
    go_bid,
    go_fields,
    go_json_object,
    go_list,
    go_typed_request,
    go_value,
    imp_bidder_params,
)

HEADERS = {"Content-Type": "application/json;charset=utf-8", "Accept": "application/json"}
_BID = "stroeerCore.bidResponse"
# bidResponse: JSON name -> (Go field, kind)
_BID_FIELDS = {
    "id": ("ID", GoKind.STRING), "bidId": ("BidID", GoKind.STRING), "cpm": ("CPM", GoKind.FLOAT),
    "width": ("Width", GoKind.INT), "height": ("Height", GoKind.INT), "ad": ("Ad", GoKind.STRING),
    "crid": ("CrID", GoKind.STRING), "mtype": ("Mtype", GoKind.STRING), "adomain": ("ADomain", GoKind.STRINGS),
    "ext": ("Ext", GoKind.RAW), "dsa": ("DSA", GoKind.RAW),
}  # fmt: skip
MARKUP_TYPES = {"banner": 1, "video": 2}


def tagged_imp(imp: Mapping[str, Any]) -> dict[str, Any]:
    """The imp with its ``sid`` as ``tagid`` (Go's omitempty: an empty sid leaves none); JsonShapeError
    in json-iterator's words when its ext or params do not decode."""
    params = go_fields(imp_bidder_params(imp), "sid")
    sid = go_value(params.get("sid"), GoKind.STRING, "openrtb_ext.ExtImpStroeerCore.Sid") or ""
    out = {key: value for key, value in imp.items() if key != "tagid"}
    if sid:
        out["tagid"] = sid
    return out


def read_bids(body: bytes) -> list[dict[str, Any]]:
    """The answer's bids, each with its fields as Go's ``bidResponse`` holds them (absent ones left
    out); JsonShapeError in json-iterator's words when the body does not decode."""
    data = go_json_object(body)
    members = go_fields(expect_object(data, ""), "bids") if data is not None else {}
    bids = go_list(members.get("bids"), "stroeerCore.response.Bids")
    out = []
    for bid in bids:
        fields = go_fields(expect_object(bid, f"[]{_BID}"), *_BID_FIELDS)
        for name, value in fields.items():
            go_name, kind = _BID_FIELDS[name]
            fields[name] = go_value(value, kind, f"{_BID}.{go_name}")
        out.append(fields)
    return out


def bid_ext(bid: Mapping[str, Any]) -> Any:
    """The bid's ext, with its ``dsa`` (when the answer has one, null too) added as a member."""
    if "dsa" not in bid:
        return bid.get("ext")
    ext = bid.get("ext")
    members = dict(ext) if isinstance(ext, Mapping) else {}
    members["dsa"] = bid["dsa"]
    return dict(sorted(members.items()))


def openrtb_bid(bid: Mapping[str, Any]) -> TypedBid | BidderError:
    """The OpenRTB bid (typed) of one of Ströer's bids, or the error that drops it."""
    kind = bid.get("mtype") or ""
    if kind not in MARKUP_TYPES:
        problem = f'unable to determine media type for bid with id "{bid.get("bidId") or ""}"'
        return bad_server_response(f"Bid media type error: {problem}")
    fields = {
        "id": bid.get("id"), "impid": bid.get("bidId"), "w": bid.get("width"), "h": bid.get("height"),
        "price": bid.get("cpm"), "adm": bid.get("ad"), "crid": bid.get("crid"), "mtype": MARKUP_TYPES[kind],
        "adomain": bid.get("adomain"), "ext": bid_ext(bid),
    }  # fmt: skip
    return TypedBid(go_bid({key: value for key, value in fields.items() if value is not None}), kind)


class StroeerCoreAdapter:
    """Ströer Core's calls and answers (see the module docstring)."""

    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        errors: list[BidderError] = []
        imps = []
        for imp in request.get("imp") or ():
            try:
                imps.append(tagged_imp(imp))
            except JsonShapeError as exc:
                errors.append(BidderError(str(exc)))
                imps.append(imp)
        body = go_typed_request({**request, "imp": imps})
        return [json_call(self.endpoint, body, [imp.get("id", "") for imp in imps], HEADERS)], errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        if response.status != 200:
            return None, [bad_server_response(f"Unexpected http status code: {response.status}.")]
        try:
            bids = read_bids(response.body)
        except JsonShapeError as exc:
            return None, [BidderError(str(exc))]
        result, errors = BidderResponse(currency="EUR"), []
        for bid in bids:
            typed = openrtb_bid(bid)
            if isinstance(typed, BidderError):
                errors.append(typed)
            else:
                result.bids.append(typed)
        return result, errors


def build(config: AdapterConfig) -> StroeerCoreAdapter:
    return StroeerCoreAdapter(config)
