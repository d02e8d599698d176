"""Every route goes through :func:`wrap`: CORS, the X-Prebid header, plain-text errors, 500s
without tracebacks, and request metrics, in one call around the handler. A request whose client
has gone by the time it is answered (even with an exception: its body's read failed) is counted
as a client disconnect, neither as a response status nor as an internal error.

This is done by wrapping handlers at registration rather than with an aiohttp middleware: any
middleware makes aiohttp add two more layers per request (the middleware chain and its
current-app fix-up), which costs about a tenth of the throughput of a small endpoint. Requests
that no route takes reach the catch-all of :meth:`Routes.add_fallback`, so 404s, 405s and
preflights get the same treatment.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable

from aiohttp import web

from hbserver import SERVER_HEADER_VALUE
from hbserver.appkeys import METRICS
from hbserver.metrics import UNMATCHED_ENDPOINT, Metrics
from hbserver.web.cors import MAX_ORIGIN_LENGTH, apply_cors, preflight_response
from hbserver.web.errors import HttpError, text_response

log = logging.getLogger("hbserver.http")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
_perf_counter = time.perf_counter


def request_id(request: web.Request) -> str:
    """The caller's ``X-Request-Id`` when it is sane, else a fresh one."""
    given = request.headers.get("X-Request-Id", "")
    return given if _REQUEST_ID.fullmatch(given) else uuid.uuid4().hex


def wrap(handler: Handler, endpoint: str, metrics: Metrics) -> Handler:
    """``handler`` with the cross-cutting behaviour; ``endpoint`` is its metrics label."""
    observe = metrics.observe_request

    async def endpoint_handler(request: web.Request) -> web.StreamResponse:
        start = _perf_counter()
        try:
            response = await handler(request)
        except HttpError as exc:
            response = exc.response()
        except web.HTTPException as exc:
            response = text_response(exc.status, exc.text or exc.reason)
            for name in ("Allow", "Location"):
                if name in exc.headers:
                    response.headers[name] = exc.headers[name]
        except asyncio.CancelledError:
            raise
        except Exception:
            if request.transport is None:  # the client left (mid-body, say): not an error of ours
                return client_disconnected(request, endpoint, metrics, web.Response(status=499))
            response = internal_error(request, endpoint, metrics)
        if request.transport is None:
            return client_disconnected(request, endpoint, metrics, response)
        if not response.prepared:
            headers = response.headers
            headers["X-Prebid"] = SERVER_HEADER_VALUE
            origin = request.headers.get("Origin")
            if origin is not None and len(origin) <= MAX_ORIGIN_LENGTH:
                apply_cors(headers, origin)
        observe(endpoint, response.status, _perf_counter() - start)
        return response

    endpoint_handler.__name__ = getattr(handler, "__name__", "endpoint_handler")
    return endpoint_handler


def client_disconnected(
    request: web.Request, endpoint: str, metrics: Metrics, response: web.StreamResponse
) -> web.StreamResponse:
    """Count a request whose client closed the connection before its answer; ``response`` is
    handed back to aiohttp, which finds the connection closed and sends nothing."""
    log.debug("client closed the connection before the answer to %s %s", request.method, request.path,
              extra={"endpoint": endpoint})
    metrics.counter(metrics.client_disconnects, endpoint).inc()
    return response


def internal_error(request: web.Request, endpoint: str, metrics: Metrics) -> web.Response:
    """Log the exception in flight with a request id, count it, answer a bare 500."""
    rid = request_id(request)
    log.exception(
        "unhandled error answering %s %s",
        request.method,
        request.path,
        extra={"request_id": rid, "endpoint": endpoint},
    )
    metrics.internal_errors.labels(endpoint).inc()
    response = text_response(500, f"Internal server error (request id {rid})")
    response.headers["X-Request-Id"] = rid
    return response


class Routes:
    """The application's routes, each wrapped; keeps which methods each path allows."""

    def __init__(self, app: web.Application) -> None:
        self.app = app
        self.metrics = app[METRICS]
        self.allowed: dict[str, set[str]] = {}

    def add(self, method: str, path: str, handler: Handler) -> None:
        wrapped = wrap(handler, path, self.metrics)
        methods = self.allowed.setdefault(path, set())
        methods.add(method)
        if method == "GET":
            self.app.router.add_get(path, wrapped)  # with HEAD
            methods.add("HEAD")
        else:
            self.app.router.add_route(method, path, wrapped)

    def add_fallback(self) -> None:
        """Register the catch-all; call it after every other route."""
        allowed = self.allowed

        async def fallback(request: web.Request) -> web.StreamResponse:
            methods = allowed.get(request.path)
            if methods is None:
                raise web.HTTPNotFound()
            origin = request.headers.get("Origin")
            if (
                request.method == "OPTIONS"
                and origin is not None
                and len(origin) <= MAX_ORIGIN_LENGTH
                and "Access-Control-Request-Method" in request.headers
            ):
                return preflight_response(request, origin)
            raise web.HTTPMethodNotAllowed(request.method, sorted(methods))

        self.app.router.add_route("*", "/{tail:.*}", wrap(fallback, UNMATCHED_ENDPOINT, self.metrics))
