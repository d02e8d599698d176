"""A :class:`web.Response` that prepares and sends itself in one step.

aiohttp sends a response through a chain of about a dozen coroutines (``prepare``, two ``_start``,
``_prepare_headers``, ``_prepare_hook``, ``_write_headers``, the writer's ``write_headers``, three
``write_eof`` and ``drain``), with property look-ups at each level: for a small answer that chain
costs more than the whole handler of /event or /setuid. :class:`FastResponse` does the same work
for the plain case in :meth:`~FastResponse.prepare` and one transport write in
:meth:`~FastResponse.write_eof`:

- the headers aiohttp adds are added in the same order with the same values (``Content-Length``,
  ``Content-Type: application/octet-stream`` for an untyped body, ``Date``, ``Server``,
  ``Connection: close`` when the connection is not kept alive), and the head is serialized by
  aiohttp's own serializer (same bytes, same refusal of control characters);
- the head and the body go out in one write, as aiohttp coalesces them.

A ``204 No Content`` without a body is sent the same way, with aiohttp's headers for it (no
``Content-Length``). Anything else takes aiohttp's own path unchanged: HTTP/1.0, HEAD, 1xx/304, a
204 with a body, a body that is not
bytes, compression, chunking, cookies set through ``set_cookie``, a ``Content-Length`` set by hand,
a writer with hooks, ``on_response_prepare`` signals, a transport that pushes back (``drain``).

The constructor keeps ``web.Response``'s arguments for what hbserver uses (``body``, ``text``,
``status``, ``content_type``, ``charset``) and leaves the same attributes, without its generic
checks and keyword plumbing.
"""

from __future__ import annotations

import time
from typing import Any

from aiohttp import hdrs, web
from aiohttp.client_exceptions import ClientConnectionResetError
from aiohttp.helpers import EMPTY_BODY_STATUS_CODES, rfc822_formatted_time
from aiohttp.http import SERVER_SOFTWARE, HttpVersion11
from aiohttp.http_writer import StreamWriter, _serialize_headers
from aiohttp.web_response import MAX_SYNC_CHUNK_SIZE, REASON_PHRASES
from multidict import CIMultiDict

_CONTENT_LENGTH, _CONTENT_TYPE, _DATE, _SERVER, _CONNECTION = (
    hdrs.CONTENT_LENGTH, hdrs.CONTENT_TYPE, hdrs.DATE, hdrs.SERVER, hdrs.CONNECTION,
)
_FAST_METHODS = frozenset({"GET", "POST", "OPTIONS", "PUT", "DELETE", "PATCH"})  # never HEAD or CONNECT
# "HTTP/1.1 <status> <reason>" for each status with its standard reason.
_STATUS_LINES = {status: f"HTTP/1.1 {status} {reason}" for status, reason in REASON_PHRASES.items()}
_time = time.time
_date: list[Any] = [0, "", b""]  # a second, the Date rfc822_formatted_time() gave for it, its header line
_SERVER_LINE = _serialize_headers("", {hdrs.SERVER: SERVER_SOFTWARE})[2:-2]  # checked as aiohttp checks it
# The Content-Length value and header line of the bodies most answers have (shorter than this), made once.
_LENGTH_LINES_BELOW = 4096
_LENGTHS = [(str(n), f"Content-Length: {n}\r\n".encode()) for n in range(_LENGTH_LINES_BELOW)]


