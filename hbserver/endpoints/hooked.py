"""The endpoints' own hook stages: entrypoint (the HTTP request as it came), a rejected request's
answer, and exitpoint (what goes on the wire). The auction's stages are in
:mod:`hbserver.auction.hookpoints`."""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

from hbserver.auction.hookpoints import HookRejected, auction_response, rejected_response
from hbserver.hooks.api import EntrypointPayload, ExitpointPayload, Stage
from hbserver.hooks.executor import HookExecutor
from hbserver.hooks.outcome import EXITPOINT, HTTP_REQUEST, Rejection
from hbserver.web.response import FastResponse


async def entrypoint(hooks: HookExecutor, request: web.Request, body: bytes) -> tuple[bytes, Rejection | None]:
    """The body the entrypoint hooks leave, and their reject (if one did)."""
    payload = EntrypointPayload(request.headers, request.query, body)
    payload, rejection = await hooks.run(Stage.ENTRYPOINT, payload, HTTP_REQUEST)
    changed = payload.body if isinstance(payload.body, bytes | bytearray) else body
    return bytes(changed), rejection


async def rejected_answer(hooks: HookExecutor, rejected: HookRejected, debug_allowed: bool = True) -> dict[str, Any]:
    """PBS-Go's answer to a request a hook rejected: ``{"id", "nbr"}`` through the auction_response
    hooks, with the modules' outcomes."""
    response = rejected_response(rejected.rejection, rejected.request)
    return await auction_response(hooks, response, rejected.request, debug_allowed)


async def exit_response(hooks: HookExecutor, answer: Any) -> FastResponse:
    """The JSON response on the wire: ``answer`` as the exitpoint hooks leave it, with their headers."""
    headers: dict[str, str] = {}
    answer = await exitpoint(hooks, answer, headers)
    response = FastResponse(body=orjson.dumps(answer), content_type="application/json")
    if headers:
        response.headers.update(headers)
    return response


async def exitpoint(hooks: HookExecutor, response: Any, headers: dict[str, str]) -> Any:
    """What the exitpoint hooks leave of the answer; ``headers`` gets what they add."""
    if Stage.EXITPOINT not in hooks.stages:
        return response
    payload, _ = await hooks.run(Stage.EXITPOINT, ExitpointPayload(response, headers), EXITPOINT)
    if isinstance(payload.headers, dict) and payload.headers is not headers:
        headers.update(payload.headers)
    return payload.response
