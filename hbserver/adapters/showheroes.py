"""ShowHeroes adapter (and its aliases showheroes-bs, showheroesBs): a site needs its page, an app its
bundle, and the request one of the two (else that error alone). Every imp whose ext decodes (else
``Error parsing bidder params``) is sent in one call with its ext rewritten (``prebid``, ``bidder``,
``gpid``, ``tid``, ``data`` kept, ``params`` a copy of ``bidder``), a floor in another currency
converted to EUR, and, without a display manager, the request's Prebid channel name and version in
its place. ``source.ext.pbs`` names the server (``pbsv``: its version, ``pbsp``: go). The answer's
wording and typing are the recipe ``recipes/showheroes.yaml``'s.

Host settings in ``AdapterConfig.extra``: ``pbs_version`` (sent as ``pbsv``, "unknown" if empty)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    ConversionError,
    RequestData,
    RequestInfo,
    bad_input,
)
from hbserver.adapters.common import JSON_HEADERS, JsonShapeError, expect_object, json_call
from hbserver.adapters.golike import GoKind, go_fields, go_value
from hbserver.adapters.recipe import Recipe, RecipeAdapter, typed_imp, typed_top

PARSE_ERROR = "Error parsing bidder params"


def request_problem(request: Mapping[str, Any]) -> str | None:
    """Why the request cannot be sent (a site without a page, an app without a bundle, neither)."""
    site, app = request.get("site"), request.get("app")
    if site is not None and not (site.get("page") if isinstance(site, Mapping) else None):
        return "site request doesn't have a page URL"
    if app is not None and not (app.get("bundle") if isinstance(app, Mapping) else None):
        return "app request doesn't have a bundle ID"
    if site is None and app is None:
        return "request must contain a site or an app"
    return None


def _unit(value: Any, where: str) -> dict[str, str]:
    """``openrtb_ext.ExtImpShowheroes`` decoded and written again: ``{"unitId": ...}``."""
    fields = go_fields(expect_object(value, where), "unitId") if value is not None else {}
    return {"unitId": go_value(fields.get("unitId"), GoKind.STRING, f"{where}.UnitID") or ""}


def showheroes_ext(imp: Mapping[str, Any]) -> dict[str, Any]:
    """The imp's ext as ShowHeroes gets it; JsonShapeError when it does not decode."""
    fields = go_fields(expect_object(imp.get("ext"), ""), "prebid", "bidder", "gpid", "tid", "data", "params")
    prebid = fields.get("prebid")
    if prebid is not None:
        expect_object(prebid, "openrtb_ext.ExtImpPrebid")
    _unit(fields.get("params"), "params")
    bidder = _unit(fields.get("bidder"), "bidder")
    out: dict[str, Any] = {} if prebid is None else {"prebid": prebid}
    out["bidder"] = bidder
    for name in ("gpid", "tid"):
        text = go_value(fields.get(name), GoKind.STRING, name)
        if text:
            out[name] = text
    if "data" in fields:
        out["data"] = fields["data"]
    out["params"] = dict(bidder)
    return out


def prebid_channel(request: Mapping[str, Any]) -> tuple[str, str]:
    """``ext.prebid.channel``'s name and version ("" each without one)."""
    ext = request.get("ext")
    prebid = ext.get("prebid") if isinstance(ext, Mapping) else None
    channel = prebid.get("channel") if isinstance(prebid, Mapping) else None
    if not isinstance(channel, Mapping):
        return "", ""
    name, version = channel.get("name"), channel.get("version")
    return (name if isinstance(name, str) else ""), (version if isinstance(version, str) else "")


def with_pbs_source(request: Mapping[str, Any], version: str) -> dict[str, Any]:
    """The request with ``source.ext.pbs`` naming the server; a source ext that is no object left alone."""
    source = dict(request.get("source") or {})
    ext = source.get("ext")
    if ext is not None and not isinstance(ext, Mapping):
        return {**request, "source": source}
    source["ext"] = {**(ext or {}), "pbs": {"pbsv": version or "unknown", "pbsp": "go"}}
    return {**request, "source": source}


class ShowheroesAdapter(RecipeAdapter):
    """The recipe's answer; the call ShowHeroes' own."""

    def __init__(self, recipe: Recipe, config: AdapterConfig) -> None:
        super().__init__(recipe, config)
        self.version = str(config.extra.get("pbs_version") or "")

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        problem = request_problem(request)
        if problem is not None:
            return [], [bad_input(problem)]
        channel = prebid_channel(request)
        imps, errors = [], []
        for imp in request.get("imp") or ():
            try:
                imps.append(self.showheroes_imp(imp, channel, info))
            except JsonShapeError:
                errors.append(bad_input(PARSE_ERROR))
            except ConversionError as exc:
                errors.append(BidderError(str(exc)))
        if not imps:
            return [], errors
        body = {**typed_top(with_pbs_source(request, self.version)), "imp": imps}
        return [json_call(self.endpoint, body, [imp.get("id", "") for imp in imps], dict(JSON_HEADERS))], errors

    @staticmethod
    def showheroes_imp(imp: Mapping[str, Any], channel: tuple[str, str], info: RequestInfo) -> dict[str, Any]:
        out = {**imp, "ext": showheroes_ext(imp)}
        floor, currency = out.get("bidfloor") or 0, out.get("bidfloorcur") or ""
        if floor and currency != "EUR":
            out["bidfloor"], out["bidfloorcur"] = info.convert_currency(floor, currency or "USD", "EUR"), "EUR"
        if not out.get("displaymanager"):
            for key, value in zip(("displaymanager", "displaymanagerver"), channel, strict=True):
                if value:
                    out[key] = value
                else:
                    out.pop(key, None)
        return typed_imp(out)


def build(config: AdapterConfig) -> ShowheroesAdapter:
    return ShowheroesAdapter.of_code("showheroes", config)
