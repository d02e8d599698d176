"""Every route goes through :func:`wrap`: CORS, the X-Prebid header, the request id, plain-text
errors, 500s without tracebacks, request metrics, in-flight requests, the sampled access log and
the armed HTTP-interaction log, in one call around the handler. A request whose client has gone by
the time it is answered (even with an exception: its body's read failed) is counted as a client
disconnect, neither as a response status nor as an internal error.

The request id (``X-Request-Id``: the caller's when sane, else a fresh one) is on every response
and, through :data:`hbserver.logsetup.REQUEST_ID`, on every log line written while the request is
handled (tasks it starts copy the context).

This is done by wrapping handlers at registration rather than with an aiohttp middleware: any
middleware makes aiohttp add two more layers per request (the middleware chain and its
current-app fix-up), which costs about a tenth of the throughput of a small endpoint. Requests
that no route takes reach the catch-all of :meth:`Routes.add_fallback`, so 404s, 405s and
preflights get the same treatment.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from bisect import bisect_left
from collections.abc import Awaitable, Callable

from aiohttp import hdrs, web
from multidict import istr

from hbserver import SERVER_HEADER_VALUE
from hbserver.logsetup import REQUEST_ID
from hbserver.metrics import UNMATCHED_ENDPOINT, Metrics, PendingCounter, PendingHistogram
from hbserver.web.cors import MAX_ORIGIN_LENGTH, apply_cors, preflight_response
from hbserver.web.errors import HttpError, text_response
from hbserver.web.gzip_answers import gzip_answers
from hbserver.web.keys import CONFIG, METRICS
from hbserver.web.requestlog import (
    HTTP_INTERACTIONS,
    INTERACTION_KINDS,
    AccessLog,
    HttpInteractionLog,
    id_source,
    sane_request_id,
)
from hbserver.web.tracing import TRACER, traced

log = logging.getLogger("hbserver.http")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
X_REQUEST_ID = istr("X-Request-Id")  # istr names: header look-ups and writes skip case-folding
X_PREBID = istr("X-Prebid")
ORIGIN = hdrs.ORIGIN
_perf_counter = time.perf_counter
_random = random.random
_set_request_id = REQUEST_ID.set


def wrap(
    handler: Handler, endpoint: str, metrics: Metrics, access: AccessLog | None = None,
    interactions: HttpInteractionLog | None = None,
) -> Handler:
    """``handler`` with the cross-cutting behaviour; ``endpoint`` is its metrics label. ``access``
    samples requests into the access log; ``interactions`` (auction and AMP only) logs them when armed."""
    answers: dict[int, tuple[PendingCounter, PendingHistogram]] = {}  # status -> metric handles, added to inline
    sample_rate, sample_all, write_access = _access_sampling(access)
    kind = INTERACTION_KINDS.get(endpoint, "")
    ids = id_source()  # requestlog.request_id_from() inlined: every request runs it
    flight = metrics.flight

    async def endpoint_handler(request: web.Request) -> web.StreamResponse:
        start = _perf_counter()
        sent = request._headers  # request.headers, without the descriptor
        given = sent.get(X_REQUEST_ID)
        rid = given if given is not None and sane_request_id(given) else next(ids)
        _set_request_id(rid)  # never reset: the connection's next request (same task) sets its own
        flight.n += 1
        try:
            try:
                response = await handler(request)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if request.transport is None and not isinstance(exc, (HttpError, web.HTTPException)):
                    # the client left (mid-body, say): not an error of ours
                    return client_disconnected(request, endpoint, metrics, web.Response(status=499))
                response = failure_response(exc, request, endpoint, metrics, rid)
            protocol = request._protocol  # request.transport, without the property call
            if protocol is None or protocol.transport is None:
                return client_disconnected(request, endpoint, metrics, response)
            # response.prepared, without the property call (StreamResponse's own fields)
            if response._payload_writer is None and not response._eof_sent:
                headers = response._headers  # response.headers, without the property call
                headers[X_PREBID] = SERVER_HEADER_VALUE
                headers[X_REQUEST_ID] = rid
                origin = sent.get(ORIGIN)
                if origin is not None and len(origin) <= MAX_ORIGIN_LENGTH:
                    apply_cors(headers, origin)
            seconds = _perf_counter() - start
            status = response._status  # response.status, without the property call
            handles = answers.get(status)
            if handles is None:
                handles = answers[status] = metrics.answer_handles(endpoint, status)
            counter, histogram = handles
            counter.pending += 1  # Metrics.observe_request, inline
            histogram.counts[bisect_left(histogram.bounds, seconds)] += 1
            histogram.total += seconds
            if sample_rate and (sample_all or _random() < sample_rate):
                write_access(request, endpoint, status, seconds, rid)  # type: ignore[misc]  # set when rate > 0
            if interactions is not None and interactions.spec is not None:
                interactions.maybe_log(kind, request, response)
            return response
        finally:
            flight.n -= 1

    endpoint_handler.__name__ = getattr(handler, "__name__", "endpoint_handler")
    return endpoint_handler


def _access_sampling(access: AccessLog | None) -> tuple[float, bool, Callable[..., None] | None]:
    """The access log's (sample rate, whether it takes every request, its writer): (0, False, None) without one."""
    if access is None:
        return 0.0, False, None
    return access.sample_rate, access.sample_rate >= 1.0, access.write


