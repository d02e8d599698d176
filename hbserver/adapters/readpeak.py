"""Readpeak adapter: one call with every imp whose params decode (the recipe ``recipes/readpeak.yaml``
reads the answer). PBS-Go's readpeak decodes every imp's params into one struct, so a param an imp
leaves out keeps the value an earlier imp gave it: each imp takes the ``tagId`` (as its ``tagid``) and
non-zero ``bidfloor`` known so far, and the site (else the app) gets the last ``siteId`` as its id and
a publisher of the last ``publisherId`` alone. A request without such an imp gets no call, that error
alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, RequestData, RequestInfo, bad_input
from hbserver.adapters.common import JsonShapeError, json_call
from hbserver.adapters.golike import go_members, imp_bidder_params
from hbserver.adapters.recipe import RecipeAdapter, typed_imp, typed_top
from hbserver.adapters.steps import decode_kind

# ImpExtReadpeak: json name -> (Go field, kind, zero value)
_FIELDS = {
    "publisherId": ("PublisherId", "string", ""),
    "siteId": ("SiteId", "string", ""),
    "bidfloor": ("Bidfloor", "float64", 0),
    "tagId": ("TagId", "string", ""),
}


def read_into(params: dict[str, Any], imp: Mapping[str, Any]) -> None:
    """The imp's params decoded over ``params`` as Go decodes into a used struct: a field set by
    each member in turn (null leaves it), until one fails (JsonShapeError)."""
    for name, value in go_members(imp_bidder_params(imp), *_FIELDS):
        go_name, kind, _ = _FIELDS[name]
        decoded = decode_kind(value, kind, f"openrtb_ext.ImpExtReadpeak.{go_name}")
        if decoded is not None:
            params[name] = decoded


def _with_ids(request: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, Any]:
    """The request's site (else app) with the params' siteId and a publisher of the publisherId alone."""
    out = dict(request)
    holder = "site" if request.get("site") is not None else "app" if request.get("app") is not None else ""
    if holder:
        place = dict(request[holder])
        if params["siteId"]:
            place["id"] = params["siteId"]
        place["publisher"] = {"id": params["publisherId"]} if params["publisherId"] else {}
        out[holder] = place
    return out


class ReadpeakAdapter(RecipeAdapter):
    """The call Readpeak's own, the answer the recipe's."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        params = {name: zero for name, (_, _, zero) in _FIELDS.items()}
        imps, errors = [], []
        for imp in request.get("imp") or ():
            try:
                read_into(params, imp)
            except JsonShapeError as exc:
                errors.append(BidderError(str(exc)))
                continue
            out = dict(imp)
            if params["tagId"]:
                out["tagid"] = params["tagId"]
            if params["bidfloor"]:
                out["bidfloor"] = params["bidfloor"]
            imps.append(typed_imp(out))
        if not imps:
            return [], [bad_input(f"Failed to find compatible impressions for request {request.get('id', '')}")]
        body = {**typed_top(_with_ids(request, params)), "imp": imps}
        ids = [imp.get("id", "") for imp in request.get("imp") or ()]
        return [json_call(self.endpoint, body, ids, self.headers(request))], errors


def build(config: AdapterConfig) -> ReadpeakAdapter:
    return ReadpeakAdapter.of_code("readpeak", config)
