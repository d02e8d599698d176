"""Nexx360 adapter: the whole request in one OpenRTB call to ``fast.nexx360.io/prebid-server``.

Each imp's ``ext.bidder`` moves to ``ext.nexx360`` (the rest of ``imp.ext`` is kept). The first
imp's ``placement`` and ``tagId`` params make up the endpoint's whole query (``placement=...&tag_id=...``,
the configured query dropped, as PBS-Go replaces it). ``request.ext`` becomes
``{"nexx360": {"caller": [{"name": "Prebid-Server", "version": <PBS version, else "n/a">}]}}``.
The first imp whose ext or params do not decode fails the whole request, in json-iterator's words.
The call carries only ``Content-Type: application/json``.

The answer and bid typing (by ``ext.bidType``) are the recipe ``recipes/nexx360.yaml``'s.

Host settings in ``AdapterConfig.extra``: ``pbs_version`` (the caller's version).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from hbserver.adapters.base import AdapterConfig, BidderError, RequestData, RequestInfo, bad_input
from hbserver.adapters.common import JsonShapeError, expect_string, imp_ids, json_call
from hbserver.adapters.golike import go_field, go_imp, go_members, go_request_top, imp_bidder_params
from hbserver.adapters.recipe import Recipe, RecipeAdapter

HEADERS = {"Content-Type": "application/json"}


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


class Nexx360Adapter(RecipeAdapter):
    """The recipe ``recipes/nexx360.yaml`` (the answer and bid typing), the call Nexx360's own."""

    def __init__(self, recipe: Recipe, config: AdapterConfig) -> None:
        super().__init__(recipe, config)
        # PBS-Go parses the endpoint per request; one it cannot use is refused at start-up here
        self.parts = urlsplit(config.endpoint)
        self.ext = caller_ext(str(config.extra.get("pbs_version") or ""))

    def _uri(self, placement: str, tag_id: str) -> str:
        pairs = [("placement", placement)] if placement else []
        if tag_id:
            pairs.append(("tag_id", tag_id))
        return urlunsplit(self.parts._replace(query=urlencode(pairs)))

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
        return [json_call(self._uri(placement, tag_id), body, imp_ids(imps), HEADERS)], []


def build(config: AdapterConfig) -> Nexx360Adapter:
    return Nexx360Adapter.of_code("nexx360", config)
