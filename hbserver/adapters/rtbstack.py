"""RTBStack adapter: imps grouped by their ``route`` param, one OpenRTB call per route.

The route is a URL on ``<region>-adx-admixer`` (region ``us``, ``eu`` or ``sg``) whose query names
the ``client``, ``endpoint`` and ``ssp``; they fill the configured endpoint's ``Region``,
``PartnerId``, ``ZoneID`` and ``SspID`` macros. A route without them is refused with its imps. Each
imp takes the ``tagId`` param as its ``tagid`` and only ``{"customParams": ...}`` as its ext. A site
without a ``domain`` gets its page's host name (the page itself when it has none). The answer and
bid typing are the recipe ``recipes/rtbstack.yaml``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import JSON_HEADERS, AdapterConfig, BidderError, RequestData, RequestInfo, bad_input
from hbserver.adapters.common import (
    JsonShapeError,
    expect_object,
    imp_ids,
    json_call,
    resolve_macros,
)
from hbserver.adapters.golike import (
    GoKind,
    ImpExtError,
    go_media_objects,
    go_members,
    go_request_top,
    go_value,
    imp_bidder_params,
    set_omitempty,
)
from hbserver.adapters.gourl import go_hostname, go_query_unescape, go_url_scheme_host
from hbserver.adapters.recipe import RecipeAdapter

_REGIONS = frozenset({"us", "eu", "sg"})
_REGION_SUFFIX = "-adx-admixer"
_ROUTE_PARAMS = {"PartnerId": "client", "ZoneID": "endpoint", "SspID": "ssp"}


def go_query_get(url: str, name: str) -> str:
    """Go's ``URL.Query().Get(name)``: the first value of ``name`` in the query (pairs with a
    ``;`` or a bad escape skipped), "" when there is none."""
    query = url.partition("#")[0].partition("?")[2]
    for pair in query.split("&"):
        if ";" in pair:
            continue
        key, _, value = pair.partition("=")
        decoded = go_query_unescape(value)
        if go_query_unescape(key) == name and decoded is not None:
            return decoded
    return ""


def read_imp(imp: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """(the imp as sent, its route); bad input when its ext or params do not decode."""
    try:
        params = imp_bidder_params(imp)
    except ImpExtError as exc:
        raise _Refused(bad_input(str(exc))) from None
    except JsonShapeError:
        raise _Refused(bad_input("Wrong RTBStack bidder ext")) from None
    fields: dict[str, Any] = {}
    try:
        for name, value in go_members(params, "route", "tagId", "customParams"):
            kind = GoKind.RAW if name == "customParams" else GoKind.STRING
            fields[name] = go_value(value, kind, f"openrtb_ext.ExtImpRTBStack.{name}")
            if name == "customParams":
                expect_object(value, "")
    except JsonShapeError:
        raise _Refused(bad_input("Wrong RTBStack bidder ext")) from None
    out = go_media_objects(dict(imp))
    set_omitempty(out, "tagid", fields.get("tagId"))
    custom = fields.get("customParams")
    out["ext"] = {"customParams": custom} if custom else {}
    return out, fields.get("route") or ""


class _Refused(Exception):
    def __init__(self, error: BidderError) -> None:
        super().__init__(error.message)
        self.error = error


def route_endpoint(template: str, route: str) -> str:
    """The configured endpoint filled from ``route``; bad input when the route names no region or
    lacks one of its query parameters."""
    parsed = go_url_scheme_host(route)
    if parsed is None:
        raise _Refused(bad_input(f'invalid route URL: parse "{route}": invalid URL'))
    region = ""
    for part in go_hostname(parsed[1]).split("."):
        if part.endswith(_REGION_SUFFIX) and part[: -len(_REGION_SUFFIX)].lower() in _REGIONS:
            region = part[: -len(_REGION_SUFFIX)].lower()
            break
    if not region:
        raise _Refused(bad_input("unable to extract valid region from route URL hostname"))
    values = {macro: go_query_get(route, name) for macro, name in _ROUTE_PARAMS.items()}
    if not all(values.values()):
        raise _Refused(bad_input("route URL must contain client, endpoint, and ssp query parameters"))
    return resolve_macros(template, {"Region": region, **values})


def with_site_domain(request: Mapping[str, Any], body: dict[str, Any]) -> None:
    """A site without a domain takes its page's host name, else the page itself."""
    site = request.get("site")
    if not isinstance(site, dict) or site.get("domain"):
        return
    page = site.get("page") if isinstance(site.get("page"), str) else ""
    parsed = go_url_scheme_host(page)
    host = go_hostname(parsed[1]) if parsed is not None else ""
    site = dict(site)
    set_omitempty(site, "domain", host or page)
    body["site"] = site


class RtbstackAdapter(RecipeAdapter):
    """The recipe ``recipes/rtbstack.yaml`` (the answer and bid typing), the calls built by route."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        if not request.get("imp"):
            return [], [bad_input("No impressions in request")]
        errors: list[BidderError] = []
        routes: dict[str, list[dict[str, Any]]] = {}
        for imp in request["imp"]:
            try:
                sent, route = read_imp(imp)
            except _Refused as exc:
                errors.append(exc.error)
                continue
            routes.setdefault(route, []).append(sent)
        top = go_request_top(request)
        with_site_domain(request, top)
        calls = []
        for route, imps in routes.items():
            try:
                uri = route_endpoint(self.endpoint, route)
            except _Refused as exc:
                errors.append(exc.error)
                continue
            calls.append(json_call(uri, {**top, "imp": imps}, imp_ids(imps), JSON_HEADERS))
        return calls, errors


def build(config: AdapterConfig) -> RtbstackAdapter:
    return RtbstackAdapter.of_code("rtbstack", config)
