"""TripleLift Native adapter: the native imps of publishers on a whitelist, in one OpenRTB call.

The publisher (the app's, else the site's) is the one of ``ext.prebid.parentAccount`` when given,
else its ``id``, else ``unknown``; a request from a publisher not in ``extra_info``'s
``publisher_whitelist`` yields no call and only that error. Per imp: ``inventoryCode`` becomes
``tagid`` (``ext.data.tag_code`` instead when the publisher's domain is ``msn.com``), ``floor``
the floor, and a positive floor is sent in USD with ``bidfloorcur: USD``. Imps without a native
object are dropped. Every bid is native and priced in USD.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
)
from hbserver.adapters.common import AnswerWording, JsonShapeError, Refusal, expect_object, imp_ids, json_call
from hbserver.adapters.golike import (
    NOT_AN_OBJECT,
    GoKind,
    go_field,
    go_imp,
    go_request_top,
    go_typed_bids,
    go_value,
    imp_bidder_params,
)

_MSN = "msn.com"
# PBS-Go returns json-iterator's error for an answer that does not decode as it is (no error class)
_ANSWER_WORDING = AnswerWording(not_an_object=NOT_AN_OBJECT, body_error=BidderError)


class _Dropped(Refusal):
    """An imp that is not sent; ``error`` says why."""


def _whitelist(extra_info: str) -> frozenset[str]:
    """``publisher_whitelist`` of the adapter's extra info (none when it is empty); ValueError when
    the extra info does not decode, as PBS-Go's builder refuses it."""
    if not extra_info:
        return frozenset()
    try:
        info = expect_object(orjson.loads(extra_info), "")
        names = go_value(go_field(info, "publisher_whitelist"), GoKind.STRINGS, "PublisherWhitelist")
    except (orjson.JSONDecodeError, JsonShapeError) as exc:
        raise ValueError(f"invalid extra info: {exc}") from None
    return frozenset(names or ())


def _object_at(obj: Any, *path: str) -> Mapping[str, Any]:
    """The object at ``path`` below ``obj`` (empty when any step is absent or not an object)."""
    for name in path:
        obj = obj.get(name) if isinstance(obj, Mapping) else None
    return obj if isinstance(obj, Mapping) else {}


def _publisher(request: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The app's publisher when there is an app, else the site's (None when absent)."""
    holder = request.get("app") if request.get("app") is not None else request.get("site")
    publisher = holder.get("publisher") if isinstance(holder, Mapping) else None
    return publisher if isinstance(publisher, Mapping) else None


def effective_publisher_id(publisher: Mapping[str, Any] | None) -> str:
    """``ext.prebid.parentAccount`` when given and non-empty (and the ext decodes), else ``id``,
    else ``unknown``."""
    if publisher is None:
        return "unknown"
    parent = _object_at(publisher, "ext", "prebid").get("parentAccount")
    if isinstance(parent, str) and parent:
        return parent
    pub_id = publisher.get("id")
    return pub_id if isinstance(pub_id, str) and pub_id else "unknown"


def _msn(request: Mapping[str, Any]) -> bool:
    """Whether the site's or the app's publisher has the domain ``msn.com``."""
    return any(_object_at(request, holder, "publisher").get("domain") == _MSN for holder in ("site", "app"))


def _tag_code(imp: Mapping[str, Any]) -> str:
    """``ext.data.tag_code`` ("" when absent); JsonShapeError when ``data`` does not decode."""
    ext = imp.get("ext")
    data = expect_object(go_field(ext, "data"), "triplelift_native.ExtImp.Data") if isinstance(ext, Mapping) else {}
    return go_value(go_field(data, "tag_code"), GoKind.STRING, "triplelift_native.ExtImpData.TagCode") or ""


def _floor_in_usd(imp: dict[str, Any], info: RequestInfo) -> None:
    """A positive floor in USD, with ``bidfloorcur: USD`` (converted from another currency)."""
    floor = imp.get("bidfloor") or 0
    if floor <= 0:
        return
    currency = imp.get("bidfloorcur") or ""
    if currency and currency.upper() != "USD":
        try:
            imp["bidfloor"] = info.convert_currency(floor, currency, "USD")
        except ConversionError as exc:
            raise _Dropped(bad_input(f"Unable to convert bid floor from {currency} to USD: {exc}")) from None
    imp["bidfloorcur"] = "USD"


def _process_imp(imp: dict[str, Any], request: Mapping[str, Any], info: RequestInfo) -> dict[str, Any]:
    """The imp as sent; _Dropped (worded as PBS-Go's) when it cannot be."""
    try:
        return _imp_as_sent(imp, request, info)
    except JsonShapeError as exc:
        raise _Dropped(BidderError(str(exc))) from None


def _imp_as_sent(imp: dict[str, Any], request: Mapping[str, Any], info: RequestInfo) -> dict[str, Any]:
    tag_code = _tag_code(imp)  # imp.ext's own members decode before its bidder params
    params = imp_bidder_params(imp)
    inventory_code = go_value(go_field(params, "inventoryCode"), GoKind.STRING, "openrtb_ext.ExtImpTriplelift.InvCode")
    floor = go_value(go_field(params, "floor"), GoKind.FLOAT, "openrtb_ext.ExtImpTriplelift.Floor")
    if imp.get("native") is None:
        raise JsonShapeError("no native object specified")
    out = dict(imp)
    out["tagid"] = tag_code if tag_code and _msn(request) else (inventory_code or "")
    if floor is not None:
        out["bidfloor"] = floor
    if not isinstance(out.get("bidfloor") or 0, int | float) or not isinstance(out.get("bidfloorcur") or "", str):
        raise JsonShapeError("imp.bidfloor must be a number and imp.bidfloorcur a string")
    _floor_in_usd(out, info)
    return go_imp(out)


class TripleliftNativeAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint
        self.publisher_whitelist = _whitelist(str(config.extra.get("extra_info") or ""))

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        errors: list[BidderError] = []
        imps: list[dict[str, Any]] = []
        for imp in request.get("imp") or ():
            try:
                imps.append(_process_imp(imp, request, info))
            except _Dropped as dropped:
                errors.append(dropped.error)
        if effective_publisher_id(_publisher(request)) not in self.publisher_whitelist:
            return [], [BidderError("Unsupported publisher for triplelift_native")]
        if not imps:
            return [], [*errors, BidderError("No valid impressions for triplelift")]
        body = {**go_request_top(request), "imp": imps}
        return [json_call(self.endpoint, body, imp_ids(imps), JSON_HEADERS)], errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        return go_typed_bids(response, lambda bid: TypedBid(bid, "native"), _ANSWER_WORDING, answer_currency=False)


def build(config: AdapterConfig) -> TripleliftNativeAdapter:
    return TripleliftNativeAdapter(config)
