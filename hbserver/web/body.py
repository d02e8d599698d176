"""Request bodies: size limit (413), gzip (header or ``?gzip=1``), JSON whatever the Content-Type,
and one nesting limit for every JSON document the server reads.

``Content-Encoding: gzip`` is undone by aiohttp's parser itself, in bounded chunks, and the
application's ``client_max_size`` applies to the decompressed size; a body that does not decode
is a 400. Prebid.js sends ``?gzip=1`` with no header (to stay a CORS "simple" request); that body
is decompressed here, also bounded.

Nesting: every JSON document that enters — request bodies, stored requests, imps and responses,
bidders' bids, AMP's ``targeting`` — may be at most :data:`MAX_JSON_DEPTH` containers deep. Prebid
Server requests are under 15 deep; orjson writes at most 254 levels, and what comes in is written
back a few levels deeper (``ext.debug.resolvedrequest``, a bid inside ``seatbid``, AMP targeting
inside ``imp.ext.data``), so 64 leaves room for any real document and far more than the embedding
needs, and nothing read within it can fail to serialise. :func:`loads_json` is the one reader.

The check is cheap where it matters: a document with at most 64 ``{`` and ``[`` bytes in all (a
Prebid.js auction with a few ad units) cannot be deeper, which two C-speed ``bytes.count`` calls
prove. Only larger documents get the exact check: orjson writes the parsed value inside a fixed
tower of lists whose height leaves exactly 64 levels under orjson's own limit, so "Recursion
limit reached" means "deeper than 64" — in C, about 5x faster than a Python walk. Measured
(timeit, min of 7): bench/payloads/auction.json (1.3 KB, 34 brackets) parses in ~4.3 µs before,
~5.5 µs after; a 10-imp body (3.5 KB) ~13.5 -> ~21.5 µs; a 100-imp body (29 KB) ~120 -> ~170 µs
(a Python walk instead of the tower: ~280 µs). An auction costs ~370 µs of CPU (make bench).
"""

from __future__ import annotations

import threading
import zlib
from typing import Any

import orjson
from aiohttp import hdrs, web
from aiohttp.streams import StreamReader
from aiohttp.web_protocol import RequestPayloadError

from hbserver.web.errors import HttpError
from hbserver.web.keys import MAX_REQUEST_SIZE

GZIP_WBITS = 16 + zlib.MAX_WBITS
MAX_JSON_DEPTH = 64  # containers ({} or []) deep, counting the outermost one

_loads = orjson.loads
_dumps = orjson.dumps


class JsonTooDeep(orjson.JSONDecodeError):
    """A JSON document nested more than :data:`MAX_JSON_DEPTH` levels deep.

    A subclass of ``orjson.JSONDecodeError``, so code that refuses malformed JSON refuses this too.
    """

    def __init__(self) -> None:
        super().__init__(f"nested more than {MAX_JSON_DEPTH} levels deep", "", 0)

    def __str__(self) -> str:
        return self.msg


def _orjson_depth_limit() -> int:
    """The deepest value orjson writes (254 in orjson 3), found once at import; 0 = no limit found."""
    value: list[Any] = []
    for level in range(1, 2048):
        try:
            _dumps(value)
        except orjson.JSONEncodeError:
            return level - 1
        value = [value]
    return 0


_ORJSON_DEPTH = _orjson_depth_limit()
# A tower of lists with an empty slot at the top: a value of depth d put in the slot makes a
# document _TOWER_HEIGHT + d deep, which orjson writes if and only if d <= MAX_JSON_DEPTH.
_TOWER_HEIGHT = _ORJSON_DEPTH - MAX_JSON_DEPTH
_tower: list[Any] = [None]
_slot = _tower
for _ in range(_TOWER_HEIGHT - 1):
    _tower = [_tower]
_tower_lock = threading.Lock()  # the slot is shared; the event loop is the usual (only) caller


def _deeper_than_limit(value: Any) -> bool:
    """Is ``value`` (a parsed JSON document) nested more than MAX_JSON_DEPTH deep? Exact."""
    if _TOWER_HEIGHT <= 0:
        return _walk_deeper(value)  # an orjson without a (known) limit: walk in Python
    with _tower_lock:
        _slot[0] = value
        try:
            _dumps(_tower)
        except orjson.JSONEncodeError:
            return True
        finally:
            _slot[0] = None
    return False


def _walk_deeper(value: Any) -> bool:
    level = [value]
    for _ in range(MAX_JSON_DEPTH):
        below = []
        for item in level:
            for child in item.values() if type(item) is dict else item:
                if type(child) is dict or type(child) is list:
                    below.append(child)
        if not below:
            return False
        level = below
    return True


