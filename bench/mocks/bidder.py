"""Mock OpenRTB bidders, any number of them in one process: ``python bench/mocks/bidder.py PORT [options]``.

It listens on PORT of every ``--host`` (default 127.0.0.1; 127.0.0.2... are loopback too, so
bidders can be distinct hosts with their own connection pools in the client).

``POST /<name>`` answers an OpenRTB BidResponse with one banner bid (price, crid, w/h, mtype 1,
adm) per banner imp of the request, seat ``<name>``. Per name, options change that:
``--delay NAME=MS`` answers after MS milliseconds, ``--no-bid NAME`` answers 204, ``--hang NAME``
reads the request and never answers (the connection stays open until the client gives up).
``GET /ready`` answers 200.

It runs on wrk's CPU beside the load generator, so it must be cheap: with three bidder calls per
AMP request an aiohttp server here saturated that core before hbserver did (issue 22). So it is
a raw :class:`asyncio.Protocol` on uvloop: HTTP/1.1 keep-alive, ``Content-Length`` request bodies
(gzip-coded too: ``endpoint_compression: gzip`` bidders send those; hbserver's bidder client never
sends chunked bodies, so ``Transfer-Encoding`` is refused with 501), pipelined requests answered
in order, and answers spliced from byte templates cached per seat and imp set (only the request's
id, imp ids and banner sizes are read). A request that is not valid HTTP gets 400 and the
connection is closed. :func:`bid_response` is the reference the templates are tested against, and
:func:`make_handler` serves the same answers on aiohttp's low-level server for tests that want one.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import signal
import sys
import zlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import orjson
import uvloop

if TYPE_CHECKING:
    from aiohttp import web

ADM = (
    '<div class="bench-ad" style="width:{w}px;height:{h}px;overflow:hidden">'
    '<a href="https://{seat}.example/click?crid={crid}" target="_blank">'
    '<img src="https://{seat}.example/creative/{crid}.png" width="{w}" height="{h}" alt="ad"></a>'
    '<img src="https://{seat}.example/imp?crid={crid}" width="1" height="1" style="display:none" alt=""></div>'
)
DEFAULT_SIZE = (300, 250)

MAX_HEAD_BYTES: Final = 64 * 1024
MAX_BODY_BYTES: Final = 16 * 1024 * 1024  # before and after gzip decoding
MAX_CACHED_ANSWERS: Final = 4096  # answer templates per (seat, imps); cleared when full
_GZIP_WBITS: Final = 16 + zlib.MAX_WBITS


@dataclass(frozen=True)
class Behaviour:
    """How one path answers."""

    delay_ms: float = 0.0
    no_bid: bool = False
    hang: bool = False


def seat_price(seat: str) -> float:
    """A stable CPM per seat between 0.50 and 2.49, so seats differ and one wins."""
    return round(0.5 + (zlib.crc32(seat.encode()) % 200) / 100, 2)


def _banner_size(banner: Mapping[str, Any]) -> tuple[int, int]:
    formats = banner.get("format")
    if isinstance(formats, list) and formats and isinstance(formats[0], dict):
        first = formats[0]
        return int(first.get("w") or DEFAULT_SIZE[0]), int(first.get("h") or DEFAULT_SIZE[1])
    return int(banner.get("w") or DEFAULT_SIZE[0]), int(banner.get("h") or DEFAULT_SIZE[1])


def _banner_imps(request: Mapping[str, Any]) -> list[tuple[int, Any, int, int]]:
    """(index, imp id, w, h) of every banner imp, the index counting every imp."""
    found = []
    for index, imp in enumerate(request.get("imp") or ()):
        banner = imp.get("banner") if isinstance(imp, dict) else None
        if isinstance(banner, dict):
            found.append((index, imp.get("id", ""), *_banner_size(banner)))
    return found


def _bid(seat: str, index: int, impid: Any, w: int, h: int) -> dict[str, Any]:
    crid = f"{seat}-{w}x{h}"
    return {
        "id": f"{seat}-{index}",
        "impid": impid,
        "price": round(seat_price(seat) + index * 0.05, 2),
        "crid": crid,
        "w": w,
        "h": h,
        "mtype": 1,
        "adm": ADM.format(seat=seat, crid=crid, w=w, h=h),
        "adomain": [f"{seat}.example"],
    }


def bid_response(seat: str, request: Mapping[str, Any]) -> dict[str, Any] | None:
    """The BidResponse for ``request``: one bid per banner imp; None when there is none to bid on."""
    bids = [_bid(seat, *imp) for imp in _banner_imps(request)]
    if not bids:
        return None
    return {"id": request.get("id", ""), "cur": "USD", "seatbid": [{"seat": seat, "bid": bids}]}


class AnswerTemplates:
    """:func:`bid_response` as bytes, built once per (seat, imps) and spliced with the request id."""

    def __init__(self) -> None:
        self._tails: dict[tuple[object, ...], bytes] = {}

    def render(self, seat: str, request: Mapping[str, Any]) -> bytes | None:
        """The JSON of ``bid_response(seat, request)``; None when there is no bid."""
        imps = _banner_imps(request)
        if not imps:
            return None
        try:
            key: tuple[object, ...] | None = (seat, *imps)
            tail = self._tails.get(key)
        except TypeError:  # an unhashable imp id: no template
            key = tail = None
        if tail is None:
            tail = orjson.dumps({"cur": "USD", "seatbid": [{"seat": seat, "bid": [_bid(seat, *imp) for imp in imps]}]})
            if key is not None:
                if len(self._tails) >= MAX_CACHED_ANSWERS:
                    self._tails.clear()
                self._tails[key] = tail
        return b'{"id":' + orjson.dumps(request.get("id", "")) + b"," + tail[1:]


# --- the HTTP server ----------------------------------------------------------------------------

_REASONS: Final = {200: b"OK", 204: b"No Content", 400: b"Bad Request", 404: b"Not Found",
                   413: b"Content Too Large", 501: b"Not Implemented"}  # fmt: skip


def _response(status: int, body: bytes = b"", content_type: bytes = b"text/plain", close: bool = False) -> bytes:
    head = b"HTTP/1.1 %d %s\r\n" % (status, _REASONS[status])
    if status != 204:
        head += b"Content-Type: %s\r\nContent-Length: %d\r\n" % (content_type, len(body))
    if close:
        head += b"Connection: close\r\n"
    return head + b"\r\n" + body


_OK_HEAD: Final = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
_READY: Final = _response(200, b"ok")
_NO_BID: Final = _response(204)
_NOT_FOUND: Final = _response(404, b"not found")
_BAD_JSON: Final = _response(400, b"bad JSON")
_NOT_OBJECT: Final = _response(400, b"not an object")


def _closing(answer: bytes) -> bytes:
    """``answer`` saying ``Connection: close`` (once)."""
    if b"\r\nConnection: close\r\n" in answer.partition(b"\r\n\r\n")[0] + b"\r\n":
        return answer
    status_line, _, rest = answer.partition(b"\r\n")
    return status_line + b"\r\nConnection: close\r\n" + rest


def _json_answer(body: bytes) -> bytes:
    return b"%s%d\r\n\r\n%s" % (_OK_HEAD, len(body), body)


class _Head:
    """What one request's head says that the mock acts on."""

    __slots__ = ("close", "gzip", "length", "method", "path")

    def __init__(self, method: bytes, path: bytes, length: int, close: bool, gzip: bool) -> None:
        self.method = method
        self.path = path
        self.length = length
        self.close = close
        self.gzip = gzip


