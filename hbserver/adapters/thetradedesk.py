"""The Trade Desk adapter: the whole request in one OpenRTB call to
``direct.adsrvr.org/bid/bidder/{{.SupplyId}}``.

The first non-empty ``supplySourceId`` param of the imps fills ``{{.SupplyId}}``; without one the
host's ``extra_info`` (a name that must end in a lower-case letter) does. The first non-empty
``publisherId`` becomes ``site.publisher.id`` (else ``app.publisher.id``); an empty one keeps the
publisher there, or adds an empty one. The imps are read until both params are found: the first
of them whose ext or params do not decode fails the whole request in json-iterator's words. A
banner with formats is sent with its first format's ``w``/``h``; ``imp.ext`` goes unchanged.

The answer is the recipe ``recipes/thetradedesk.yaml``'s: bids typed by ``mtype`` (a bid without
one fails the whole answer), ``${AUCTION_PRICE}`` replaced by the price, a 204 an empty response.

Host settings in ``AdapterConfig.extra``: ``extra_info`` (the default supply id). The builder
refuses (ValueError, PBS-Go's text) an ``extra_info`` or an endpoint template PBS-Go's would refuse.
"""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import (
    JSON_HEADERS,
    AdapterConfig,
    BidderError,
    RequestData,
    RequestInfo,
)
from hbserver.adapters.common import JsonShapeError, expect_string, json_call
from hbserver.adapters.golike import (
    go_imp,
    go_members,
    go_request_top,
    imp_bidder_params,
)
from hbserver.adapters.recipe import Recipe, RecipeAdapter

_TEMPLATE_NAME = "endpointTemplate"
# The fields of PBS-Go's macros.EndpointTemplateParams: any other {{.Field}} fails to execute
_TEMPLATE_FIELDS = frozenset({
    "Host", "PublisherID", "ZoneID", "SourceId", "AccountID", "AdUnit", "MediaType", "GvlID", "PageID",
    "SupplyId", "ImpID", "SspId", "SspID", "SeatID", "TokenID", "PartnerId", "Region", "PlacementID",
    "NetworkId", "SiteDomain", "AppDomain", "Bundle",
})  # fmt: skip
# Names text/template knows (built-in functions, keywords, constants): not "function not defined"
_TEMPLATE_WORDS = frozenset({
    "and", "call", "html", "index", "slice", "js", "len", "not", "or", "print", "printf", "println", "urlquery",
    "eq", "ge", "gt", "le", "lt", "ne", "block", "break", "continue", "define", "else", "end", "if", "range",
    "template", "with", "nil", "true", "false",
})  # fmt: skip


def _template_parts(endpoint: str) -> list[tuple[str, str | None]]:
    """The endpoint as (text, field) pieces: literal text, then the ``{{.Field}}`` after it (None at
    the end). Raises ValueError in PBS-Go's words for a template its builder refuses: one that does
    not parse before one naming a field PBS-Go does not have. Other actions (pipelines, keywords,
    trim markers) are refused in our own words: no PBS endpoint uses them."""
    parts: list[tuple[str, str | None]] = []
    unknown: str | None = None
    rest, offset = endpoint, 0
    while (start := rest.find("{{")) != -1:
        end = rest.find("}}", start + 2)
        if end == -1:
            raise ValueError(f"unable to parse endpoint url template: template: {_TEMPLATE_NAME}:1: unclosed action")
        action = rest[start + 2 : end].strip()
        name = action[1:]
        if action[:1] == "." and name.isidentifier():
            if name not in _TEMPLATE_FIELDS and unknown is None:
                # Go's error names the byte offset of the field within the (one-line) template
                column = len(endpoint[: offset + start + rest[start:end].index(".")].encode())
                unknown = (
                    f"unable to resolve endpoint macros: template: {_TEMPLATE_NAME}:1:{column}: executing "
                    f'"{_TEMPLATE_NAME}" at <.{name}>: can\'t evaluate field {name} in type '
                    "macros.EndpointTemplateParams"
                )
            parts.append((rest[:start], name))
        elif action.isidentifier() and action not in _TEMPLATE_WORDS:
            raise ValueError(
                f'unable to parse endpoint url template: template: {_TEMPLATE_NAME}:1: function "{action}" not defined'
            )
        else:
            raise ValueError(f"unable to parse endpoint url template: unsupported action {{{{{action}}}}}")
        rest, offset = rest[end + 2 :], offset + end + 2
    if unknown is not None:
        raise ValueError(unknown)
    parts.append((rest, None))
    return parts


