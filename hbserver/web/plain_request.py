"""The ``web.Request`` of a request a plain route takes, made without ``BaseRequest.__init__``'s general case.

``Application._make_request`` calls ``web.Request(...)``, whose ``__init__`` handles what a plain
route's request never is (an absolute-form target, a scheme, host or remote given by a clone) and
asks the connection for its TLS context, peer and socket names (three properties, each a transport
call) on every request. :func:`plain_request` leaves the same attributes with the same values for
the case it is used in: the target was found as written in the plain-route table (so it is not
absolute), the application's own request factory, the connection's names read once when it was
made. tests/test_plain_request.py compares every attribute with aiohttp's and pins
``BaseRequest.__init__``.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

_new = object.__new__
_Request = web.Request


def plain_request(
    message: Any,
    payload: Any,
    protocol: Any,
    writer: Any,
    task: Any,
    transport_info: tuple[Any, Any, Any],
    sizes: tuple[int, int],
) -> web.Request:
    """``app._make_request(message, payload, protocol, writer, task)`` for a non-absolute target.
    ``transport_info``: the connection's (ssl context, peer name, socket name); ``sizes``: the
    application's (client_max_size, client_max_fields)."""
    request = _new(_Request)
    request._message = message
    request._protocol = protocol
    request._payload_writer = writer
    request._payload = payload
    request._headers = message.headers
    request._method = message.method
    request._version = message.version
    request._cache = {}
    request._rel_url = message.url
    request._state = {}
    request._task = task
    request._client_max_size, request._client_max_fields = sizes
    request._loop = protocol._loop
    request._transport_sslcontext, request._transport_peername, request._transport_sockname = transport_info
    return request
