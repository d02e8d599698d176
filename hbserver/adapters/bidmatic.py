"""Bidmatic adapter: one OpenRTB call per ``source`` to ``<endpoint>?source=<source>``, each with
the imps of that source (the recipe ``recipes/bidmatic.yaml`` reads the params and the answer).

Per imp ``ext`` becomes ``{"bidmatic": {source, placementId, siteId, bidFloor}}`` (the zero ones
left out, ``source`` as the number it is) and a positive ``bidFloor`` replaces ``bidfloor``. A
``source`` that is no JSON number fails as Go's encoder words it, one that is no int64 as
``strconv.ParseInt`` does (a plain error); such imps are left out with their error. Each bid's
``mtype`` is set to the type its imp gives it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse, RequestData, RequestInfo
from hbserver.adapters.common import JsonShapeError
from hbserver.adapters.golike import GoAnswer, go_quote, is_json_number, json_number_int64
from hbserver.adapters.recipe import DroppedImp, Prepared, RecipeAdapter, typed_imp

_TYPE_TO_MTYPE = {"banner": 1, "video": 2, "audio": 3, "native": 4}
_OMITEMPTY = ("placementId", "siteId", "bidFloor")


def bidmatic_source(imp_id: Any, text: str) -> int:
    """The source id of a ``source`` param's text; DroppedImp in PBS-Go's words."""
    if text and not is_json_number(text):  # Go writes an empty json.Number as 0 (Int64 then fails)
        message = f"json: invalid number literal {go_quote(text)}"
        raise DroppedImp(BidderError(f"ignoring imp id={imp_id}, error while marshaling impExt, err: {message}"))
    try:
        return json_number_int64(text)
    except JsonShapeError as exc:
        raise DroppedImp(BidderError(str(exc))) from None


class BidmaticAdapter(RecipeAdapter):
    """The recipe, the calls grouped by source and the bids' mtype Bidmatic's own."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        errors: list[BidderError] = []
        groups: dict[int, list[Prepared]] = {}
        for index, imp in enumerate(request.get("imp") or ()):
            try:
                params = self.read_params(imp, index)
                source = bidmatic_source(imp.get("id", ""), params["source"])
            except DroppedImp as exc:
                errors.append(exc.error)
                continue
            ext = {"source": source, **{name: params[name] for name in _OMITEMPTY if params[name]}}
            out = {**imp, "ext": {"bidmatic": ext}}
            if params["bidFloor"] > 0:
                out["bidfloor"] = params["bidFloor"]
            uri = f"{self.endpoint}?source={source}"
            groups.setdefault(source, []).append(Prepared(typed_imp(out), uri, params))
        return [self.call(request, group) for group in groups.values()], errors

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        result, errors = super().typed_bids(request, answer)
        for typed in result.bids if result is not None else ():
            typed.bid = {**typed.bid, "mtype": _TYPE_TO_MTYPE[typed.bid_type]}
        return result, errors


def build(config: AdapterConfig) -> BidmaticAdapter:
    return BidmaticAdapter.of_code("bidmatic", config)