class _BadRequest(Exception):
    def __init__(self, status: int, text: str) -> None:
        super().__init__(text)
        self.status = status


# A request line and header lines (RFC 9112 tokens for the method and names), checked in one C call.
_HEAD_RE: Final = re.compile(
    rb"([A-Z]+) (/[^ \r\n]*) HTTP/1\.([01])((?:\r\n[!#$%&'*+.^_`|~0-9A-Za-z-]+:[^\r\n]*)*)"
)


def _header(headers: bytes, name: bytes) -> bytes | None:
    """The value of header ``name`` (``b"\\r\\nname:"``, lower case) in lower-cased ``headers``; a
    repeated one raises _BadRequest."""
    start = headers.find(name)
    if start < 0:
        return None
    if headers.find(name, start + 1) >= 0:
        raise _BadRequest(400, f"repeated {name[2:-1].decode()} header")
    start += len(name)
    end = headers.find(b"\r\n", start)
    return headers[start : end if end >= 0 else len(headers)].strip()


def parse_head(head: bytes) -> _Head:
    """A request line and headers (without the blank line); raises _BadRequest."""
    match = _HEAD_RE.fullmatch(head)
    if match is None:
        raise _BadRequest(400, "bad request line or header line")
    method, target, minor, headers = match.groups()
    close = minor == b"0"
    length = 0
    gzip = False
    if headers:
        headers = headers.lower()
        if b"\r\ntransfer-encoding:" in headers:
            raise _BadRequest(501, "Transfer-Encoding is not supported (hbserver's bidder client never sends it)")
        value = _header(headers, b"\r\ncontent-length:")
        if value is not None:
            if not value.isdigit():
                raise _BadRequest(400, "bad Content-Length")
            length = int(value)
        value = _header(headers, b"\r\nconnection:")
        if value is not None:
            close = b"close" in value or (close and b"keep-alive" not in value)
        value = _header(headers, b"\r\ncontent-encoding:")
        if value is not None and value != b"identity":
            if value != b"gzip":
                raise _BadRequest(400, "unsupported Content-Encoding")
            gzip = True
    if length > MAX_BODY_BYTES:
        raise _BadRequest(413, "body too large")
    return _Head(method, target.partition(b"?")[0], length, close, gzip)


