"""/optout: the user opts out of (or back into) syncing on this host.

PBS guards this with Google reCAPTCHA, which needs a third-party service; hbserver instead
changes the cookie only on a same-site POST (a form on ``/static/optout.html``), so a page on
another site cannot opt a visitor back in. ``GET /optout`` answers with a redirect to that page.
A ``POST`` with a non-empty ``optout`` field opts out (uids cleared); an empty one opts back in.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from aiohttp import web

from hbserver.usersync.cookie import encode_cookie
from hbserver.usersync.service import SyncService, utcnow
from hbserver.web.cookies import request_cookies
from hbserver.web.errors import text_response

OPTOUT_PAGE = "/static/optout.html"
MAX_FORM_BYTES = 4096


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class OptOutEndpoint:
    def __init__(self, service: SyncService) -> None:
        self.service = service
        self.page = service.config.external_url.rstrip("/") + OPTOUT_PAGE
        self.origin = _origin(service.config.external_url)

    async def show_page(self, request: web.Request) -> web.Response:
        return web.Response(status=301, headers={"Location": self.page})

    async def handle(self, request: web.Request) -> web.Response:
        origin = request.headers.get("Origin")
        foreign_origin = origin is not None and origin not in (self.origin, _origin(str(request.url)))
        if foreign_origin or request.headers.get("Sec-Fetch-Site") == "cross-site":
            return text_response(403, "opt-out changes are only accepted from this host's own opt-out page")
        if request.content_length is not None and request.content_length > MAX_FORM_BYTES:
            return text_response(413, f"Request body too large: the limit is {MAX_FORM_BYTES} bytes")
        form = await request.post() if request.can_read_body else {}
        value = form.get("optout", request.query.get("optout", ""))
        optout = bool(value) if isinstance(value, str) else True
        now = utcnow()
        cookie = self.service.read_cookie(request_cookies(request), now)
        cookie.set_optout(optout)
        return web.Response(
            status=303,
            headers={
                "Location": f"{OPTOUT_PAGE}?status={'out' if optout else 'in'}",
                "Set-Cookie": self.service.set_cookie(encode_cookie(cookie), now),
                "Cache-Control": "no-store",
            },
        )
