"""Rediads adapter: the whole request in one call, built by the bidder's own rules; its answer is
read by the recipe ``recipes/rediads.yaml``. Each imp whose params decode loses ``prebid`` and
``bidder`` from its ext and takes its ``slot`` as tagid (imps that do not decode go as they are,
with an error); the last such imp's ``account_id`` becomes the site's (else the app's) publisher id,
and its ``endpoint`` (a safe host name) replaces the first label of the endpoint's host."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from hbserver.adapters.base import AdapterConfig, BidderError, RequestData, RequestInfo, bad_input
from hbserver.adapters.common import JsonShapeError, imp_ids, json_call
from hbserver.adapters.golike import ImpExtError, set_omitempty
from hbserver.adapters.recipe import RecipeAdapter, typed_imp, typed_top
from hbserver.adapters.steps import is_safe_host


def with_publisher(request: dict[str, Any], account_id: str) -> None:
    """The site's (else the app's) publisher with ``account_id`` as its id (omitempty)."""
    for key in ("site", "app"):
        owner = request.get(key)
        if isinstance(owner, dict):
            publisher = owner.get("publisher")
            publisher = dict(publisher) if isinstance(publisher, dict) else {}
            set_omitempty(publisher, "id", account_id)
            request[key] = {**owner, "publisher": publisher}
            return


def endpoint_for(template: str, subdomain: str) -> str:
    """``template`` with the first label of its host replaced by ``subdomain`` (none: as it is)."""
    if not subdomain:
        return template
    host = urlsplit(template).netloc.rpartition("@")[2]
    new_host = ".".join([subdomain, *host.split(".")[1:]])
    return template.replace(host, new_host, 1) if host else template


class RediadsAdapter(RecipeAdapter):
    """The bidder's own call; the recipe's answer."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        errors: list[BidderError] = []
        imps: list[dict[str, Any]] = []
        account_id = subdomain = ""
        for imp in request.get("imp") or ():
            try:
                params = self.recipe.params.read(imp)
            except ImpExtError:
                errors.append(bad_input(f"Invalid Ext format in impression {imp.get('id', '')}"))
            except JsonShapeError:
                errors.append(bad_input(f"Invalid bidder params in impression {imp.get('id', '')}"))
            else:
                account_id, subdomain = params["account_id"], params["endpoint"]
                ext = {key: value for key, value in imp["ext"].items() if key not in ("prebid", "bidder")}
                imp = {**imp, "ext": ext}
                if params["slot"]:
                    imp["tagid"] = params["slot"]
            imps.append(typed_imp(imp))
        out = {**typed_top(request), "imp": imps}
        with_publisher(out, account_id)
        if subdomain and not is_safe_host(subdomain):
            return [], [bad_input("Invalid endpoint")]
        uri = endpoint_for(self.endpoint, subdomain)
        return [json_call(uri, out, imp_ids(imps), {})], errors


def build(config: AdapterConfig) -> RediadsAdapter:
    return RediadsAdapter.of_code("rediads", config)
