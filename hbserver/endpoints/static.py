"""GET /static/...: hbserver's own user-sync helper pages (DECISIONS "Sync helper pages").

The files are a fixed list read from the package once, when the routes are added; a request only
picks one of them by its exact path, so no path from the request ever reaches the file system.
``optout.html`` is a template: each GET fills in a fresh form token and sets its cookie, and the page
cannot be framed (:func:`hbserver.endpoints.optout.page_handler`).
"""

from __future__ import annotations

from importlib import resources

from aiohttp import web

from hbserver.endpoints.optout import page_handler
from hbserver.installation import STATIC_FILES
from hbserver.web.endpoint import Handler, Routes

STATIC_PREFIX = "/static/"
CACHE_CONTROL = "public, max-age=3600"
OPTOUT_PATH = STATIC_PREFIX + "optout.html"
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "application/javascript; charset=utf-8",
}


def read_files() -> dict[str, tuple[bytes, str]]:
    """URL path -> (content, Content-Type) for each helper file."""
    root = resources.files("hbserver") / "static"
    files = {}
    for name in STATIC_FILES:
        suffix = name[name.rindex(".") :]
        files[STATIC_PREFIX + name] = ((root / name).read_bytes(), CONTENT_TYPES[suffix])
    return files


def static_handler(body: bytes, content_type: str) -> Handler:
    """A handler answering ``body`` (read once) with its type and cache headers."""
    headers = {
        "Content-Type": content_type,
        "Cache-Control": CACHE_CONTROL,
        "X-Content-Type-Options": "nosniff",
    }

    async def handle_static(request: web.Request) -> web.Response:
        return web.Response(body=body, headers=headers)

    return handle_static


def add_static_routes(routes: Routes) -> None:
    """Register ``GET /static/<name>`` for each helper file."""
    for path, (body, content_type) in read_files().items():
        make = page_handler if path == OPTOUT_PATH else static_handler
        routes.add("GET", path, make(body, content_type))
