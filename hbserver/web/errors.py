"""Plain-text error responses. Every client-facing error goes through here.

Each carries ``X-Content-Type-Options: nosniff``: error texts often echo what the client sent (a
bidder name, an account id, a query parameter), and a browser that sniffed such a body as HTML
would run script from it on this server's origin.
"""

from __future__ import annotations

from aiohttp import web

from hbserver.web.response import FastResponse

TEXT_PLAIN = "text/plain"
X_CONTENT_TYPE_OPTIONS = "X-Content-Type-Options"
NOSNIFF = "nosniff"


def text_response(status: int, message: str) -> web.Response:
    """A plain-text response (UTF-8, ``nosniff``) with ``message`` as the body."""
    response = FastResponse(status=status, text=message, content_type=TEXT_PLAIN, charset="utf-8")
    response.headers[X_CONTENT_TYPE_OPTIONS] = NOSNIFF
    return response


class HttpError(Exception):
    """Raised anywhere below a handler to answer ``status`` with a plain-text ``message``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message

    def response(self) -> web.Response:
        return text_response(self.status, self.message)
