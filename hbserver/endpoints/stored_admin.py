"""PBS-Java's cache admin endpoints (``admin_endpoints``), on the admin port only.

- ``POST /storedrequests/openrtb2`` ``{"requests": {id: json}, "imps": {id: json}}`` saves stored
  requests and imps into the in-memory cache (PBS-Java's ``SettingsCacheNotificationHandler``: each
  value a JSON text, as PBS-Java's ``Map<String, String>``; a JSON object is taken too);
  ``DELETE`` ``{"requests": [id], "imps": [id]}`` drops them, so the next lookup reads the backends.
- ``/storedrequests/amp``: the same for AMP's cache.
- ``/cache/invalidate?account=<id>`` drops the cached account (``AccountCacheInvalidationHandler``).

PBS-Java's answers: 200 with an empty body; 400 ``Missing update data.`` / ``Invalid update.`` /
``Missing invalidation data.`` / ``Invalid invalidation.`` / ``Account id is not defined``; another
method 405. Every worker applies the change before the answer (:mod:`hbserver.stores.stored.peers`);
when one does not confirm, 503 names it (ask again: a change applied twice is the same change).
"""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

from hbserver.stores.stored.peers import ChangeBus, Handler, Message
from hbserver.stores.stored.service import StoredData
from hbserver.web.body import read_body
from hbserver.web.errors import HttpError, text_response

KINDS = ("requests", "imps")


def apply_change(stored: StoredData) -> Handler:
    """The handler of a change message on this worker."""

    def apply(message: Message) -> None:
        op, amp = message["op"], bool(message.get("amp"))
        if op == "account":
            stored.invalidate("accounts", [message["id"]])
            return
        for kind in KINDS:
            if op == "save" and message.get(kind):
                stored.save(kind, {k: v.encode() for k, v in message[kind].items()}, amp=amp)
            elif op == "invalidate" and message.get(kind):
                stored.invalidate(kind, message[kind], amp=amp)

    return apply


def parse_update(body: bytes) -> dict[str, dict[str, str]]:
    """``{kind: {id: JSON text}}`` of a POST body; HttpError 400 in PBS-Java's words."""
    if not body:
        raise HttpError(400, "Missing update data.")
    try:
        document: Any = orjson.loads(body)
        if not isinstance(document, dict):
            raise ValueError
        update: dict[str, dict[str, str]] = {}
        for kind in KINDS:
            values = document.get(kind)
            if values is None:
                values = {}
            if not isinstance(values, dict):
                raise ValueError
            update[kind] = {str(k): _json_text(v) for k, v in values.items()}
        return update
    except ValueError:  # orjson's decode errors are ValueErrors
        raise HttpError(400, "Invalid update.") from None


def _json_text(value: Any) -> str:
    """A stored document as JSON text: a string must hold a JSON object (PBS-Java's form), or an object."""
    if isinstance(value, str):
        value = orjson.loads(value)
    if not isinstance(value, dict):
        raise ValueError
    return orjson.dumps(value).decode()


def parse_invalidation(body: bytes) -> dict[str, list[str]]:
    """``{kind: [id]}`` of a DELETE body; HttpError 400 in PBS-Java's words."""
    if not body:
        raise HttpError(400, "Missing invalidation data.")
    try:
        document: Any = orjson.loads(body)
        if not isinstance(document, dict):
            raise ValueError
        ids: dict[str, list[str]] = {}
        for kind in KINDS:
            values = document.get(kind)
            if values is None:
                values = []
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                raise ValueError
            ids[kind] = values
        return ids
    except ValueError:
        raise HttpError(400, "Invalid invalidation.") from None


async def _published(bus: ChangeBus, message: Message) -> web.Response:
    failed = await bus.publish(message)
    if failed:
        return text_response(503, f"Applied, but workers {failed} did not confirm; send it again")
    return web.Response(status=200)


class StoredRequestsAdmin:
    """``/storedrequests/openrtb2`` (``amp`` False) or ``/storedrequests/amp`` (True)."""

    def __init__(self, bus: ChangeBus, amp: bool) -> None:
        self.bus = bus
        self.amp = amp

    async def handle_post(self, request: web.Request) -> web.Response:
        update = parse_update(await read_body(request))
        return await _published(self.bus, {"op": "save", "amp": self.amp, **update})

    async def handle_delete(self, request: web.Request) -> web.Response:
        ids = parse_invalidation(await read_body(request))
        return await _published(self.bus, {"op": "invalidate", "amp": self.amp, **ids})


class AccountInvalidation:
    """``/cache/invalidate?account=<id>``."""

    def __init__(self, bus: ChangeBus) -> None:
        self.bus = bus

    async def handle(self, request: web.Request) -> web.Response:
        account = request.query.get("account", "")
        if not account.strip():
            raise HttpError(400, "Account id is not defined")
        return await _published(self.bus, {"op": "account", "id": account})
