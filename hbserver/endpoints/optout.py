"""/optout: the user opts out of (or back into) syncing on this host.

PBS guards this with Google reCAPTCHA, which needs a third-party service; hbserver instead changes the
cookie only on a POST from its own opt-out page, served at ``GET /optout`` and ``GET /static/optout.html``
(the address it had before, where the form comes back to). A ``POST`` with a non-empty ``optout`` field
opts out (uids cleared); an empty one opts back in. The POST must pass, in this order:

- a same-origin ``Origin`` (when sent) and no ``Sec-Fetch-Site: cross-site``;
- from a browser that sends ``Sec-Fetch-*``: a navigation the user started (``Sec-Fetch-Mode: navigate``
  and ``Sec-Fetch-User: ?1``), so a script, even one on this origin, can neither ``fetch`` it nor submit a
  form without a click;
- the per-visit token: each GET of the page puts a fresh random token in its forms and in the
  ``hbs_optout_token`` cookie (``Path=/optout; HttpOnly; Secure; SameSite=Strict``); the form's token must
  equal the cookie's (double submit: another site can neither read the token nor send the cookie).

The page cannot be framed (``X-Frame-Options: DENY``, CSP ``frame-ancestors 'none'``); its CSP allows
only its own inline script and style (by hash) and forms posting to this origin.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from collections.abc import Mapping
from datetime import datetime
from importlib import resources
from urllib.parse import urlsplit

from aiohttp import web
from aiohttp.web_protocol import RequestPayloadError

from hbserver.usersync.cookie import UidsCookie, encode_cookie
from hbserver.usersync.service import SyncService, utcnow
from hbserver.web.cookies import request_cookies
from hbserver.web.endpoint import Handler
from hbserver.web.errors import HttpError, text_response

OPTOUT_PAGE = "/static/optout.html"
PAGE_CONTENT_TYPE = "text/html; charset=utf-8"
MAX_FORM_BYTES = 4096
TOKEN_COOKIE = "hbs_optout_token"
TOKEN_FIELD = "token"
TOKEN_PLACEHOLDER = b"{{token}}"
TOKEN_MAX_AGE = 3600  # seconds: a visit to the page
FRAME_ANCESTORS = "frame-ancestors 'none'"
FOREIGN_TEXT = "opt-out changes are only accepted from this host's own opt-out page"
NOT_A_CLICK_TEXT = "opt-out changes are only accepted from a click on this host's own opt-out page"
TOKEN_TEXT = (
    "opt-out form token missing or wrong: open this host's opt-out page (/optout) again and submit its form"
)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _inline_hashes(html: str, tag: str) -> str:
    """CSP sources allowing exactly the page's inline ``<tag>`` elements (without attributes)."""
    sources = []
    for text in re.findall(rf"<{tag}>(.*?)</{tag}>", html, re.DOTALL):
        digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
        sources.append(f"'sha256-{digest}'")
    return " ".join(sources) or "'none'"


def page_policy(template: bytes) -> str:
    """The opt-out page's Content-Security-Policy."""
    html = template.decode()
    return (
        f"default-src 'none'; script-src {_inline_hashes(html, 'script')}; style-src {_inline_hashes(html, 'style')}; "
        f"form-action 'self'; base-uri 'none'; {FRAME_ANCESTORS}"
    )


def token_cookie(token: str) -> str:
    return f"{TOKEN_COOKIE}={token}; Path=/optout; Max-Age={TOKEN_MAX_AGE}; HttpOnly; Secure; SameSite=Strict"


def page_handler(template: bytes, content_type: str) -> Handler:
    """The opt-out page (``GET /optout``, ``GET /static/optout.html``) with a fresh token in its forms and cookie."""
    if TOKEN_PLACEHOLDER not in template:
        raise ValueError(f"the opt-out page has no {TOKEN_PLACEHOLDER.decode()} placeholder")
    headers = {
        "Content-Type": content_type,
        "Cache-Control": "no-store",
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "DENY",
        "Content-Security-Policy": page_policy(template),
    }

    async def handle_optout_page(request: web.Request) -> web.Response:
        token = secrets.token_urlsafe(32)
        response = web.Response(body=template.replace(TOKEN_PLACEHOLDER, token.encode()), headers=headers)
        response.headers["Set-Cookie"] = token_cookie(token)
        return response

    return handle_optout_page


def _started_by_a_click(request: web.Request) -> bool:
    """False for a browser request (it sends ``Sec-Fetch-Mode``) that is not a navigation the user started."""
    mode = request.headers.get("Sec-Fetch-Mode")
    return mode is None or (mode == "navigate" and request.headers.get("Sec-Fetch-User") == "?1")


def _same_token(sent: object, expected: str) -> bool:
    """The form's token equals the cookie's (constant time; tokens are ASCII, anything else is wrong)."""
    return (
        isinstance(sent, str) and bool(expected) and sent.isascii() and expected.isascii()
        and hmac.compare_digest(sent, expected)
    )


async def _read_form(request: web.Request) -> dict[str, object]:
    """The POSTed form; a body that is not a readable form is a 400 (never a 500)."""
    if not request.can_read_body:
        return {}
    try:
        return dict(await request.post())
    except (ValueError, RequestPayloadError):  # bytes that are not UTF-8, a body its encoding does not fit
        raise HttpError(400, "opt-out form could not be read") from None


class OptOutEndpoint:
    def __init__(self, service: SyncService) -> None:
        self.service = service
        self.origin = _origin(service.config.external_url)
        template = (resources.files("hbserver") / "static" / "optout.html").read_bytes()
        self._page = page_handler(template, PAGE_CONTENT_TYPE)

    async def show_page(self, request: web.Request) -> web.StreamResponse:
        """``GET /optout``: the opt-out page itself (as PBS; it was a redirect to ``/static/optout.html``)."""
        return await self._page(request)

    async def handle(self, request: web.Request) -> web.Response:
        origin = request.headers.get("Origin")
        foreign_origin = origin is not None and origin not in (self.origin, _origin(str(request.url)))
        if foreign_origin or request.headers.get("Sec-Fetch-Site") == "cross-site":
            return text_response(403, FOREIGN_TEXT)
        if not _started_by_a_click(request):
            return text_response(403, NOT_A_CLICK_TEXT)
        if request.content_length is not None and request.content_length > MAX_FORM_BYTES:
            return text_response(413, f"Request body too large: the limit is {MAX_FORM_BYTES} bytes")
        try:
            form = await _read_form(request)
        except HttpError as exc:
            return exc.response()
        token = form.get(TOKEN_FIELD, "")
        expected = request_cookies(request).get(TOKEN_COOKIE, "")
        if not _same_token(token, expected):
            return text_response(403, TOKEN_TEXT)
        value = form.get("optout", request.query.get("optout", ""))
        optout = bool(value) if isinstance(value, str) else True
        now = utcnow()
        sent = request_cookies(request)
        cookie = self.service.read_cookie(sent, now)
        cookie.set_optout(optout)
        response = web.Response(
            status=303,
            headers={"Location": f"{OPTOUT_PAGE}?status={'out' if optout else 'in'}", "Cache-Control": "no-store"},
        )
        for header in self._set_cookies(cookie, sent, now):
            response.headers.add("Set-Cookie", header)
        return response

    def _set_cookies(self, cookie: UidsCookie, sent: Mapping[str, str], now: datetime) -> list[str]:
        """``uids`` alone, or every uids cookie: an opt-out is written in ``uids`` and clears the others."""
        service = self.service
        if service.parts is None:
            return [service.set_cookie(encode_cookie(cookie), now)]
        return service.part_headers(service.split(cookie, now).values, sent, now)
