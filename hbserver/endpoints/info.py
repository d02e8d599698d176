"""The bidder catalogue: ``GET /info/bidders``, ``GET /info/bidders/{name}`` and ``GET /bidders/params``
(PBS-Go's shapes).

Every answer is built once from the registry at start-up: a request only picks bytes.

- ``/info/bidders``: the sorted list of every bidder code, aliases included; ``?enabledonly=true``
  keeps the enabled ones, ``?baseadaptersonly=true`` drops aliases (any other value: 400 with
  PBS-Go's text).
- ``/info/bidders/{name}`` (case-insensitive; ``all`` = every bidder by code): ``status``
  (ACTIVE | DISABLED), and for an enabled bidder ``usesHttps`` and ``capabilities``; ``maintainer``
  and ``aliasOf`` when it has them. Beyond PBS-Go, for an enabled bidder: ``openrtb``
  (``version``, ``gpp-supported``) and ``endpointCompression`` when set, the facts a host checks
  before enabling one. An unknown name: 404 naming it.
- ``/bidders/params``: code -> the JSON schema its parameters are validated against (an alias:
  its adapter's; the pass-through ``generic`` takes any object).
"""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

from hbserver.adapters.params import SCHEMALESS_ADAPTERS, schema_of
from hbserver.bidders.registry import Bidder, Registry
from hbserver.web.errors import text_response

JSON = "application/json"
INVALID_ENABLED_ONLY = "Invalid value for 'enabledonly' query param, must be of boolean type"
INVALID_BASE_ONLY = "Invalid value for 'baseadaptersonly' query param, must be of boolean type"
ANY_OBJECT_SCHEMA = {"type": "object"}
MAX_NAME_ECHO = 64  # characters of an unknown name repeated in the 404


def bidder_detail(bidder: Bidder) -> dict[str, Any]:
    """One bidder's ``/info/bidders/{name}`` object, keys in PBS-Go's order."""
    detail: dict[str, Any] = {"status": "DISABLED" if bidder.disabled else "ACTIVE"}
    if not bidder.disabled:
        detail["usesHttps"] = bidder.endpoint.lower().startswith("https://")
    if bidder.maintainer:
        detail["maintainer"] = {"email": bidder.maintainer}
    if not bidder.disabled:
        channels = {c: {"mediaTypes": list(bidder.media_types[c])} for c in ("app", "site", "dooh")
                    if c in bidder.media_types}
        if channels:
            detail["capabilities"] = channels
    if bidder.alias_of:
        detail["aliasOf"] = bidder.alias_of
    if not bidder.disabled:
        detail["openrtb"] = {"version": bidder.openrtb_version, "gpp-supported": bidder.gpp_supported}
        if bidder.endpoint_compression:
            detail["endpointCompression"] = bidder.endpoint_compression
    return detail


def _flag(request: web.Request, name: str) -> bool | None:
    """A boolean query flag (absent = False); None for any other value."""
    values = request.query.getall(name, ())
    if not values:
        return False
    return {"true": True, "false": False}.get(values[0].lower())


class InfoEndpoints:
    def __init__(self, registry: Registry) -> None:
        bidders = sorted(registry.bidders.values(), key=lambda b: b.code.encode())  # Go's byte order
        self._lists: dict[tuple[bool, bool], bytes] = {}
        for enabled_only in (False, True):
            for base_only in (False, True):
                codes = [
                    b.code for b in bidders
                    if not (enabled_only and b.disabled) and not (base_only and b.alias_of)
                ]  # fmt: skip
                self._lists[(enabled_only, base_only)] = orjson.dumps(codes)
        details = {b.code: bidder_detail(b) for b in bidders}
        self._details = {code.lower(): orjson.dumps(detail) for code, detail in details.items()}
        self._details["all"] = orjson.dumps(details)
        self._params = orjson.dumps({b.code: _schema(b.adapter) for b in bidders})

    async def handle_list(self, request: web.Request) -> web.Response:
        enabled_only = _flag(request, "enabledonly")
        if enabled_only is None:
            return text_response(400, INVALID_ENABLED_ONLY)
        base_only = _flag(request, "baseadaptersonly")
        if base_only is None:
            return text_response(400, INVALID_BASE_ONLY)
        return web.Response(body=self._lists[(enabled_only, base_only)], content_type=JSON)

    async def handle_detail(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        body = self._details.get(name.lower())
        if body is None:
            shown = name if len(name) <= MAX_NAME_ECHO else name[:MAX_NAME_ECHO] + "..."
            return text_response(404, f"unknown bidder: {shown}")  # echoes the name: nosniff
        return web.Response(body=body, content_type=JSON)

    async def handle_params(self, request: web.Request) -> web.Response:
        return web.Response(body=self._params, content_type=JSON)


def _schema(adapter_code: str) -> Any:
    """The schema of an adapter's params; the pass-through adapters take any object."""
    if adapter_code in SCHEMALESS_ADAPTERS:
        return ANY_OBJECT_SCHEMA
    return schema_of(adapter_code)
