"""Conversant (Epsilon) adapter: the whole request in one OpenRTB call.

Every imp needs ``site_id``; the first imp's becomes ``site.id`` (or ``app.id``). Per imp:
``displaymanager`` is ``prebid-s2s`` (and ``displaymanagerver`` the PBS version), ``bidfloor``
applies when the imp has no positive floor, ``tag_id`` becomes ``tagid``, ``secure`` applies when
the imp's is absent or 0, and ``position`` becomes the banner's ``pos`` (or else the video's; no
param clears it). A video also takes ``api``, ``protocols``, ``mimes`` and ``maxduration`` from
the params. A floor in another currency is converted to USD, and a request currency other than USD
becomes ``["USD"]`` (the bidder rejects others). Any imp that fails drops the whole request, as in
PBS-Go. The answer (the first seatbid's bids, typed by their imp) is the recipe
``recipes/conversant.yaml``'s.

Host settings in ``AdapterConfig.extra``: ``pbs_version`` (sent as ``imp.displaymanagerver``).
"""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    ConversionError,
    RequestData,
    RequestInfo,
    bad_input,
)
from hbserver.adapters.common import (
    JsonShapeError,
    json_call,
    json_headers,
)
from hbserver.adapters.golike import (
    ImpExtError,
    go_media_objects,
    go_request_top,
    go_video,
    imp_bidder_params,
)
from hbserver.adapters.recipe import Recipe, RecipeAdapter

DISPLAY_MANAGER = "prebid-s2s"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _checked_params(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` when each known field has the type Go's ExtImpConversant gives it."""
    for name, check in _PARAM_TYPES.items():
        value = params.get(name)
        if value is not None and not check(value):
            raise JsonShapeError(f"cannot unmarshal openrtb_ext.ExtImpConversant.{name}")
    return params


_PARAM_TYPES = {
    "site_id": lambda v: isinstance(v, str),
    "tag_id": lambda v: isinstance(v, str),
    "secure": _is_int,
    "position": _is_int,
    "maxduration": _is_int,
    "bidfloor": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "mimes": lambda v: isinstance(v, list) and all(isinstance(item, str) for item in v),
    "api": lambda v: isinstance(v, list) and all(_is_int(item) for item in v),
    "protocols": lambda v: isinstance(v, list) and all(_is_int(item) for item in v),
}


def _params(imp: dict[str, Any], index: int) -> dict[str, Any]:
    """The imp's params; ValueError in PBS-Go's words when they do not decode or lack ``site_id``."""
    try:
        params = _checked_params(imp_bidder_params(imp))
    except ImpExtError:
        raise ValueError(f"Impression[{index}] missing ext object") from None
    except JsonShapeError:
        raise ValueError(f"Impression[{index}] missing ext.bidder object") from None
    if not params.get("site_id"):
        raise ValueError(f"Impression[{index}] requires ext.bidder.site_id")
    return params


def _float(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _build_imp(imp: dict[str, Any], params: dict[str, Any], info: RequestInfo, pbs_version: str) -> dict[str, Any]:
    out = dict(imp)
    out["displaymanager"] = DISPLAY_MANAGER
    if pbs_version:
        out["displaymanagerver"] = pbs_version
    param_floor = _float(params.get("bidfloor"))
    if _float(imp.get("bidfloor")) <= 0 and param_floor > 0:
        out["bidfloor"] = param_floor
    if params.get("tag_id"):
        out["tagid"] = params["tag_id"]
    if not imp.get("secure") and params.get("secure") is not None:
        out["secure"] = params["secure"]
    position = params.get("position")
    if isinstance(imp.get("banner"), dict):
        banner = {key: value for key, value in imp["banner"].items() if key != "pos"}
        if position is not None:
            banner["pos"] = position
        out["banner"] = banner
    elif isinstance(imp.get("video"), dict):
        video = {key: value for key, value in imp["video"].items() if key != "pos"}
        if position is not None:
            video["pos"] = position
        for name in ("api", "protocols", "mimes"):
            if params.get(name):
                video[name] = list(params[name])
        if params.get("maxduration") is not None:
            video["maxduration"] = params["maxduration"]
        out["video"] = go_video(video)
    floor, currency = _float(out.get("bidfloor")), out.get("bidfloorcur")
    if floor > 0 and isinstance(currency, str) and currency and currency.upper() != "USD":
        try:
            out["bidfloor"] = info.convert_currency(floor, currency, "USD")
        except ConversionError:
            raise ValueError(f"Unable to convert provided bid floor currency from {currency} to USD") from None
        out["bidfloorcur"] = "USD"
    return go_media_objects(out)


class ConversantAdapter(RecipeAdapter):
    """The recipe ``recipes/conversant.yaml`` (the answer), the call Conversant's own."""

    def __init__(self, recipe: Recipe, config: AdapterConfig) -> None:
        super().__init__(recipe, config)
        self.pbs_version: str = config.extra.get("pbs_version", "") or ""
        self.headers = json_headers()

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        body = go_request_top(request)
        currencies = request.get("cur")
        if isinstance(currencies, list) and currencies and currencies[0] != "USD":
            body["cur"] = ["USD"]
        imps = []
        for index, imp in enumerate(request.get("imp") or ()):
            try:
                params = _params(imp, index)
                if index == 0:
                    for owner in ("site", "app"):
                        if isinstance(request.get(owner), dict):
                            body[owner] = {**request[owner], "id": params["site_id"]}
                            break
                imps.append(_build_imp(imp, params, info, self.pbs_version))
            except ValueError as exc:
                return [], [bad_input(str(exc))]
        body["imp"] = imps
        return [json_call(self.endpoint, body, (imp.get("id", "") for imp in imps), self.headers)], []


def build(config: AdapterConfig) -> ConversantAdapter:
    return ConversantAdapter.of_code("conversant", config)
