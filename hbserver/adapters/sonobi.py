"""Sonobi adapter: one OpenRTB call per imp to ``apex.go.sonobi.com/prebid``.

Each call is the request with that one imp and ``cur: ["USD"]``. The ``TagID`` param (matched in
any case, as Go matches ``tagid``) becomes ``imp.tagid``; like PBS-Go, the tag id read last carries
over to a later imp whose params name none. A floor in a currency other than USD is converted to
USD (an imp whose floor cannot be converted is reported and skipped). The answer and bid typing
are the recipe ``recipes/sonobi.yaml``'s.
"""

from __future__ import annotations

from typing import Any

import orjson

from hbserver.adapters.base import JSON_HEADERS, AdapterConfig, BidderError, ConversionError, RequestData, RequestInfo
from hbserver.adapters.common import JsonShapeError, expect_string, floor_in_usd
from hbserver.adapters.golike import go_members, imp_bidder_params, set_omitempty
from hbserver.adapters.recipe import RecipeAdapter


def _tag_id(imp: dict[str, Any], previous: str) -> tuple[str, str | None]:
    """(tag id, error text): the imp's ``tagid`` param decoded over ``previous``, as Go reuses one
    params struct for all imps (a name absent keeps the earlier value; null, or a value of the
    wrong type, clears it)."""
    try:
        params = imp_bidder_params(imp)
    except JsonShapeError as exc:
        return previous, str(exc)
    tag_id = previous
    for _, value in go_members(params, "TagID"):
        try:
            tag_id = expect_string(value, "openrtb_ext.ExtImpSonobi.TagID")
        except JsonShapeError as exc:
            return "", str(exc)
    return tag_id, None


class SonobiAdapter(RecipeAdapter):
    """The recipe ``recipes/sonobi.yaml`` (the answer and bid typing), the calls Sonobi's own."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        calls: list[RequestData] = []
        errors: list[BidderError] = []
        tag_id = ""
        for imp in request.get("imp") or ():
            tag_id, problem = _tag_id(imp, tag_id)
            if problem is not None:
                errors.append(BidderError(problem))
                continue
            out = dict(imp)
            set_omitempty(out, "tagid", tag_id)
            try:
                out = floor_in_usd(out, info)
            except ConversionError as exc:
                errors.append(BidderError(str(exc)))
                continue
            body = orjson.dumps({**request, "imp": [out], "cur": ["USD"]})
            calls.append(RequestData("POST", self.endpoint, body, JSON_HEADERS, [imp.get("id", "")]))
        return calls, errors


def build(config: AdapterConfig) -> SonobiAdapter:
    return SonobiAdapter.of_code("sonobi", config)
