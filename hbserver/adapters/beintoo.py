"""Beintoo adapter: every imp, reshaped, in one OpenRTB call to the configured endpoint.

Per imp: the ``tagid`` param (a string of a non-zero int64) becomes ``tagid``, ``secure`` is 1 when
``site.page`` is an https URL and 0 otherwise, a positive ``bidfloor`` param (a number's text)
replaces the floor, ``ext`` is dropped, and a banner (required) without ``w``/``h`` takes its first
format's size, that format leaving the list. The first imp that fails any of this fails the whole
request: its error, then "Error in preprocess of Imp, err: [<that error>]". The headers, the
params' wording and the answer are the recipe ``recipes/beintoo.yaml``'s.
"""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, RequestData, RequestInfo, bad_input
from hbserver.adapters.common import banner_taking_first_format, page_is_https
from hbserver.adapters.golike import go_parse_float
from hbserver.adapters.recipe import DroppedImp, Prepared, RecipeAdapter, typed_imp
from hbserver.numbers import int_or


def _bad(message: str) -> DroppedImp:
    return DroppedImp(bad_input(message))


class BeintooAdapter(RecipeAdapter):
    """The recipe ``recipes/beintoo.yaml`` (params, headers, the answer), the call Beintoo's own."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        if not imps:
            return [], [bad_input("No Imps in Bid Request")]
        secure = 1 if page_is_https(request) else 0
        prepared = []
        for index, imp in enumerate(imps):
            try:
                prepared.append(Prepared(self.beintoo_imp(imp, index, secure), self.endpoint, {}))
            except DroppedImp as exc:
                return [], [exc.error, bad_input(f"Error in preprocess of Imp, err: [{exc.error.message}]")]
        return [self.call(request, prepared)], []

    def beintoo_imp(self, imp: dict[str, Any], index: int, secure: int) -> dict[str, Any]:
        """The imp as Beintoo gets it; DroppedImp in PBS-Go's words."""
        params = self.read_params(imp, index)
        if int_or(params["tagid"], 0) == 0:
            raise _bad(f"ignoring imp id={imp.get('id', '')}, invalid tagid must be a String of numbers")
        out = {key: value for key, value in imp.items() if key != "ext"}
        out["tagid"], out["secure"] = params["tagid"], secure
        floor = go_parse_float(params["bidfloor"]) if params["bidfloor"] else None
        if floor is not None and floor > 0:
            out["bidfloor"] = floor
        banner = out.get("banner")
        if not isinstance(banner, dict):
            raise _bad("Request needs to include a Banner object")
        sized = banner_taking_first_format(banner)
        if sized is None:
            raise _bad("Need at least one size to build request")
        out["banner"] = sized
        return typed_imp(out)


def build(config: AdapterConfig) -> BeintooAdapter:
    return BeintooAdapter.of_code("beintoo", config)