def _endpoint_params(imps: list[dict[str, Any]]) -> tuple[str, str]:
    """(publisherId, supplySourceId): the first non-empty of each, the imps read until both are
    found. Raises JsonShapeError when an imp read does not decode."""
    publisher = supply = ""
    for imp in imps:
        params = imp_bidder_params(imp)
        values = {"publisherId": "", "supplySourceId": ""}
        for name, value in go_members(params, "publisherId", "supplySourceId"):
            where = "PublisherId" if name == "publisherId" else "SupplySourceId"
            values[name] = expect_string(value, f"openrtb_ext.ExtImpTheTradeDesk.{where}")
        publisher = publisher or values["publisherId"]
        supply = supply or values["supplySourceId"]
        if publisher and supply:
            break
    return publisher, supply


def _typed_imp(imp: dict[str, Any]) -> dict[str, Any]:
    """The imp as PBS-Go writes it: a banner with formats takes the first one's size."""
    out = go_imp(imp)
    banner = out.get("banner")
    if isinstance(banner, dict):
        formats = banner.get("format")
        if isinstance(formats, list) and formats:
            first = formats[0] if isinstance(formats[0], dict) else {}
            out["banner"] = {**banner, "w": first.get("w") or 0, "h": first.get("h") or 0}
    return out


def _with_publisher(owner: dict[str, Any], publisher_id: str) -> dict[str, Any]:
    """``site`` or ``app`` with ``publisher.id`` set to ``publisher_id`` when non-empty; without a
    publisher it gets one (empty when ``publisher_id`` is)."""
    publisher = owner.get("publisher")
    if isinstance(publisher, dict):
        if not publisher_id:
            return owner
        return {**owner, "publisher": {**publisher, "id": publisher_id}}
    return {**owner, "publisher": {"id": publisher_id} if publisher_id else {}}


class TheTradeDeskAdapter(RecipeAdapter):
    """The recipe ``recipes/thetradedesk.yaml`` (the answer), the endpoint and the call The Trade Desk's own."""

    def __init__(self, recipe: Recipe, config: AdapterConfig) -> None:
        super().__init__(recipe, config)
        supply_id = str(config.extra.get("extra_info") or "")
        if supply_id and not ("a" <= supply_id[-1] <= "z"):
            raise ValueError("ExtraAdapterInfo must be a simple string provided by TheTradeDesk")
        self.parts = _template_parts(config.endpoint)
        self.default_endpoint = self._resolve(supply_id)

    def _resolve(self, supply_id: str) -> str:
        """The endpoint with every macro but ``SupplyId`` empty (text/template does not escape)."""
        return "".join(text + (supply_id if field == "SupplyId" else "") for text, field in self.parts)

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        try:
            publisher, supply = _endpoint_params(imps)
        except JsonShapeError as exc:
            return [], [BidderError(str(exc))]
        body = go_request_top(request)
        body["imp"] = [_typed_imp(imp) for imp in imps]
        for owner in ("site", "app"):
            if isinstance(request.get(owner), dict):
                body[owner] = _with_publisher(request[owner], publisher)
                break
        uri = self._resolve(supply) if supply else self.default_endpoint
        if not uri:
            return [], [BidderError("Either supplySourceId or a default endpoint must be provided")]
        return [json_call(uri, body, (imp.get("id", "") for imp in imps), JSON_HEADERS)], []


def build(config: AdapterConfig) -> TheTradeDeskAdapter:
    return TheTradeDeskAdapter.of_code("thetradedesk", config)