class FastResponse(web.Response):
    """``web.Response(body=..., status=..., content_type=..., charset=...)`` or ``(text=...)``
    (text/plain, UTF-8, as aiohttp defaults), sent without aiohttp's coroutine chain."""

    _head: bytes | None = None  # set by a fast prepare(): the serialized status line and headers
    # web.Response.__init__ sets these on every instance; here they are class defaults of the same
    # values (fewer instance attributes, a smaller instance dict to fill).
    _compressed_body = None
    _zlib_executor_size = MAX_SYNC_CHUNK_SIZE
    _zlib_executor = None

    def __init__(
        self,
        *,
        body: bytes | None = None,
        status: int = 200,
        text: str | None = None,
        content_type: str | None = None,
        charset: str | None = None,
    ) -> None:
        headers: CIMultiDict[str] = CIMultiDict()
        if text is not None:
            if body is not None:
                raise ValueError("body and text are not allowed together")
            charset = charset or "utf-8"
            headers[_CONTENT_TYPE] = (content_type or "text/plain") + "; charset=" + charset
            body = text.encode(charset)
        elif content_type is not None:
            headers[_CONTENT_TYPE] = content_type if charset is None else content_type + "; charset=" + charset
        # What web.Response.__init__ and StreamResponse.__init__ leave (tests/test_fast_response.py
        # compares the two).
        self._state: dict[Any, Any] = {}
        self._headers = headers
        self._status = status
        self._reason = REASON_PHRASES.get(status, "")
        self._body = body

    async def prepare(self, request: web.BaseRequest) -> Any:
        if self._eof_sent or self._payload_writer is not None:
            return await super().prepare(request)
        writer = request._payload_writer
        if (
            request.version != HttpVersion11
            or not self._plain_for(request._method)
            or writer.__class__ is not StreamWriter
            or writer._on_headers_sent is not None
            or writer._on_chunk_sent is not None
            or writer._compress is not None
        ):
            return await super().prepare(request)
        match_info = getattr(request, "_match_info", None)  # Request._prepare_hook's signals
        if match_info is not None:
            for app in match_info._apps:
                if app.on_response_prepare:
                    return await super().prepare(request)
        self._req = request
        self._payload_writer = writer
        self._head = self._serialized_head(request)
        return writer

    def _plain_for(self, method: str) -> bool:
        """Whether this response, to a request with ``method``, is the plain case (see the module docstring)."""
        body = self._body
        status = self._status
        return not (
            (body is not None and body.__class__ is not bytes)
            or method not in _FAST_METHODS
            or (status in EMPTY_BODY_STATUS_CODES and (status != 204 or body))
            or self._chunked
            or self._compression
            or self._cookies
            or _CONTENT_LENGTH in self._headers
        )

    def send_at_once(self, request: web.BaseRequest) -> bool:
        """Send this response to ``request`` now, head and body in one write, when it is the plain case:
        what ``prepare`` and ``write_eof`` do, without their coroutines. False: not sent, it must go
        through ``prepare``. The caller vouches for what ``prepare`` checks of the request and its
        writer: HTTP/1.1, a fresh :class:`StreamWriter` of aiohttp's, no ``on_response_prepare``
        signal (:meth:`hbserver.web.connection.Connection._handle_plain`). Raises
        ``ClientConnectionResetError`` when the connection is closing; the caller awaits
        ``writer.drain()`` when the transport pushes back."""
        if self._eof_sent or self._payload_writer is not None or not self._plain_for(request._method):
            return False
        self._payload_writer = request._payload_writer
        head = self._serialized_head(request)
        body = self._body
        self._write(head + body if body else head)
        self._sent()
        return True

    def _serialized_head(self, request: web.BaseRequest) -> bytes:
        """Response._start, then StreamResponse._prepare_headers, for the plain case: the headers aiohttp
        adds all go after the response's own, so those are serialized (and checked) by aiohttp's
        serializer and the added ones, whose values are known to be clean, are appended as bytes.
        Sets the writer's length and the response's keep-alive as aiohttp does."""
        headers = self._headers
        status = self._status
        body = self._body
        reason = self._reason
        status_line = _STATUS_LINES.get(status) if reason is REASON_PHRASES.get(status) else None
        own = _serialize_headers(status_line or f"HTTP/1.1 {status} {reason}", headers)
        length = len(body) if body else 0
        if status == 204:  # aiohttp sets Content-Length: 0, then removes it for a 204
            head = [own[:-2]]
        elif length < _LENGTH_LINES_BELOW:
            headers[_CONTENT_LENGTH], line = _LENGTHS[length]
            head = [own[:-2], line]
        else:
            headers[_CONTENT_LENGTH] = text = str(length)
            head = [own[:-2], b"Content-Length: ", text.encode(), b"\r\n"]
        keep_alive = self._keep_alive
        if keep_alive is None:  # request.keep_alive (a reify), read as it reads itself
            keep_alive = request._cache.get("keep_alive")
            if keep_alive is None:
                keep_alive = request._cache["keep_alive"] = not request._message.should_close
            self._keep_alive = keep_alive
        request._payload_writer.length = length
        if length and _CONTENT_TYPE not in headers:
            headers[_CONTENT_TYPE] = "application/octet-stream"
            head.append(b"Content-Type: application/octet-stream\r\n")
        if _DATE not in headers:
            second = int(_time())  # rfc822_formatted_time(), whose value changes once a second
            if second != _date[0]:
                date = rfc822_formatted_time()
                _date[:] = second, date, f"Date: {date}\r\n".encode()
            headers[_DATE] = _date[1]
            head.append(_date[2])
        if _SERVER not in headers:
            headers[_SERVER] = SERVER_SOFTWARE
            head.append(_SERVER_LINE)
        if not keep_alive and _CONNECTION not in headers:
            headers[_CONNECTION] = "close"
            head.append(b"Connection: close\r\n")
        head.append(b"\r\n")
        return b"".join(head)

    async def write_eof(self, data: bytes = b"") -> None:
        head = self._head
        if head is None or self._eof_sent:
            return await super().write_eof(data)
        assert not data, f"data arg is not supported, got {data!r}"
        self._head = None
        body = self._body
        self._write(head + body if body else head)
        if self._payload_writer._protocol._paused:  # type: ignore[union-attr]
            await self._payload_writer.drain()  # type: ignore[union-attr]
        self._sent()

    def _write(self, chunk: bytes) -> None:
        """StreamWriter.write_eof for the head and the body, coalesced into one write."""
        writer = self._payload_writer
        assert writer is not None
        size = len(chunk)
        writer.buffer_size += size
        writer.output_size += size
        transport = writer._protocol.transport
        if transport is None or transport.is_closing():
            raise ClientConnectionResetError("Cannot write to closing transport")
        transport.write(chunk)
        writer._headers_written = True
        writer._eof = True

    def _sent(self) -> None:
        """StreamResponse.write_eof's bookkeeping once the answer is written."""
        self._eof_sent = True
        self._req = None
        self._body_length = self._payload_writer.output_size  # type: ignore[union-attr]
        self._payload_writer = None