def _gunzip(body: bytes) -> bytes | None:
    decompressor = zlib.decompressobj(_GZIP_WBITS)
    try:
        data = decompressor.decompress(body, MAX_BODY_BYTES + 1)
    except zlib.error:
        return None
    if len(data) > MAX_BODY_BYTES or not decompressor.eof:
        return None
    return data


class MockBidders:
    """The answers of every path, shared by the connections of one process."""

    def __init__(self, behaviours: Mapping[str, Behaviour]) -> None:
        self.behaviours = {name.encode(): behaviour for name, behaviour in behaviours.items()}
        self.templates = AnswerTemplates()
        self.connections: set[BidderProtocol] = set()

    def answer(self, seat: str, body: bytes) -> bytes:
        """The whole HTTP answer of POST /<seat> with ``body`` (already decoded)."""
        try:
            bid_request = orjson.loads(body)
        except orjson.JSONDecodeError:
            return _BAD_JSON
        if not isinstance(bid_request, dict):
            return _NOT_OBJECT
        json_body = self.templates.render(seat, bid_request)
        return _NO_BID if json_body is None else _json_answer(json_body)


_DEFAULT = Behaviour()


class BidderProtocol(asyncio.Protocol):
    """One client connection: requests parsed as they arrive, answers written in request order."""

    def __init__(self, mock: MockBidders) -> None:
        self.mock = mock
        self.loop = asyncio.get_running_loop()
        self.transport: asyncio.Transport | None = None
        self.pending = bytearray()  # received, not parsed yet: a partial head, or a partial body
        self.needed = 0  # bytes ``pending`` must hold before parsing can progress
        self.head: _Head | None = None  # of the request whose body is still arriving
        self.slots: list[bytes | None] = []  # answers in request order; None = not ready yet
        self.closing = False  # a bad request or Connection: close was seen: parse nothing more
        self.close_after = -1  # the slot after whose answer the connection closes
        self.timers: dict[int, asyncio.TimerHandle] = {}  # delayed answers by slot number
        self.base = 0  # the number of slots already written and dropped

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.mock.connections.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.mock.connections.discard(self)
        for timer in self.timers.values():
            timer.cancel()
        self.timers.clear()
        self.transport = None

    def data_received(self, data: bytes) -> None:
        """Serve every complete request in what arrived; keep the rest (a partial head or body)."""
        if self.closing:
            return
        pending = self.pending
        if pending:
            pending += data
            if len(pending) < self.needed:  # a body still arriving: no need to look at it yet
                return
            data = bytes(pending)
            pending.clear()
        pos, size = 0, len(data)
        while not self.closing:
            head = self.head
            if head is None:
                end = data.find(b"\r\n\r\n", pos)
                if end < 0:
                    if size - pos > MAX_HEAD_BYTES:
                        self._refuse(400)
                    break
                try:
                    if end - pos > MAX_HEAD_BYTES:
                        raise _BadRequest(400, "head too large")
                    head = parse_head(data[pos:end])
                except _BadRequest as exc:
                    self._refuse(exc.status)
                    break
                pos = end + 4
            if size - pos < head.length:
                self.head = head
                break
            self.head = None
            body = data[pos : pos + head.length]
            pos += head.length
            self._serve(head, body)
        if pos < size and not self.closing:
            pending += data[pos:] if pos else data
            self.needed = self.head.length if self.head is not None else 0

    def _serve(self, head: _Head, body: bytes) -> None:
        """Queue the answer to one complete request (maybe later, per the path's behaviour)."""
        path = head.path
        if head.close:
            self.closing = True
        if path == b"/ready":
            self._queue(_READY)
            return
        seat = path[1:]
        if head.method != b"POST" or not seat or b"/" in seat:
            self._queue(_NOT_FOUND)
            return
        behaviour = self.mock.behaviours.get(seat, _DEFAULT)
        if head.gzip:
            decoded = _gunzip(body)
            if decoded is None:
                self._queue(_response(400, b"bad gzip body"))
                return
            body = decoded
        if behaviour.hang:
            self._queue(None)  # never answered: the answers queued after it wait for ever too
            return
        if behaviour.no_bid:
            answer = _NO_BID
        else:
            answer = self.mock.answer(seat.decode("latin-1"), body)
        if behaviour.delay_ms:
            index = self._queue(None)
            self.timers[index] = self.loop.call_later(behaviour.delay_ms / 1000, self._fill, index, answer)
        else:
            self._queue(answer)

    def _queue(self, answer: bytes | None) -> int:
        """Put an answer (None: not ready) in the next slot; write what is ready. The slot's number."""
        slots = self.slots
        index = self.base + len(slots)
        if not slots and answer is not None and not self.closing and self.transport is not None:
            self.base = index + 1  # the usual case: nothing waiting before it, written at once
            self.transport.write(answer)
            return index
        if self.closing and self.close_after < 0:
            self.close_after = index
        if answer is not None and index == self.close_after:
            answer = _closing(answer)
        self.slots.append(answer)
        if answer is not None and len(self.slots) == 1:
            self._flush()
        return index

    def _fill(self, index: int, answer: bytes) -> None:
        self.timers.pop(index, None)
        if self.transport is None:
            return
        if index == self.close_after:
            answer = _closing(answer)
        self.slots[index - self.base] = answer
        self._flush()

    def _flush(self) -> None:
        """Write the answers that are ready, in order, up to the first that is not."""
        slots = self.slots
        transport = self.transport
        ready = 0
        while ready < len(slots) and slots[ready] is not None:
            ready += 1
        if not ready or transport is None:
            return
        out = slots[0] if ready == 1 else b"".join(slots[:ready])  # type: ignore[arg-type]
        del slots[:ready]
        self.base += ready
        transport.write(out)  # type: ignore[arg-type]
        if 0 <= self.close_after < self.base:
            transport.close()
            self.transport = None

    def _refuse(self, status: int) -> None:
        """Not HTTP we can read: answer ``status`` after the answers due, then close."""
        self.closing = True
        self.pending.clear()
        text = {400: b"bad request", 413: b"body too large", 501: b"not implemented"}[status]
        self._queue(_response(status, text, close=True))

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()


