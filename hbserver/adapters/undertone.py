"""Undertone adapter: every imp whose ext decodes in one call (no headers) to the configured endpoint.

Each imp's ``tagid`` is its ``placementId`` (as digits) and its ext ``{"gpid": ...}`` when it has a
gpid, else none; an imp whose ext does not decode is dropped as bad input naming it. The first
non-zero ``publisherId`` becomes the site's (else the app's) publisher id, the rest of the publisher
kept; the request's ext is Undertone's adapter id and version. No imp left: no call.

The answer's bids are typed by their imp (banner, else video); a bid for no such imp is let go.
The answer's currency.
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
)
from hbserver.adapters.common import JsonShapeError, expect_object, json_call
from hbserver.adapters.golike import GoKind, go_fields, go_typed_request, go_value
from hbserver.adapters.steps import AnswerSpec

REQUEST_EXT = {"id": 4, "version": "1.0.0"}
ANSWER = AnswerSpec.of(
    {
        "status": "Unexpected status code: {}. Run with request.debug = 1 for more info.",
        "statuses": {
            400: "Unexpected status code: 400. Bad request from publisher. Run with request.debug = 1 for more info."
        },
    }
)


def read_ext(imp: Mapping[str, Any]) -> tuple[int, int, str]:
    """(publisherId, placementId, gpid) of the imp's ext as Go's ``impExt`` decodes it (an absent
    bidder reads as zeros: PBS-Go would panic); JsonShapeError in json-iterator's words."""
    ext = go_fields(expect_object(imp.get("ext"), ""), "bidder", "gpid")
    gpid = go_value(ext.get("gpid"), GoKind.STRING, "undertone.impExt.Gpid") or ""
    if ext.get("bidder") is None:
        return 0, 0, gpid
    bidder = go_fields(expect_object(ext["bidder"], "undertone.impExt.Bidder"), "publisherId", "placementId")
    publisher = go_value(bidder.get("publisherId"), GoKind.INT, "openrtb_ext.ExtImpUndertone.PublisherID")
    placement = go_value(bidder.get("placementId"), GoKind.INT, "openrtb_ext.ExtImpUndertone.PlacementID")
    return publisher or 0, placement or 0, gpid


def with_publisher(request: dict[str, Any], publisher_id: int) -> None:
    """The site's (else the app's) publisher given ``publisher_id`` as its id."""
    for holder in ("site", "app"):
        place = request.get(holder)
        if place is not None:
            publisher = place.get("publisher") if isinstance(place, Mapping) else None
            kept = dict(publisher) if isinstance(publisher, Mapping) else {}
            request[holder] = {**place, "publisher": {**kept, "id": str(publisher_id)}}
            return


class UndertoneAdapter:
    """Undertone's calls and answers (see the module docstring)."""

    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps, errors, publisher_id = [], [], 0
        for imp in request.get("imp") or ():
            try:
                publisher, placement, gpid = read_ext(imp)
            except JsonShapeError as exc:
                errors.append(bad_input(f"Invalid impid={imp.get('id', '')}: {exc}"))
                continue
            publisher_id = publisher_id or publisher
            sent = {key: value for key, value in imp.items() if key != "ext"}
            sent["tagid"] = str(placement)
            if gpid:
                sent["ext"] = {"gpid": gpid}
            imps.append(sent)
        if not imps:
            return [], errors
        out = {**request, "imp": imps, "ext": REQUEST_EXT}
        with_publisher(out, publisher_id)
        ids = [imp.get("id", "") for imp in imps]
        return [json_call(self.endpoint, go_typed_request(out), ids, {})], errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = ANSWER.decode(response)
        if answer is None:
            return None, failure
        kinds: dict[Any, str] = {}
        for imp in request.get("imp") or ():
            kind = "banner" if imp.get("banner") is not None else "video" if imp.get("video") is not None else None
            if kind is not None:
                kinds[imp.get("id")] = kind
        result = BidderResponse(currency=answer.cur or "USD")
        result.bids = [TypedBid(bid, kinds[bid.get("impid")]) for bid in answer.bids if bid.get("impid") in kinds]
        return result, []


def build(config: AdapterConfig) -> UndertoneAdapter:
    return UndertoneAdapter(config)
