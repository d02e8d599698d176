"""AMX adapter: every imp in one OpenRTB call to ``pbs.amxrtb.com/auction/openrtb?v=pbs1.3``.

The endpoint gets ``v=<adapter version>`` added to its query (parameters sorted, as Go encodes
them). A positive floor in a currency other than USD is converted to USD; an imp whose floor cannot
be converted is left out with an error. When any imp sent has a floor, ``cur`` becomes ``["USD"]``.
The last ``tagId`` param becomes the publisher id of the site and the app; ``adUnitId`` becomes the
imp's ``tagid``. Bids are video when ``ext.startdelay`` is set, native when ``ext.ct`` is 10, else
banner; ``ext.bc`` names the seat and ``ext.ds`` the demand source. Failure statuses report the
bidder's ``X-Nbr`` header as the error code. An endpoint Go's URL parser refuses fails the build
(ValueError), as PBS-Go's builder does.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

import orjson

from hbserver.adapters.base import (
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
    answer_bids,
    expect_object,
    expect_string,
    floor_in_usd,
    found,
    json_call,
)
from hbserver.adapters.golike import NOT_AN_OBJECT, go_media_objects, go_request_top, with_query_param

ADAPTER_VERSION = "pbs1.3"
_CURRENCY = "USD"
_HEADERS = {"Content-Type": "application/json;charset=utf-8"}
_NBR_HEADER = "x-nbr"
_NATIVE_CREATIVE = 10
_BAD_URL = re.compile(r"[\x00-\x1f\x7f]|%(?![0-9A-Fa-f]{2})")


def versioned_endpoint(endpoint: str) -> str:
    """``endpoint`` with ``v=<adapter version>`` added to its query (see ``with_query_param``).
    Raises ValueError for an endpoint Go's URL parser refuses (control characters, a leading
    space, a bad %-escape, a ``;`` in the query)."""
    if _BAD_URL.search(endpoint) or endpoint[:1].isspace() or ";" in urlsplit(endpoint).query:
        raise ValueError(f"invalid endpoint: {endpoint!r}")
    return with_query_param(endpoint, "v", ADAPTER_VERSION)


def _header(headers: Any, name: str) -> str:
    """A response header's value, the name matched case-insensitively ("" when absent)."""
    for key, value in headers.items():
        if key.lower() == name:
            return str(value)
    return ""


def _params(imp: dict[str, Any]) -> tuple[str, str]:
    """(tagId, adUnitId); ("", "") when ``imp.ext`` does not decode as AMX's params."""
    try:
        params = expect_object(expect_object(imp.get("ext"), "").get("bidder"), "")
        return (
            expect_string(params.get("tagId"), "openrtb_ext.ExtImpAMX.TagID"),
            expect_string(params.get("adUnitId"), "openrtb_ext.ExtImpAMX.AdUnitID"),
        )
    except JsonShapeError:
        return "", ""


def _with_publisher(owner: dict[str, Any], publisher_id: str) -> dict[str, Any]:
    publisher = owner.get("publisher")
    return {**owner, "publisher": {**(publisher if isinstance(publisher, dict) else {}), "id": publisher_id}}


def _int_field(ext: dict[str, Any], name: str, where: str) -> int | None:
    value = ext.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise JsonShapeError(f"cannot unmarshal {where}: readInt64: unexpected character: {found(value)}")
    return value


class AmxAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = versioned_endpoint(config.endpoint)

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        errors: list[BidderError] = []
        imps = []
        publisher_id = ""
        has_floor = False
        for imp in request.get("imp") or ():
            try:
                imp = floor_in_usd(imp, info)
            except ConversionError as exc:
                errors.append(BidderError(str(exc)))
                continue
            floor = imp.get("bidfloor")
            if isinstance(floor, int | float) and not isinstance(floor, bool) and floor > 0:
                has_floor = True
            tag_id, ad_unit_id = _params(imp)
            publisher_id = tag_id or publisher_id
            if ad_unit_id:
                imp = {**imp, "tagid": ad_unit_id}
            imps.append(go_media_objects(imp))
        if not imps:
            return [], errors
        body = go_request_top(request)
        body["imp"] = imps
        if has_floor:
            body["cur"] = [_CURRENCY]
        if publisher_id:
            for owner in ("app", "site"):
                if isinstance(request.get(owner), dict):
                    body[owner] = _with_publisher(request[owner], publisher_id)
        return [json_call(self.endpoint, body, (imp.get("id", "") for imp in imps), _HEADERS)], errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        if response.status == 204:
            return None, []
        if response.status == 400:
            code = _header(response.headers, _NBR_HEADER)
            return None, [bad_input(f"Invalid Request: 400. Error Code: {code}")]
        if response.status != 200:
            code = _header(response.headers, _NBR_HEADER)
            return None, [bad_server_response(f"Unexpected response: {response.status}. Error Code: {code}")]
        try:
            answer = orjson.loads(response.body)
        except orjson.JSONDecodeError as exc:
            return None, [bad_server_response(f"Bad response body: {exc}")]
        if not isinstance(answer, dict):
            return None, [BidderError(NOT_AN_OBJECT.format(found=found(answer)))]
        result = BidderResponse(currency=answer.get("cur") or _CURRENCY)
        errors: list[BidderError] = []
        for _, bid in answer_bids(answer):
            try:
                ext = expect_object(bid.get("ext"), "")
                start_delay = _int_field(ext, "startdelay", "amx.amxBidExt.StartDelay")
                creative_type = _int_field(ext, "ct", "amx.amxBidExt.CreativeType")
                demand_source = expect_string(ext.get("ds"), "amx.amxBidExt.DemandSource")
                seat = expect_string(ext.get("bc"), "amx.amxBidExt.BidderCode")
            except JsonShapeError as exc:
                errors.append(BidderError(str(exc)))
                continue
            if start_delay is not None:
                bid_type = "video"
            elif creative_type == _NATIVE_CREATIVE:
                bid_type = "native"
            else:
                bid_type = "banner"
            meta: dict[str, Any] = {}
            if bid.get("adomain"):
                meta["advertiserDomains"] = bid["adomain"]
            if demand_source:
                meta["demandSource"] = demand_source
            result.bids.append(TypedBid(bid, bid_type, seat=seat, bid_meta=meta))
        return result, errors


def build(config: AdapterConfig) -> AmxAdapter:
    return AmxAdapter(config)
