"""CORS: echo the caller's Origin with credentials (never ``*``) and answer preflights.

Prebid.js calls with ``credentials: 'include'``, so a wildcard origin would be refused by the
browser; the Origin is echoed and ``Vary: Origin`` keeps shared caches honest.
"""

from __future__ import annotations

from aiohttp import web
from multidict import CIMultiDict

ALLOWED_METHODS = "GET, POST, OPTIONS"
DEFAULT_ALLOWED_HEADERS = "Content-Type"
PREFLIGHT_MAX_AGE = "600"
MAX_ORIGIN_LENGTH = 2048


def apply_cors(headers: CIMultiDict[str], origin: str) -> None:
    headers["Access-Control-Allow-Origin"] = origin
    headers["Access-Control-Allow-Credentials"] = "true"
    headers["Vary"] = "Origin"


def preflight_response(request: web.Request, origin: str) -> web.Response:
    """204 answer to an ``OPTIONS`` preflight for an existing route."""
    response = web.Response(status=204)
    headers = response.headers
    apply_cors(headers, origin)
    headers["Access-Control-Allow-Methods"] = ALLOWED_METHODS
    headers["Access-Control-Allow-Headers"] = (
        request.headers.get("Access-Control-Request-Headers") or DEFAULT_ALLOWED_HEADERS
    )
    headers["Access-Control-Max-Age"] = PREFLIGHT_MAX_AGE
    return response
