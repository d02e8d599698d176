"""Adform (adf) adapter: every imp in one OpenRTB call to ``adx.adform.net/adx/openrtb``.

Per imp the master tag id ``mid`` (a number or a string of digits) becomes ``tagid``; an imp
without one goes without ``tagid`` (Adform then finds the placement from ``inv`` and ``mname``,
which stay in ``imp.ext.bidder``). An imp whose ``ext`` cannot be read is dropped with an error, but
the call is made even when none is left. When an imp asks for a ``priceType`` (``gross``/``net``),
the first one asked for is sent as ``ext.pt``; ``request.ext`` then keeps only ``prebid`` (always
written, ``{}`` when absent) and ``schain``, as PBS-Go's typed re-encoding does. The answer and bid
typing (``ext.prebid.type``) are the recipe ``recipes/adf.yaml``'s.
"""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    RequestData,
    RequestInfo,
    bad_input,
)
from hbserver.adapters.common import (
    JsonShapeError,
    expect_object,
    expect_string,
    json_call,
)
from hbserver.adapters.golike import (
    go_media_objects,
    imp_bidder_params,
    json_number_text,
    set_omitempty,
)
from hbserver.adapters.recipe import RecipeAdapter

# The json names of PBS-Go's ExtRequestPrebid, all omitempty: what survives its re-encoding. Its
# maps, slices, bools and strings are left out when empty; its objects only when null.
PREBID_OMITTED_WHEN_EMPTY = frozenset(
    "aliases aliasgvlids analytics bidadjustmentfactors macros biddercontrols adservertargeting "
    "bidderconfig multibid schains nosale debug supportdeals returnallbidstatus integration trace".split()
)
PREBID_FIELDS = PREBID_OMITTED_WHEN_EMPTY | frozenset(
    "bidadjustments bidderparams cache channel currency data events experiment floors passthrough sdk "
    "server storedrequest targeting alternatebiddercodes".split()
)


def _read_params(params: dict[str, Any]) -> tuple[str, str]:
    """(master tag id, price type) of one imp; the other fields are only type-checked, as Go does."""
    mid = json_number_text(params.get("mid"), "cannot unmarshal openrtb_ext.ExtImpAdf.MasterTagID: invalid number")
    inv = params.get("inv")
    if inv is not None and (isinstance(inv, bool) or not isinstance(inv, int)):
        raise JsonShapeError("cannot unmarshal openrtb_ext.ExtImpAdf.InventorySourceID: unexpected character")
    expect_string(params.get("mname"), "openrtb_ext.ExtImpAdf.PlacementName")
    price_type = expect_string(params.get("priceType"), "openrtb_ext.ExtImpAdf.PriceType")
    return mid, price_type


def _with_price_type(ext: Any, price_type: str) -> dict[str, Any]:
    """``request.ext`` re-encoded as PBS-Go's ``adfRequestExt`` with ``pt`` set."""
    ext = expect_object(ext, "")
    prebid = expect_object(ext.get("prebid"), "adf.adfRequestExt.Prebid")
    out: dict[str, Any] = {
        "prebid": {
            key: value
            for key, value in prebid.items()
            if key in PREBID_FIELDS and value is not None and (value or key not in PREBID_OMITTED_WHEN_EMPTY)
        },
    }
    schain = ext.get("schain")
    if schain is not None:
        out["schain"] = expect_object(schain, "adf.adfRequestExt.SChain")
    out["pt"] = price_type
    return out


class AdfAdapter(RecipeAdapter):
    """The recipe ``recipes/adf.yaml`` (the answer and bid typing), the call Adform's own."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        errors: list[BidderError] = []
        imps: list[dict[str, Any]] = []
        price_type = ""
        for imp in request.get("imp") or ():
            try:
                mid, imp_price_type = _read_params(imp_bidder_params(imp))
            except JsonShapeError as exc:
                errors.append(bad_input(str(exc)))
                continue
            out = dict(go_media_objects(imp))
            set_omitempty(out, "tagid", mid)
            imps.append(out)
            if not price_type:
                price_type = imp_price_type
        body = {**request, "imp": imps}
        if price_type:
            try:
                body["ext"] = _with_price_type(request.get("ext"), price_type)
            except JsonShapeError as exc:
                errors.append(BidderError(str(exc)))
        return [json_call(self.endpoint, body, (imp.get("id", "") for imp in imps))], errors


def build(config: AdapterConfig) -> AdfAdapter:
    return AdfAdapter.of_code("adf", config)
