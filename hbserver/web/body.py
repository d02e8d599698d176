"""Request bodies: size limit (413), gzip (header or ``?gzip=1``), JSON whatever the Content-Type.

``Content-Encoding: gzip`` is undone by aiohttp's parser itself, in bounded chunks, and the
application's ``client_max_size`` applies to the decompressed size. Prebid.js sends ``?gzip=1``
with no header (to stay a CORS "simple" request); that body is decompressed here, also bounded.
"""

from __future__ import annotations

import zlib
from typing import Any

import orjson
from aiohttp import web

from hbserver.appkeys import MAX_REQUEST_SIZE
from hbserver.web.errors import HttpError

GZIP_WBITS = 16 + zlib.MAX_WBITS


def too_large(limit: int) -> HttpError:
    return HttpError(413, f"Request body too large: the limit is {limit} bytes")


async def read_body(request: web.Request) -> bytes:
    """The request body, decompressed, at most ``max_request_size`` bytes; else 413 / 400.

    Call it once per request: a body already received in full (the usual small POST) is taken
    straight from the stream's buffer, so ``request.read()`` sees nothing afterwards.
    """
    limit = request.app[MAX_REQUEST_SIZE]
    length = request.content_length
    if length is not None and length > limit:
        raise too_large(limit)
    content = request.content
    if content.is_eof() and content.exception() is None:
        # Whole body buffered already: skip read()'s chunk loop (a few µs on every POST).
        data = content.read_nowait()
        if len(data) > limit:
            raise too_large(limit)
    else:
        try:
            data = await request.read()
        except web.HTTPRequestEntityTooLarge:
            raise too_large(limit) from None
    if (
        "gzip" in request.query_string  # cheap test first: most requests have no query at all
        and request.query.get("gzip") == "1"
        and "gzip" not in request.headers.get("Content-Encoding", "")
    ):
        data = gunzip(data, limit)
    return data


def gunzip(data: bytes, limit: int) -> bytes:
    """Decompress a gzip body without ever holding more than ``limit`` + 1 bytes of output."""
    decompressor = zlib.decompressobj(GZIP_WBITS)
    try:
        out = decompressor.decompress(data, limit + 1)
    except zlib.error as exc:
        raise HttpError(400, f"Invalid request: request body is not valid gzip: {exc}") from None
    if len(out) > limit:
        raise HttpError(413, f"Request body too large: the limit is {limit} bytes after decompression")
    if not decompressor.eof:
        raise HttpError(400, "Invalid request: request body is not valid gzip: truncated data")
    return out


def parse_json(data: bytes) -> Any:
    """Parse a JSON body with orjson; an empty or malformed body is a 400 naming the problem."""
    if not data or data.isspace():
        raise HttpError(400, "Invalid request: request body is empty")
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise HttpError(400, f"Invalid request: request body is not valid JSON: {exc}") from None


async def read_json(request: web.Request) -> Any:
    return parse_json(await read_body(request))
