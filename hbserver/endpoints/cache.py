"""POST and GET /cache: the Prebid Cache API served by hbserver itself (DECISIONS "/cache").

Semantics and texts are PBC-Go's (error bodies end with a newline and carry ``nosniff``), with
two deliberate differences: every put is validated before any is stored, so a bad request never
leaves half of its items behind; and a put without ``ttlseconds`` lives ``cache.default_ttl_seconds``
(PBC-Go has no default and uses its maximum). Custom keys are not accepted from clients (PBC-Go's
default; the configuration has no switch for it): a ``key`` is ignored and a UUID is returned.
``GET`` reads a UUID, or a key the auction itself wrote: PBS-Go's competitive-exclusion key
``<hb_pb_cat_dur>_<uuid>`` (``includebrandcategory``), which an ad server rebuilds from the
``hb_pb_cat_dur`` and ``hb_uuid`` targeting values to fetch a pod's VAST. PBC-Go reads such keys
when ``allow_setting_keys`` lets clients write them; here only the auction writes them, and a key
longer than ``CUSTOM_KEY_MAX_LENGTH`` or not ending in ``_<36 characters>`` is PBC-Go's "invalid
uuid length".

A stored value is whatever a client put, so ``GET /cache`` answers it in a way no browser renders as a
document on this server's origin (an XHTML or SVG document, or a VAST carrying an XHTML-namespaced
``<script>``, would otherwise run its script here): ``X-Content-Type-Options: nosniff``, a
Content-Security-Policy allowing nothing (``sandbox`` makes an opaque origin even for a browser that
renders it), and ``Content-Disposition: attachment``. Legitimate clients (prebid-universal-creative,
video players, Prebid Mobile) read the value with XHR/fetch, which ignores all three.
"""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

from hbserver.stores.cache.base import CacheItem, CacheStoreError
from hbserver.stores.cache.service import CacheService, CacheTimeout
from hbserver.web.body import loads_json, read_body
from hbserver.web.errors import HttpError, text_response
from hbserver.web.response import FastResponse

STORE_TIMEOUT_SECONDS = 0.5  # PBC-Go's backend deadline for a put or a get
UUID_LENGTH = 36
# The longest auction-written key GET reads: hb_pb_cat_dur (price bucket, category, duration, with
# appendbiddernames the bidder) plus "_" and the auction's uuid.
CUSTOM_KEY_MAX_LENGTH = 256
CONTENT_TYPES = {"xml": "application/xml", "json": "application/json"}
# No script, no subresource, no framing; an opaque origin if a browser shows it anyway.
VALUE_CSP = "default-src 'none'; sandbox; frame-ancestors 'none'"
VALUE_HEADERS = {
    kind: {
        "Content-Type": content_type,
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": VALUE_CSP,
        "Content-Disposition": f'attachment; filename="cache.{kind}"',
    }
    for kind, content_type in CONTENT_TYPES.items()
}
_MISSING = object()


def go_error(status: int, message: str) -> web.Response:
    """Go's ``http.Error``: plain text, ``nosniff``, the message and a newline."""
    response = text_response(status, message + "\n")
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


def readable_key(key: str) -> bool:
    """A UUID's length, or an auction-written ``<hb_pb_cat_dur>_<uuid>`` key within the limit."""
    length = len(key)
    if length == UUID_LENGTH:
        return True
    return UUID_LENGTH + 1 < length <= CUSTOM_KEY_MAX_LENGTH and key[-UUID_LENGTH - 1] == "_"


def _go_bytes(value: Any) -> str:
    """How Go prints a ``[]byte`` of the value's JSON text: ``[53]`` for ``5``."""
    return "[" + " ".join(str(b) for b in orjson.dumps(value)) + "]"


def parse_puts(body: bytes, service: CacheService) -> list[CacheItem]:
    """The items of a POST /cache body, all validated; raises HttpError for the first problem."""
    try:
        data = loads_json(body)
    except orjson.JSONDecodeError:  # JsonTooDeep included
        data = None
    puts = data.get("puts", []) if isinstance(data, dict) else None
    if puts is None:
        puts = []
    elif not isinstance(puts, list) or not all(isinstance(p, dict) for p in puts) or any(
        "ttlseconds" in p and (isinstance(p["ttlseconds"], bool) or not isinstance(p["ttlseconds"], int | None))
        for p in puts
    ):
        data = None
    if not isinstance(data, dict):
        # PBC-Go answers an undecodable body with the body itself (it is plain text, nosniff).
        raise HttpError(400, body.decode("utf-8", errors="replace"))
    if len(puts) > service.max_num_values:
        raise HttpError(400, f"More keys than allowed: {service.max_num_values}")
    items = []
    for index, put in enumerate(puts):
        value = put.get("value", _MISSING)
        if value is _MISSING:
            raise HttpError(400, "Missing value.")
        ttl = put.get("ttlseconds") or 0
        if ttl < 0:
            raise HttpError(400, f"ttlseconds must not be negative {ttl}.")
        kind = put.get("type")
        if kind == "xml":
            if not isinstance(value, str):
                raise HttpError(400, f"XML messages must have a String value. Found {_go_bytes(value)}")
            payload = value.encode()
        elif kind == "json":
            payload = orjson.dumps(value)
        else:
            found = kind if isinstance(kind, str) else ""
            raise HttpError(400, f'Type must be one of ["json", "xml"]. Found \'{found}\'')
        item = CacheItem(kind, payload, service.ttl(ttl))
        problem = service.size_problem(index, item)
        if problem:
            raise HttpError(400, problem)
        items.append(item)
    return items


def responses_body(keys: list[str]) -> bytes:
    """The Prebid Cache API's answer to a put (also /vtrack's)."""
    return orjson.dumps({"responses": [{"uuid": key} for key in keys]})


class CacheEndpoint:
    def __init__(self, service: CacheService) -> None:
        self.service = service

    async def handle_post(self, request: web.Request) -> web.Response:
        try:
            items = parse_puts(await read_body(request), self.service)
        except HttpError as exc:
            return go_error(exc.status, exc.message)
        try:
            keys = await self.service.put_many(items, STORE_TIMEOUT_SECONDS)
        except CacheTimeout:
            return go_error(597, "timeout writing value to the backend.")
        except CacheStoreError as exc:
            return go_error(500, str(exc))
        return FastResponse(body=responses_body(keys), content_type="application/json")

    async def handle_get(self, request: web.Request) -> web.Response:
        key = request.query.get("uuid", "")
        if not key:
            return go_error(400, "GET /cache: Missing required parameter uuid")
        if not readable_key(key):
            return go_error(404, f"GET /cache uuid={key}: invalid uuid length")
        try:
            value = await self.service.get(key, STORE_TIMEOUT_SECONDS)
        except CacheStoreError as exc:  # CorruptValue included: its message is PBC-Go's text
            return go_error(500, f"GET /cache uuid={key}: {exc}")
        if value is None:
            return go_error(404, f"GET /cache uuid={key}: Key not found")
        return web.Response(body=value.payload, headers=VALUE_HEADERS[value.type])
