"""Kidoz adapter: one OpenRTB 2.5 call per banner or video imp (a banner needs a non-empty ``format``;
the params need an ``access_token`` and a ``publisher_id``) to the configured endpoint.

Answers: 204 and 503 mean no bids; 400, 401 and 403 are bad input and any other status but 200 a bad
server response, both worded with the answer's body. Bids are typed by their imp (banner, video,
native, audio); a bid for no known imp is dropped with an error. Prices are in USD.
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
from hbserver.adapters.common import JsonShapeError, imp_bid_type, json_call, json_headers
from hbserver.adapters.golike import (
    ABSENT_OBJECT,
    GoKind,
    ImpExtError,
    go_answer,
    go_fields,
    go_media_objects,
    go_request_top,
    go_value,
    imp_bidder_params,
)

_HEADERS = json_headers(x_openrtb_version="2.5")
_NO_BIDS = frozenset({204, 503})
_BAD_INPUT = frozenset({400, 401, 403})
_UNKNOWN_IMP = "ignoring bid id={id}, request doesn't contain any valid impression with id={impid}"


def imp_problem(imp: Mapping[str, Any]) -> BidderError | None:
    """Why an imp gets no call (PBS-Go's words, checked in its order), None when it gets one."""
    if imp.get("banner") is None and imp.get("video") is None:
        return bad_input("Kidoz only supports banner or video ads")
    banner = imp.get("banner")
    if isinstance(banner, Mapping):
        if banner.get("format") is None:
            return bad_input("banner format required")
        if not banner["format"]:
            return bad_input("banner format array is empty")
    if "ext" not in imp:
        return BidderError("impression extensions required")
    try:
        params = imp_bidder_params(imp)
    except ImpExtError as exc:
        return BidderError(str(exc))
    except JsonShapeError as exc:
        return BidderError("bidder required" if str(exc) == ABSENT_OBJECT else str(exc))
    try:
        fields = go_fields(params, "access_token", "publisher_id")
        token = go_value(fields.get("access_token"), GoKind.STRING, "openrtb_ext.ExtImpKidoz.AccessToken")
        publisher = go_value(fields.get("publisher_id"), GoKind.STRING, "openrtb_ext.ExtImpKidoz.PublisherID")
    except JsonShapeError as exc:
        return BidderError(str(exc))
    if not token:
        return BidderError("Kidoz access_token required")
    if not publisher:
        return BidderError("Kidoz publisher_id required")
    return None


class KidozAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        top = go_request_top(request)
        calls: list[RequestData] = []
        errors: list[BidderError] = []
        for imp in request.get("imp") or ():
            problem = imp_problem(imp)
            if problem is not None:
                errors.append(problem)
                continue
            calls.append(
                json_call(self.endpoint, {**top, "imp": [go_media_objects(imp)]}, [imp.get("id", "")], _HEADERS)
            )
        return calls, errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        status = response.status
        if status in _NO_BIDS:
            return None, []
        if status != 200:
            text = f"unexpected status code: {status} {response.body.decode(errors='replace')}"
            return None, [bad_input(text) if status in _BAD_INPUT else bad_server_response(text)]
        try:
            answer = go_answer(response.body)
        except JsonShapeError as exc:
            return None, [bad_server_response(str(exc))]
        result = BidderResponse()
        errors: list[BidderError] = []
        imps = request.get("imp") or ()
        for bid in answer.bids:
            bid_type = imp_bid_type(imps, bid["impid"])
            if bid_type is None:
                errors.append(bad_server_response(_UNKNOWN_IMP.format(id=bid["id"], impid=bid["impid"])))
                continue
            result.bids.append(TypedBid(bid, bid_type))
        return result, errors


def build(config: AdapterConfig) -> KidozAdapter:
    return KidozAdapter(config)
