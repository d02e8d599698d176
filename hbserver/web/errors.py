"""Plain-text error responses. Every client-facing error goes through here."""

from __future__ import annotations

from aiohttp import web

from hbserver.web.response import FastResponse

TEXT_PLAIN = "text/plain"


def text_response(status: int, message: str) -> web.Response:
    """A plain-text response (UTF-8) with ``message`` as the body."""
    return FastResponse(status=status, text=message, content_type=TEXT_PLAIN, charset="utf-8")


class HttpError(Exception):
    """Raised anywhere below a handler to answer ``status`` with a plain-text ``message``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message

    def response(self) -> web.Response:
        return text_response(self.status, self.message)
