"""Sparteo adapter: the whole request in one call, every imp sent; an imp whose params decode has its
``ext.bidder`` moved into ``ext.sparteo.params`` (an imp whose params do not: sent as it is, with its
error). The first ``networkId`` set goes into the publisher's ``ext.params.networkId`` (the site's,
else the app's, else a new site's) and the query: ``network_id``, then ``site_domain`` (the site's
domain, else its page's host, else ``unknown`` with an error) or ``app_domain`` and ``bundle`` (an
app's; ``unknown`` when missing, a missing bundle an error). Bids typed by ``ext.prebid.type``
(banner, video, native; others let go silently), their mtype set to match. The params' and the
answer's wording are the recipe ``recipes/sparteo.yaml``'s."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote_plus, urlsplit, urlunsplit

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    TypedBid,
    bad_input,
)
from hbserver.adapters.common import JsonShapeError, json_call
from hbserver.adapters.golike import GoAnswer, go_typed_request
from hbserver.adapters.gourl import go_hostname, go_url_scheme_host
from hbserver.adapters.recipe import DroppedImp, RecipeAdapter
from hbserver.adapters.steps import ext_prebid_type

UNKNOWN = "unknown"
MTYPES = {"banner": 1, "video": 2, "native": 4}


def normalize_hostname(host: str) -> str:
    """A host name from a domain or URL: lower case, without a port, path, final dot or ``www.``."""
    host = host.strip()
    if not host:
        return ""
    parsed = go_url_scheme_host(host)
    hostname = go_hostname(parsed[1]) if parsed else ""
    if hostname:
        host = hostname
    elif ":" in host:
        host = host.partition(":")[0]
    else:
        host = host.partition("/")[0]
    host = host.lower().removesuffix(".").removeprefix("www.")
    return "" if host == "null" else host


def _text(holder: Mapping[str, Any], key: str) -> str:
    value = holder.get(key)
    return value if isinstance(value, str) else ""


def query_and_errors(request: Mapping[str, Any], network_id: str) -> tuple[str, list[BidderError]]:
    """The endpoint's query and the errors of a missing site domain or app bundle."""
    query, errors = "network_id=" + quote_plus(network_id), []
    site, app = request.get("site"), request.get("app")
    if isinstance(site, Mapping):
        domain = normalize_hostname(_text(site, "domain")) or normalize_hostname(_text(site, "page")) or UNKNOWN
        if domain == UNKNOWN:
            errors.append(bad_input("Domain not found. Missing the site.domain or the site.page field"))
        query += "&site_domain=" + quote_plus(domain)
    elif isinstance(app, Mapping):
        domain = normalize_hostname(_text(app, "domain")) or UNKNOWN
        bundle = _text(app, "bundle").strip()
        if not bundle or bundle.lower() == "null":
            bundle = UNKNOWN
            errors.append(bad_input("Bundle not found. Missing the app.bundle field."))
        query += "&app_domain=" + quote_plus(domain) + "&bundle=" + quote_plus(bundle)
    return query, errors


def sparteo_ext(ext: Mapping[str, Any]) -> dict[str, Any]:
    """The imp's ext with its ``bidder`` moved into ``sparteo.params``."""
    out = dict(ext)
    sparteo = dict(out["sparteo"]) if isinstance(out.get("sparteo"), dict) else {}
    params = dict(sparteo["params"]) if isinstance(sparteo.get("params"), dict) else {}
    bidder = out.pop("bidder", None)
    if isinstance(bidder, dict):
        params.update(bidder)
    out["sparteo"] = {**sparteo, "params": params}
    return out


def with_network_id(request: Mapping[str, Any], network_id: str) -> dict[str, Any]:
    """The request with ``ext.params.networkId`` on the site's (else the app's, else a new site's)
    publisher."""
    holder = "site" if request.get("site") is not None or request.get("app") is None else "app"
    place = dict(request.get(holder) or {})
    publisher = dict(place.get("publisher") or {})
    ext = dict(publisher["ext"]) if isinstance(publisher.get("ext"), dict) else {}
    params = dict(ext["params"]) if isinstance(ext.get("params"), dict) else {}
    ext["params"] = {**params, "networkId": network_id}
    place["publisher"] = {**publisher, "ext": ext}
    return {**request, holder: place}


class SparteoAdapter(RecipeAdapter):
    """The recipe's params wording; the call and the bids Sparteo's own."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps, network_id, imp_errors = [], "", []
        for index, imp in enumerate(request.get("imp") or ()):
            try:
                params = self.read_params(imp, index)
            except DroppedImp as dropped:
                imp_errors.append(dropped.error)
                imps.append(imp)
                continue
            network_id = network_id or params["networkId"] or ""
            imps.append({**imp, "ext": sparteo_ext(imp["ext"])})
        query, errors = query_and_errors(request, network_id)  # its errors come first
        body = go_typed_request({**with_network_id(request, network_id), "imp": imps})
        scheme, netloc, path, _, fragment = urlsplit(self.endpoint)
        uri = urlunsplit((scheme, netloc, path, query, fragment))
        return [json_call(uri, body, [imp.get("id", "") for imp in imps], self.headers(request))], errors + imp_errors

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        result = BidderResponse(currency=answer.cur or "USD")
        for bid in answer.bids:
            try:
                kind = ext_prebid_type(bid) or ""
            except JsonShapeError:
                continue
            if kind in MTYPES:
                result.bids.append(TypedBid({**bid, "mtype": MTYPES[kind]}, kind))
        return result, []


def build(config: AdapterConfig) -> SparteoAdapter:
    return SparteoAdapter.of_code("sparteo", config)
