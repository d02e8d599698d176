"""Smart AdServer (Equativ) adapter: all imps in one OpenRTB call to ``<endpoint>/api/bid?callerId=5``,
or to ``https://prebid-global.smartadserver.com/ortb`` when any imp is programmatic guaranteed.

Per imp, the params (``siteId``, ``pageId``, ``formatId``, ``networkId`` as integers) replace
``ext.bidder``: under ``ext.bidder`` normally, under ``ext.smartadserver`` for every imp once one
imp has ``programmaticGuaranteed: true``; the flag itself is not sent. An imp without a params
object is dropped with an error. The request always gets a ``site`` (even an app request) whose
``publisher.id`` is the last valid imp's ``networkId``. The answer and bid typing are the recipe
``recipes/smartadserver.yaml``'s.
"""

from __future__ import annotations

import posixpath
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import orjson

from hbserver.adapters.base import JSON_HEADERS, AdapterConfig, BidderError, RequestData, RequestInfo, bad_input
from hbserver.adapters.common import JsonShapeError, imp_ids
from hbserver.adapters.golike import GoKind, ImpExtError, go_fields, go_int, go_value, imp_bidder_params
from hbserver.adapters.recipe import Recipe, RecipeAdapter

PROGRAMMATIC_GUARANTEED_HOST = "https://prebid-global.smartadserver.com"
_IDS = ("siteId", "pageId", "formatId", "networkId")


class _BadImp(ValueError):
    """An imp this adapter cannot send (the message is the bidder error's)."""


def _params(imp: dict[str, Any]) -> tuple[dict[str, int], bool]:
    """The imp's ids (zero when absent) and whether it is programmatic guaranteed; _BadImp in PBS-Go's
    words when ``imp.ext`` or the params do not decode (a null ``bidder`` included)."""
    try:
        params = go_fields(imp_bidder_params(imp, null_is_absent=True), *_IDS, "programmaticGuaranteed")
        ids = {name: go_int(params.get(name), name) for name in _IDS}
        guaranteed = bool(go_value(params.get("programmaticGuaranteed"), GoKind.BOOL, "programmaticGuaranteed"))
    except ImpExtError:
        raise _BadImp("Error parsing bidderExt object") from None
    except JsonShapeError:
        raise _BadImp("Error parsing smartadserverExt parameters") from None
    return ids, guaranteed


def _clean_join(path: str, tail: str) -> str:
    """Go's ``path.Join(path, tail)``: joined and cleaned ("" stays relative, "//" becomes "/")."""
    joined = posixpath.normpath(posixpath.join(path, tail))
    return "/" + joined.lstrip("/") if joined.startswith("//") else joined


def endpoint_url(host: str, guaranteed: bool) -> str:
    """``<host>/ortb`` for programmatic guaranteed, else ``<host>/api/bid?callerId=5`` (any query
    of the host replaced); ValueError for a host without scheme or authority."""
    parts = urlsplit(host)
    if not parts.scheme or not parts.netloc:
        raise ValueError(f"Malformed URL: {host}.")
    if guaranteed:
        path, query = _clean_join(parts.path, "ortb"), parts.query
    else:
        path, query = _clean_join(parts.path, "api/bid"), "callerId=5"
    if not path.startswith("/"):
        path = "/" + path
    return urlunsplit((parts.scheme, parts.netloc, path, query, parts.fragment))


class SmartadserverAdapter(RecipeAdapter):
    """The recipe ``recipes/smartadserver.yaml`` (the answer and bid typing), the call Smart's own."""

    def __init__(self, recipe: Recipe, config: AdapterConfig) -> None:
        super().__init__(recipe, config)
        self.guaranteed_host = PROGRAMMATIC_GUARANTEED_HOST

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        if not imps:
            return [], [bad_input("No impression in the bid request")]
        errors: list[BidderError] = []
        pending: list[tuple[dict[str, Any], dict[str, int]]] = []
        guaranteed = False
        network = None
        for imp in imps:
            try:
                ids, imp_guaranteed = _params(imp)
            except _BadImp as exc:
                errors.append(bad_input(str(exc)))
                continue
            guaranteed = guaranteed or imp_guaranteed
            pending.append((imp, ids))
            network = ids["networkId"]
        if not pending:
            return [], errors
        key = "smartadserver" if guaranteed else "bidder"
        out_imps = []
        for imp, ids in pending:
            ext = {name: value for name, value in imp["ext"].items() if name != "bidder"}
            ext[key] = ids
            out_imps.append({**imp, "ext": ext})
        try:
            uri = endpoint_url(self.guaranteed_host if guaranteed else self.endpoint, guaranteed)
        except ValueError as exc:
            return [], [*errors, bad_input(str(exc))]
        site = request.get("site")
        site = site if isinstance(site, dict) else {}
        publisher = site.get("publisher")
        publisher = publisher if isinstance(publisher, dict) else {}
        site = {**site, "publisher": {**publisher, "id": str(network)}}
        body = orjson.dumps({**request, "site": site, "imp": out_imps})
        ids_sent = imp_ids(out_imps)
        return [RequestData("POST", uri, body, JSON_HEADERS, imp_ids=ids_sent)], errors


def build(config: AdapterConfig) -> SmartadserverAdapter:
    return SmartadserverAdapter.of_code("smartadserver", config)


__all__ = ["build", "endpoint_url"]