def within_depth(value: Any) -> bool:
    """Is ``value`` (parsed JSON) at most MAX_JSON_DEPTH deep? Callers ask only when its text held
    more brackets than the limit (:func:`may_be_deeper`)."""
    if type(value) is not dict and type(value) is not list:
        return True
    return not _deeper_than_limit(value)


def may_be_deeper(raw: bytes) -> bool:
    """Could JSON text ``raw`` be nested more than MAX_JSON_DEPTH deep? False is certain (few brackets)."""
    return raw.count(b"{") + raw.count(b"[") > MAX_JSON_DEPTH


def loads_json(data: bytes | bytearray | memoryview | str) -> Any:
    """``orjson.loads`` within the nesting limit: raises ``orjson.JSONDecodeError`` for malformed
    JSON and :class:`JsonTooDeep` (a subclass) for JSON nested more than MAX_JSON_DEPTH deep.

    Every JSON document the server reads goes through here (endpoints whose error texts are their
    own catch ``orjson.JSONDecodeError`` as before)."""
    value = _loads(data)
    if type(value) is not dict and type(value) is not list:
        return value
    if type(data) is bytes:  # the usual: a body, inlined (this runs on every auction)
        if data.count(b"{") + data.count(b"[") <= MAX_JSON_DEPTH:
            return value
    elif type(data) is str:
        if data.count("{") + data.count("[") <= MAX_JSON_DEPTH:
            return value
    if _deeper_than_limit(value):
        raise JsonTooDeep()
    return value


def too_large(limit: int) -> HttpError:
    return HttpError(413, f"Request body too large: the limit is {limit} bytes")


async def read_body(request: web.Request) -> bytes:
    """The request body, decompressed, at most ``max_request_size`` bytes; else 413 / 400.

    Call it once per request: a body already received in full (the usual small POST) is taken
    straight from the stream's buffer, so ``request.read()`` sees nothing afterwards.
    """
    limit = request.app[MAX_REQUEST_SIZE]
    length = request._headers.get(hdrs.CONTENT_LENGTH)  # request.content_length, without the property
    if length is not None and int(length) > limit:
        raise too_large(limit)
    content = request._payload  # request.content
    if content.__class__ is StreamReader:  # is_eof() and exception(), inline
        whole = content._eof and content._exception is None
    else:  # EmptyStreamReader (no body), or a test's stream
        whole = content.is_eof() and content.exception() is None
    if whole:
        # Whole body buffered already: skip read()'s chunk loop (a few µs on every POST).
        data = buffered_body(content, request._protocol)
        if len(data) > limit:
            raise too_large(limit)
    else:
        try:
            data = await request.read()
        except web.HTTPRequestEntityTooLarge:
            raise too_large(limit) from None
        except RequestPayloadError:  # aiohttp could not undo the Content-Encoding (or the framing)
            raise undecodable(request) from None
    if (
        "gzip" in request._message.path  # cheap test first (the raw target holds the query)
        and request.query.get("gzip") == "1"
        and "gzip" not in request.headers.get("Content-Encoding", "")
    ):
        data = gunzip(data, limit)
    return data


def buffered_body(content: StreamReader, protocol: Any) -> bytes:
    """``content.read_nowait()`` of a body received whole (``content.is_eof()``, no exception).

    The usual small body is one chunk: it is taken from the stream's buffer as read_nowait()
    takes it, without read_nowait()'s ``protocol.resume_reading()``, which feeds the protocol an
    empty chunk (two Python calls through the parser) and resumes a transport that was never
    paused. Anything else (several chunks, a chunked body, paused reading) goes through read_nowait().
    """
    if content.__class__ is not StreamReader:  # EmptyStreamReader (no body) has no buffer
        return content.read_nowait()
    buffer = content._buffer
    if (
        len(buffer) == 1
        and not content._buffer_offset
        and content._http_chunk_splits is None
        and protocol is not None
        and not protocol._reading_paused
    ):
        data: bytes = buffer.popleft()
        content._size -= len(data)
        content._cursor += len(data)
        return data
    return content.read_nowait()


def undecodable(request: web.Request) -> HttpError:
    encoding = request.headers.get("Content-Encoding", "")
    if encoding:
        shown = encoding[:32].encode("ascii", "replace").decode()
        return HttpError(400, f"Invalid request: request body is not valid for its Content-Encoding: {shown}")
    return HttpError(400, "Invalid request: request body could not be read")


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
    """Parse a JSON body within the nesting limit; empty, malformed or too deep is a 400 naming it."""
    if not data or data.isspace():
        raise HttpError(400, "Invalid request: request body is empty")
    try:
        return loads_json(data)
    except JsonTooDeep as exc:
        raise HttpError(400, f"Invalid request: request body is {exc}") from None
    except orjson.JSONDecodeError as exc:
        raise HttpError(400, f"Invalid request: request body is not valid JSON: {exc}") from None


async def read_json(request: web.Request) -> Any:
    return parse_json(await read_body(request))