# --- the same answers on aiohttp (for tests that want a real aiohttp server) ----------------------

Handler = Callable[["web.BaseRequest"], Awaitable["web.StreamResponse"]]


def make_handler(behaviours: Mapping[str, Behaviour]) -> Handler:
    """A request handler for aiohttp's low-level server answering as the mock does."""
    from aiohttp import web

    default = Behaviour()

    async def handle(request: web.BaseRequest) -> web.StreamResponse:
        if request.path == "/ready":
            return web.Response(text="ok")
        seat = request.path[1:]
        if request.method != "POST" or not seat or "/" in seat:
            return web.Response(status=404)
        body = await request.read()
        behaviour = behaviours.get(seat, default)
        if behaviour.hang:
            await asyncio.get_running_loop().create_future()  # cancelled when the client disconnects
        if behaviour.delay_ms:
            await asyncio.sleep(behaviour.delay_ms / 1000)
        if behaviour.no_bid:
            return web.Response(status=204)
        try:
            bid_request = orjson.loads(body)
        except orjson.JSONDecodeError:
            return web.Response(status=400, text="bad JSON")
        if not isinstance(bid_request, dict):
            return web.Response(status=400, text="not an object")
        answer = bid_response(seat, bid_request)
        if answer is None:
            return web.Response(status=204)
        return web.Response(body=orjson.dumps(answer), content_type="application/json")

    return handle


