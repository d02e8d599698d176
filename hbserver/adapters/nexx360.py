"""Nexx360 adapter: the whole request in one OpenRTB call to ``fast.nexx360.io/prebid-server``.

Each imp's ``ext.bidder`` moves to ``ext.nexx360`` (the rest of ``imp.ext`` is kept). The first
imp's ``placement`` and ``tagId`` params make up the endpoint's whole query (``placement=...&tag_id=...``,
the configured query dropped, as PBS-Go replaces it). ``request.ext`` becomes
``{"nexx360": {"caller": [{"name": "Prebid-Server", "version": <PBS version, else "n/a">}]}}``.
The first imp whose ext or params do not decode fails the whole request, in json-iterator's words.
The call carries only ``Content-Type: application/json``.

Bids are typed by ``ext.bidType`` (banner, video, audio or native); any other bid is dropped with
an error, and an answer in which no bid is typed gives neither bids nor errors (PBS-Go returns
nothing then). Every failure status is bad input. The answer's ``cur`` is the currency when given.

Host settings in ``AdapterConfig.extra``: ``pbs_version`` (the caller's version).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

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
from hbserver.adapters.common import AnswerWording, JsonShapeError, expect_string, json_call
from hbserver.adapters.golike import (
    go_field,
    go_imp,
    go_members,
    go_request_top,
    go_typed_bids,
    imp_bidder_params,
)

HEADERS = {"Content-Type": "application/json"}
BID_TYPES = frozenset({"banner", "video", "audio", "native"})
# openrtb2.Imp's omitempty fields: value types are left out when zero or empty, pointers when null

_ANSWER_WORDING = AnswerWording(
    status="Unexpected http status code: {}",
    status_error=bad_input,
    body_error=BidderError,  # PBS-Go passes the decoder's error on unclassified
)


def caller_ext(pbs_version: str) -> dict[str, Any]:
    """The outgoing ``request.ext``: Prebid Server as the one caller (PBS-Go says "n/a" when it
    was built without a version)."""
    return {"nexx360": {"caller": [{"name": "Prebid-Server", "version": pbs_version or "n/a"}]}}


def _moved_params(imp: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(the imp's new ext, its params): ``imp.ext`` with ``bidder`` renamed ``nexx360``, and the
    params (None for ``"bidder": null``, which PBS-Go writes as ``"nexx360": null``). Raises
    JsonShapeError when the ext or the params do not decode."""
    params: dict[str, Any] | None = imp_bidder_params(imp)
    ext = imp["ext"] or {}
    if go_field(ext, "bidder") is None:
        params = None
    out = {key: value for key, value in ext.items() if key != "bidder"}  # PBS-Go deletes the exact key only
    out["nexx360"] = params
    return out, params


def _query_params(params: Any) -> tuple[str, str]:
    """(placement, tagId) as PBS-Go's ``ExtImpNexx360`` reads them ("" when absent or null)."""
    placement = tag_id = ""
    for name, value in go_members(params or {}, "tagId", "placement"):
        if name == "tagId":
            tag_id = expect_string(value, "openrtb_ext.ExtImpNexx360.TagId")
        else:
            placement = expect_string(value, "openrtb_ext.ExtImpNexx360.Placement")
    return placement, tag_id


def bid_type(bid: dict[str, Any]) -> str | None:
    """The bid's ``ext.bidType`` when it names a media type; None when the ext is absent, does not
    decode as PBS-Go's ``Nexx360ResBidExt`` or names no known type."""
    ext = bid.get("ext")
    if not isinstance(ext, dict):
        return None
    kind = ""
    for _, value in go_members(ext, "bidType"):
        if value is not None and not isinstance(value, str):
            return None
        kind = value or ""
    return kind if kind in BID_TYPES else None


def _typed(bid: dict[str, Any]) -> TypedBid | BidderError:
    kind = bid_type(bid)
    if kind is None:
        return bad_server_response(f"unable to fetch mediaType in multi-format: {bid['impid']}")
    return TypedBid(bid, kind)


class Nexx360Adapter:
    def __init__(self, config: AdapterConfig) -> None:
        # PBS-Go parses the endpoint per request; one it cannot use is refused at start-up here
        self.endpoint = urlsplit(config.endpoint)
        self.ext = caller_ext(str(config.extra.get("pbs_version") or ""))

    def _uri(self, placement: str, tag_id: str) -> str:
        pairs = [("placement", placement)] if placement else []
        if tag_id:
            pairs.append(("tag_id", tag_id))
        return urlunsplit(self.endpoint._replace(query=urlencode(pairs)))

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = []
        placement = tag_id = ""
        for index, imp in enumerate(request.get("imp") or ()):
            try:
                ext, params = _moved_params(imp)
                out = go_imp(imp)
                out["ext"] = ext
                imps.append(out)
                if index == 0:
                    placement, tag_id = _query_params(params)
            except JsonShapeError as exc:
                return [], [bad_input(str(exc))]
        body = go_request_top(request)
        body["imp"] = imps
        body["ext"] = self.ext
        return [json_call(self._uri(placement, tag_id), body, (imp.get("id", "") for imp in imps), HEADERS)], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        result, errors = go_typed_bids(response, _typed, _ANSWER_WORDING)
        if result is not None and not result.bids:
            return None, []
        return result, errors


def build(config: AdapterConfig) -> Nexx360Adapter:
    return Nexx360Adapter(config)
