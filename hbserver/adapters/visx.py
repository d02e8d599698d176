"""Visx adapter: the call is the recipe ``recipes/visx.yaml``'s, the request sent with ``cur: ["USD"]``
when it names no currency. The answer is Visx's own shape (``visxResponse``: bids with ``auid``,
unsigned ``w``/``h``), each bid rebuilt as an OpenRTB bid whose ``id`` is the request's id. A bid is
typed by ``ext.prebid.meta.mediaType`` (banner or video; an ext that does not decode is let go),
else by its imp (banner, then video); a bid whose imp has neither, or that has no imp, fails the
whole answer. The answer's currency when it names one, else USD."""

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
    bad_server_response,
)
from hbserver.adapters.common import JsonShapeError, expect_object, typed_as, typed_bid_response
from hbserver.adapters.golike import GoKind, go_bid, go_field, go_fields, go_json_object, go_list, go_value, go_wrap_int
from hbserver.adapters.recipe import RecipeAdapter

# visxBid: JSON name -> (Go field, kind); uint64 sizes are checked apart
_BID_FIELDS: Mapping[str, tuple[str, GoKind]] = {
    "impid": ("ImpID", GoKind.STRING),
    "price": ("Price", GoKind.FLOAT),
    "auid": ("UID", GoKind.INT),
    "crid": ("CrID", GoKind.STRING),
    "adm": ("AdM", GoKind.STRING),
    "adomain": ("ADomain", GoKind.STRINGS),
    "dealid": ("DealID", GoKind.STRING),
    "ext": ("Ext", GoKind.RAW),
}
_SIZES = {"w": "W", "h": "H"}


def _uint64(value: Any, where: str) -> int:
    """A Go ``uint64`` field (null is 0); JsonShapeError for anything else."""
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**64:
        return value
    raise JsonShapeError(f"cannot unmarshal {where}: ReadUint64: unexpected character")


def _visx_bid(data: Any, request_id: str) -> dict[str, Any]:
    """One ``visxBid`` decoded and rebuilt as the ``openrtb2.Bid`` PBS-Go makes of it."""
    members = go_fields(expect_object(data, "[]visx.visxBid"), *_BID_FIELDS, *_SIZES)
    bid: dict[str, Any] = {"id": request_id}
    for name, (go_name, kind) in _BID_FIELDS.items():
        value = go_value(members.get(name), kind, f"visx.visxBid.{go_name}")
        if name != "auid":
            bid[name] = value
    for name, go_name in _SIZES.items():
        bid[name] = go_wrap_int(_uint64(members.get(name), f"visx.visxBid.{go_name}"))  # Go's int64(w)
    return go_bid(bid)


def visx_answer(body: bytes, request_id: str) -> tuple[str, list[dict[str, Any]]]:
    """The answer's currency and its bids as OpenRTB bids; JsonShapeError when it does not decode."""
    fields = go_fields(expect_object(go_json_object(body) or {}, ""), "seatbid", "cur")
    cur = go_value(fields.get("cur"), GoKind.STRING, "visx.visxResponse.Cur") or ""
    bids = []
    for seatbid in go_list(fields.get("seatbid"), "visx.visxResponse.SeatBid"):
        members = go_fields(expect_object(seatbid, "[]visx.visxSeatBid"), "bid", "seat")
        go_value(members.get("seat"), GoKind.STRING, "visx.visxSeatBid.Seat")
        bids.extend(_visx_bid(bid, request_id) for bid in go_list(members.get("bid"), "visx.visxSeatBid.Bid"))
    return cur, bids


def _ext_media_type(ext: Any) -> Any:
    """``ext.prebid.meta.mediaType``; None when the ext does not decode as ``visxBidExt``."""
    try:
        value: Any = expect_object(ext, "")
        for name in ("prebid", "meta"):
            value = go_field(value, name)
            value = {} if value is None else expect_object(value, "")
        return go_value(go_field(value, "mediaType"), GoKind.STRING, "")
    except JsonShapeError:
        return None


def bid_type(bid: Mapping[str, Any], imps: list[Any]) -> str | BidderError:
    """The bid's type, or the error (a bad server response) when it has none."""
    impid = bid.get("impid", "")
    for imp in imps:
        if imp.get("id") == impid:
            kind = _ext_media_type(bid.get("ext"))
            if kind in ("banner", "video"):
                return str(kind)
            for kind in ("banner", "video"):
                if imp.get(kind) is not None:
                    return kind
            return bad_server_response(f'Unknown impression type for ID: "{impid}"')
    return bad_server_response(f'Failed to find impression for ID: "{impid}"')


class VisxAdapter(RecipeAdapter):
    """The recipe's call with a currency; Visx's own answer."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        if not request.get("cur"):
            request = {**request, "cur": ["USD"]}
        return super().make_requests(request, info)

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        failure = self.recipe.answer.status_failure(response)
        if failure is not None:
            return None, failure
        request_id = request.get("id") if isinstance(request.get("id"), str) else ""
        try:
            cur, bids = visx_answer(response.body, request_id)
        except JsonShapeError as exc:
            return None, [BidderError(str(exc))]
        imps = list(request.get("imp") or ())
        typed = typed_as(lambda bid: bid_type(bid, imps))
        return typed_bid_response(bids, typed, cur or "USD", first_error_fails=True)


def build(config: AdapterConfig) -> VisxAdapter:
    return VisxAdapter.of_code("visx", config)
