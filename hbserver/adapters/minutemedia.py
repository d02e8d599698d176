"""MinuteMedia adapter: the request, unchanged, in one OpenRTB call to
``pbs.minutemedia-prebid.com/pbs-mm?publisher_id=<org>``.

The first imp's ``org`` param (spaces trimmed as Go's ``strings.TrimSpace`` does, then escaped as a
query value) names the publisher; the other imps' params are not read. A test request (``test: 1``)
goes to MinuteMedia's fixed test endpoint instead. Params that do not decode fail the request with
PBS-Go's wrapped texts (``failed to extract org: ...``). Bids are typed by ``mtype`` (1 banner,
2 video); any other bid is reported and the rest are kept. The answer's ``cur`` is the currency.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote_plus

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
from hbserver.adapters.common import AnswerWording, JsonShapeError, imp_ids, json_call
from hbserver.adapters.golike import (
    ABSENT_OBJECT,
    GO_SPACE,
    GoKind,
    ImpExtError,
    go_media_objects,
    go_members,
    go_request_top,
    go_typed_bids,
    go_value,
    imp_bidder_params,
)

TEST_ENDPOINT = "https://pbs.minutemedia-prebid.com/pbs-test"
_ANSWER_WORDING = AnswerWording(body_error=BidderError)
_BID_TYPES = {1: "banner", 2: "video"}
# What Go's strings.TrimSpace removes (unicode.IsSpace); Python's own strip also takes \x1c-\x1f


def _org(request: dict[str, Any]) -> str:
    """The first imp's ``org`` param, trimmed; ValueError with PBS-Go's text when it cannot be read."""
    imps = request.get("imp") or []
    if not imps:
        raise ValueError("no imps in bid request")
    try:
        if imps[0].get("ext") is None:  # json-iterator reads a JSON null raw value as no bytes
            raise ImpExtError(ABSENT_OBJECT)
        params = imp_bidder_params(imps[0], null_is_absent=True)
    except ImpExtError as exc:
        raise ValueError(f"failed to unmarshal bidderExt: {exc}") from None
    except JsonShapeError as exc:
        raise ValueError(f"failed to unmarshal ImpExtMinuteMedia: {exc}") from None
    org = ""
    try:
        for _, value in go_members(params, "org"):
            org = go_value(value, GoKind.STRING, "openrtb_ext.ImpExtMinuteMedia.Org") or ""
    except JsonShapeError as exc:
        raise ValueError(f"failed to unmarshal ImpExtMinuteMedia: {exc}") from None
    return org.strip(GO_SPACE)


def _typed(bid: dict[str, Any]) -> TypedBid | BidderError:
    mtype = bid.get("mtype", 0)
    bid_type = _BID_TYPES.get(mtype)
    return TypedBid(bid, bid_type) if bid_type else bad_server_response(f"unsupported MType {mtype}")


class MinutemediaAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint
        self.headers = {"Content-Type": "application/json;charset=utf-8"}

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        try:
            org = _org(request)
        except ValueError as exc:
            return [], [BidderError(f"failed to extract org: {exc}")]
        test = request.get("test")
        endpoint = TEST_ENDPOINT if test == 1 and not isinstance(test, bool) else self.endpoint
        body = go_request_top(request)
        imps = [go_media_objects(imp) for imp in request.get("imp") or ()]
        body["imp"] = imps
        uri = f"{endpoint}?publisher_id={quote_plus(org, safe='')}"
        return [json_call(uri, body, imp_ids(imps), self.headers)], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        return go_typed_bids(response, _typed, _ANSWER_WORDING)


def build(config: AdapterConfig) -> MinutemediaAdapter:
    return MinutemediaAdapter(config)