# --- the process --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Options:
    port: int
    hosts: tuple[str, ...]
    behaviours: Mapping[str, Behaviour]


def parse_args(argv: Sequence[str]) -> Options:
    """The addresses to listen on and the behaviour of every named path."""
    parser = argparse.ArgumentParser(prog="bidder.py", description="mock OpenRTB bidders")
    parser.add_argument("port", type=int)
    parser.add_argument("--host", action="append", default=[], metavar="ADDRESS")
    parser.add_argument("--delay", action="append", default=[], metavar="NAME=MS")
    parser.add_argument("--no-bid", action="append", default=[], metavar="NAME")
    parser.add_argument("--hang", action="append", default=[], metavar="NAME")
    args = parser.parse_args(argv)
    delays: dict[str, float] = {}
    for item in args.delay:
        name, _, ms = item.partition("=")
        try:
            delays[name] = float(ms)
        except ValueError:
            parser.error(f"--delay {item!r}: expected NAME=MS")
    names = set(delays) | set(args.no_bid) | set(args.hang)
    behaviours = {name: Behaviour(delays.get(name, 0.0), name in args.no_bid, name in args.hang) for name in names}
    return Options(args.port, tuple(args.host or ["127.0.0.1"]), behaviours)


async def serve(options: Options) -> None:
    """Serve until SIGTERM or SIGINT."""
    loop = asyncio.get_running_loop()
    mock = MockBidders(options.behaviours)
    servers = [
        await loop.create_server(lambda: BidderProtocol(mock), host, options.port, backlog=1024, reuse_address=True)
        for host in options.hosts
    ]
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        for server in servers:
            server.close()
        for connection in list(mock.connections):
            connection.abort()  # hanging requests too
        for server in servers:
            await server.wait_closed()


def main(argv: Sequence[str] | None = None) -> int:
    uvloop.run(serve(parse_args(sys.argv[1:] if argv is None else argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
