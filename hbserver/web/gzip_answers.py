"""PBS-Go's ``compression.response.enable_gzip``: answers gzipped for clients that accept gzip.

As PBS-Go's handler (``gziphandler`` with its defaults): only a body of at least
:data:`MIN_SIZE` bytes is compressed (a smaller one costs more to compress than it saves), at the
default level; the answer then says ``Content-Encoding: gzip`` and, compressed or not, ``Vary:
Accept-Encoding`` (a cache between must not give a gzipped answer to a client that cannot read it).
A body of more than :data:`MAX_INLINE` bytes is compressed in a thread, so the event loop never
stalls on a large answer. Only added to the routes when the host turns it on: off, it costs nothing.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Awaitable, Callable

from aiohttp import hdrs, web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

MIN_SIZE = 1400  # gziphandler's DefaultMinSize
MAX_INLINE = 256 * 1024  # above this the compression runs in a thread
_LEVEL = 6  # gzip's default (Go's gzip.DefaultCompression)


def accepts_gzip(accept_encoding: str) -> bool:
    """Whether an ``Accept-Encoding`` value accepts gzip (``gzip`` or ``*``, without ``q=0``)."""
    for part in accept_encoding.lower().split(","):
        coding, _, params = part.partition(";")
        if coding.strip() not in ("gzip", "*"):
            continue
        quality = params.replace(" ", "")
        if quality.startswith("q="):
            try:
                if float(quality[2:]) <= 0:
                    continue
            except ValueError:
                continue
        return True
    return False


def gzip_bytes(body: bytes) -> bytes:
    compressor = zlib.compressobj(_LEVEL, zlib.DEFLATED, 31)  # wbits 31: a gzip member
    return compressor.compress(body) + compressor.flush()


def gzip_answers(handler: Handler) -> Handler:
    """``handler`` whose answers are gzipped for clients that accept it."""

    async def gzipped(request: web.Request) -> web.StreamResponse:
        response = await handler(request)
        if not isinstance(response, web.Response) or response.prepared:
            return response
        headers = response.headers
        vary = headers.get(hdrs.VARY)
        if vary is None:
            headers[hdrs.VARY] = hdrs.ACCEPT_ENCODING
        elif "accept-encoding" not in vary.lower():
            headers[hdrs.VARY] = vary + ", " + hdrs.ACCEPT_ENCODING
        body = response.body
        if (
            body.__class__ is not bytes
            or len(body) < MIN_SIZE
            or hdrs.CONTENT_ENCODING in headers
            or not accepts_gzip(request.headers.get(hdrs.ACCEPT_ENCODING, ""))
        ):
            return response
        if len(body) > MAX_INLINE:
            compressed = await asyncio.get_running_loop().run_in_executor(None, gzip_bytes, body)
        else:
            compressed = gzip_bytes(body)
        response.body = compressed
        headers[hdrs.CONTENT_ENCODING] = "gzip"
        return response

    gzipped.__name__ = getattr(handler, "__name__", "gzipped")
    return gzipped
