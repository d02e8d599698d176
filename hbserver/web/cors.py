"""CORS: echo the caller's Origin with credentials (never ``*`` with credentials) and answer preflights.

Prebid.js calls with ``credentials: 'include'``, so a wildcard origin would be refused by the
browser; the Origin is echoed and ``Vary: Origin`` keeps shared caches honest.

``Origin: null`` is not echoed. Sandboxed frames, ``file:`` and ``data:`` pages and some redirects
all send that same ``null``, so echoing it with credentials would let any such document read
answers made with the user's cookies (the ``uids`` cookie behind /getuids, /cookie_sync, the
auction's buyer ids). PBS-Go does echo it (rs/cors with ``AllowOriginFunc`` returning true and
``AllowCredentials``, ``router/router.go`` ``SupportCORS``); we differ on purpose. A ``null``
origin gets ``Access-Control-Allow-Origin: *`` without ``Access-Control-Allow-Credentials``
instead of nothing: its reads without credentials (a creative in a sandboxed or ``data:`` frame
fetching from /cache, say) still work, while a browser refuses any credentialed read. This shuts no
attacker out - every real origin is still echoed - but it keeps a user's ids away from opaque
documents, which anyone can create inside any page.
"""

from __future__ import annotations

from aiohttp import web
from multidict import CIMultiDict

ALLOWED_METHODS = "GET, POST, OPTIONS"
DEFAULT_ALLOWED_HEADERS = "Content-Type"
PREFLIGHT_MAX_AGE = "600"
MAX_ORIGIN_LENGTH = 2048


NULL_ORIGIN = "null"


def apply_cors(headers: CIMultiDict[str], origin: str) -> None:
    """The CORS headers of an answer to ``origin``; ``null`` gets ``*`` without credentials."""
    if origin == NULL_ORIGIN:
        headers["Access-Control-Allow-Origin"] = "*"
    else:
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
