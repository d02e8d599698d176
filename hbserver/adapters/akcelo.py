"""Akcelo adapter: the whole request in one call to the configured endpoint, sent as Go writes its
typed model.

Each imp's ext becomes ``{"akcelo": <its bidder params>}``; an imp whose ext does not decode keeps
it and is reported (``Unsupported imp : <id>``), the call still made. The request always has a site
and a publisher; the publisher's ext becomes ``{"prebid": {"parentAccount": <siteId>}}``, the
``akcelo.siteId`` of the first imp's (new) ext as ``jsonparser.Get`` gives it (the raw text of a
number, a string's contents); without one no call is made (``Cannot find valid siteId``).

Bids are typed by a non-zero ``mtype`` (banner, video, native), else by ``ext.prebid.type``; a bid
without a type is dropped with its error. USD.
"""

from __future__ import annotations

from typing import Any

import orjson

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
)
from hbserver.adapters.common import JsonShapeError, imp_ids, json_call
from hbserver.adapters.golike import (
    ImpExtError,
    go_field,
    go_typed_bids,
    go_typed_request,
    imp_bidder_params,
)
from hbserver.adapters.steps import ext_prebid_type

_TYPES = {1: "banner", 2: "video", 4: "native"}
_ALL_TYPES = ("banner", "video", "audio", "native")


def jsonparser_text(value: Any, *keys: str) -> str | None:
    """The value at ``keys`` of decoded JSON as ``jsonparser.Get`` returns it: a string's contents,
    any other value's JSON text; None where the path is missing."""
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def akcelo_imp(imp: dict[str, Any]) -> dict[str, Any]:
    """The imp with its ext ``{"akcelo": <bidder params>}``; ImpExtError when the ext does not decode."""
    try:
        imp_bidder_params(imp)
    except ImpExtError:
        raise
    except JsonShapeError:
        pass  # the bidder member goes as it is, whatever it is (Go's json.RawMessage)
    return {**imp, "ext": {"akcelo": go_field(imp["ext"], "bidder")}}


def with_parent_account(request: dict[str, Any], parent: str) -> dict[str, Any]:
    site = request.get("site")
    site = dict(site) if isinstance(site, dict) else {}
    publisher = site.get("publisher")
    publisher = dict(publisher) if isinstance(publisher, dict) else {}
    publisher["ext"] = {"prebid": {"parentAccount": parent}}
    site["publisher"] = publisher
    return {**request, "site": site}


class AkceloAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = list(request.get("imp") or ())
        if not imps:
            return [], [bad_input("No valid Imp")]
        errors, sent = [], []
        for imp in imps:
            try:
                sent.append(akcelo_imp(imp))
            except ImpExtError:
                errors.append(bad_input(f"Unsupported imp : {imp.get('id', '')}"))
                sent.append(imp)
        parent = jsonparser_text(sent[0].get("ext"), "akcelo", "siteId")
        if parent is None:
            return [], [bad_input("Cannot find valid siteId")]
        body = go_typed_request({**with_parent_account(request, parent), "imp": sent})
        return [json_call(self.endpoint, body, imp_ids(sent), JSON_HEADERS)], errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        return go_typed_bids(response, typed_bid, answer_currency=False)


def typed_bid(bid: dict[str, Any]) -> TypedBid | BidderError:
    """The bid typed by its mtype, else by ``ext.prebid.type``; else the error PBS-Go words."""
    mtype = bid.get("mtype") or 0
    if mtype:
        kind = _TYPES.get(mtype)
        return TypedBid(bid, kind) if kind else BidderError(f"unable to get media type {mtype}")
    if bid.get("ext") is not None:
        try:
            kind = ext_prebid_type(bid)
        except JsonShapeError as exc:
            return BidderError(str(exc))
        if kind is not None:
            return TypedBid(bid, kind) if kind in _ALL_TYPES else BidderError(f"invalid BidType: {kind}")
    return BidderError(f"missing media type for bid: {bid.get('id', '')}")


def build(config: AdapterConfig) -> AkceloAdapter:
    return AkceloAdapter(config)
