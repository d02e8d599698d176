"""Alkimi adapter: the whole request in one call to the configured endpoint (which the builder
requires), sent as Go writes its typed model; the answer is the recipe ``recipes/alkimi.yaml``'s.

Each imp's ext is read as a map: its ``bidder`` member (exact name) is decoded as
``openrtb_ext.ExtImpAlkimi`` and written back as that whole struct with ``adUnitCode`` the imp's id,
the ext's other members kept. The imp's floor is the ``bidFloor`` param unless it has a positive
floor with a currency; its ``instl`` and ``exp`` are the params'. Any imp that does not decode
stops the request, every such imp's error reported.
"""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, RequestData, RequestInfo
from hbserver.adapters.common import JsonShapeError, json_call
from hbserver.adapters.golike import go_typed_request
from hbserver.adapters.recipe import RecipeAdapter
from hbserver.adapters.steps import ParamsSpec

PARAMS = ParamsSpec.of(
    {
        "struct": "openrtb_ext.ExtImpAlkimi",
        "fields": {
            "token": ["Token", "string"],
            "bidFloor": ["BidFloor", "float64"],
            "instl": ["Instl", "int"],
            "exp": ["Exp", "int"],
            "adUnitCode": ["AdUnitCode", "string"],
        },
    }
)


def alkimi_imp(imp: dict[str, Any]) -> dict[str, Any]:
    """The imp as Alkimi gets it; JsonShapeError (json-iterator's words) when its ext or params do
    not decode."""
    ext = imp.get("ext")
    if not isinstance(ext, dict):
        raise JsonShapeError(f"ReadMapCB: expect {{ or n, but found {'n' if ext is None else '?'}")
    params = PARAMS.read({"ext": {"bidder": ext["bidder"]} if "bidder" in ext else {}})
    out = {key: value for key, value in imp.items() if key not in ("instl", "exp")}
    floor, currency = imp.get("bidfloor"), imp.get("bidfloorcur")
    if not (currency and isinstance(floor, int | float) and floor > 0):
        out["bidfloor"] = params["bidFloor"]
    for name in ("instl", "exp"):
        if params[name]:
            out[name] = params[name]
    out["ext"] = {**ext, "bidder": {**params, "adUnitCode": imp.get("id", "")}}
    return out


class AlkimiAdapter(RecipeAdapter):
    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps, errors = [], []
        for imp in request.get("imp") or ():
            try:
                imps.append(alkimi_imp(imp))
            except JsonShapeError as exc:
                errors.append(BidderError(str(exc)))
        if errors:
            return [], errors
        body = go_typed_request({**request, "imp": imps})
        return [json_call(self.endpoint, body, [imp.get("id", "") for imp in imps])], []


def build(config: AdapterConfig) -> AlkimiAdapter:
    return AlkimiAdapter.of_code("alkimi", config)
