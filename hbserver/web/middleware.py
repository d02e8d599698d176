"""The one middleware: CORS, the X-Prebid header, plain-text errors, 500s without tracebacks,
and request metrics. One layer instead of several keeps the per-request cost to a single call.
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
from hbserver.metrics import UNMATCHED_ENDPOINT, Metrics
from hbserver.web.cors import MAX_ORIGIN_LENGTH, apply_cors, preflight_response
from hbserver.web.errors import HttpError, text_response

log = logging.getLogger("hbserver.http")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")


def request_id(request: web.Request) -> str:
    """The caller's ``X-Request-Id`` when it is sane, else a fresh one."""
    given = request.headers.get("X-Request-Id", "")
    return given if _REQUEST_ID.fullmatch(given) else uuid.uuid4().hex


def make_middleware(metrics: Metrics) -> Callable[..., Awaitable[web.StreamResponse]]:
    perf_counter = time.perf_counter
    observe = metrics.observe_request

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        start = perf_counter()
        resource = request.match_info.route.resource
        origin = request.headers.get("Origin")
        if origin is not None and len(origin) > MAX_ORIGIN_LENGTH:
            origin = None
        if resource is not None:
            endpoint = resource.canonical
            preflight = False
        else:
            # No route took the request: 404, or 405 for a known path with another method.
            known_path = getattr(request.match_info, "http_exception", None).__class__ is web.HTTPMethodNotAllowed
            endpoint = request.path if known_path else UNMATCHED_ENDPOINT
            preflight = (
                known_path
                and request.method == "OPTIONS"
                and origin is not None
                and "Access-Control-Request-Method" in request.headers
            )
        try:
            if preflight:
                response: web.StreamResponse = preflight_response(request, origin)  # type: ignore[arg-type]
            else:
                response = await handler(request)
        except HttpError as exc:
            response = exc.response()
        except web.HTTPException as exc:
            # Router 404/405 and aiohttp's own limits: same status, plain-text body.
            response = text_response(exc.status, exc.text or exc.reason)
            for name in ("Allow", "Location"):
                if name in exc.headers:
                    response.headers[name] = exc.headers[name]
        except asyncio.CancelledError:
            raise
        except Exception:
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
        if not response.prepared:
            headers = response.headers
            headers["X-Prebid"] = SERVER_HEADER_VALUE
            if origin is not None:
                apply_cors(headers, origin)
        observe(endpoint, response.status, perf_counter() - start)
        return response

    return middleware