def failure_response(
    exc: Exception, request: web.Request, endpoint: str, metrics: Metrics, rid: str
) -> web.StreamResponse:
    """The answer to an exception out of a handler: an HttpError's or an aiohttp HTTPException's own
    status and text (with its Allow and Location), else a logged and counted 500."""
    if isinstance(exc, HttpError):
        return exc.response()
    if isinstance(exc, web.HTTPException):
        response = text_response(exc.status, exc.text or exc.reason)
        for name in ("Allow", "Location"):
            if name in exc.headers:
                response.headers[name] = exc.headers[name]
        return response
    return internal_error(request, endpoint, metrics, rid)


def client_disconnected(
    request: web.Request, endpoint: str, metrics: Metrics, response: web.StreamResponse
) -> web.StreamResponse:
    """Count a request whose client closed the connection before its answer; ``response`` is
    handed back to aiohttp, which finds the connection closed and sends nothing."""
    log.debug("client closed the connection before the answer to %s %s", request.method, request.path,
              extra={"endpoint": endpoint})
    metrics.counter(metrics.client_disconnects, endpoint).inc()
    return response


def internal_error(request: web.Request, endpoint: str, metrics: Metrics, rid: str) -> web.Response:
    """Log the exception in flight with the request id, count it, answer a bare 500 naming the id."""
    log.exception(
        "unhandled error answering %s %s",
        request.method,
        request.path,
        extra={"request_id": rid, "endpoint": endpoint},
    )
    metrics.internal_errors.labels(endpoint).inc()
    response = text_response(500, f"Internal server error (request id {rid})")
    response.headers[X_REQUEST_ID] = rid
    return response


class Routes:
    """The application's routes, each wrapped; keeps which methods each path allows."""

    def __init__(self, app: web.Application) -> None:
        self.app = app
        self.metrics = app[METRICS]
        self.allowed: dict[str, set[str]] = {}
        config = app.get(CONFIG)
        rate = config.logging.access.sample_rate if config is not None else 0.0
        self.access = AccessLog(rate) if rate > 0 else None
        self.interactions = app.get(HTTP_INTERACTIONS)
        self.gzip = config is not None and config.compression.response.enable_gzip
        self.tracer = app.get(TRACER)  # None: tracing off, routes not wrapped for it

    def add(self, method: str, path: str, handler: Handler) -> None:
        interactions = self.interactions if path in INTERACTION_KINDS else None
        if self.gzip:
            handler = gzip_answers(handler)
        wrapped = wrap(handler, path, self.metrics, self.access, interactions)
        if self.tracer is not None:
            wrapped = traced(wrapped, method, path, self.tracer)
        self.metrics.declare_endpoint(path)
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

        self.metrics.declare_endpoint(UNMATCHED_ENDPOINT)
        self.app.router.add_route("*", "/{tail:.*}", wrap(fallback, UNMATCHED_ENDPOINT, self.metrics, self.access))
