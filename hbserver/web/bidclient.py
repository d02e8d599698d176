"""A lean pooled HTTP/1.1 client for the bidder fan-out.

``aiohttp.ClientSession`` costs well over 100 µs of CPU per keep-alive POST; this client costs a
fraction of that by doing only what the fan-out needs: asyncio protocols on the loop's own
transports (uvloop in production), aiohttp's C response parser (llhttp), one pre-encoded request
head per call, one future per request and one timer for all the deadlines, no cookies, no
redirects, no response headers for the caller.

Every request has a deadline (``loop.time()`` seconds): waiting for a pooled connection,
connecting, the TLS handshake and the answer all end there with :class:`TimeoutError`, and the
connection in use is closed. Everything received is bounded: the head (64 KiB), the body before
and after decoding (``max_response_bytes``) and the framing around it (chunked bodies).
"""

from __future__ import annotations

import asyncio
import base64
import collections
import heapq
import itertools
import re
import ssl
import zlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final, cast
from urllib.parse import quote, unquote, urlsplit

from aiohttp.http_parser import HttpResponseParser

from hbserver import SERVER_HEADER_VALUE

if TYPE_CHECKING:
    from aiohttp.base_protocol import BaseProtocol
    from aiohttp.http_parser import RawResponseMessage
    from aiohttp.streams import StreamReader

__all__ = ["BidderClient", "BidderClientError", "ResponseTooLarge"]

MAX_HEAD_BYTES: Final = 64 * 1024  # status line and headers of one response
MAX_INFORMATIONAL: Final = 8  # 1xx answers tolerated before the final one
MAX_CACHED_URLS: Final = 512
DEFAULT_IDLE_TIMEOUT: Final = 30.0
DEADLINE_RESOLUTION: Final = 0.001

_IDLE: Final = 0
_BUSY: Final = 1
_CLOSED: Final = 2

# Framing and connection management are ours: a caller's values for these are dropped.
_OURS: Final = frozenset(
    {"host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te", "expect",
     "proxy-connection"}
)  # fmt: skip
_BODY_METHODS: Final = frozenset({"POST", "PUT", "PATCH"})
_KNOWN_METHODS: Final = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
_METHOD_RE: Final = re.compile(r"[A-Z]{1,20}")
_HOST_RE: Final = re.compile(r"[A-Za-z0-9._:%-]+")
_PATH_SAFE: Final = "/:@!$&'()*+,;=%~"
_QUERY_SAFE: Final = _PATH_SAFE + "?[]"
_GZIP_WBITS: Final = 16 + zlib.MAX_WBITS


class BidderClientError(OSError):
    """The bidder could not be reached or did not answer with valid HTTP."""


class ResponseTooLarge(ValueError):
    """The answer (raw or decoded) is larger than ``max_response_bytes``."""


class _NoAnswer(BidderClientError):
    """The server closed the connection before sending a single byte of the answer."""


class _Target:
    """One parsed URL: its pool key and the request line and headers that never change."""

    __slots__ = ("host", "key", "port", "tail", "tls")

    def __init__(self, host: str, port: int, tls: bool, tail: str) -> None:
        self.host = host
        self.port = port
        self.tls = tls
        self.key = ("https" if tls else "http", host, port)
        self.tail = tail  # " /path?query HTTP/1.1\r\nHost: ...\r\n" (+ Authorization)


class _Pool:
    """Connections to one (scheme, host, port): idle ones (oldest first) and who waits for one."""

    __slots__ = ("host", "idle", "key", "port", "tls", "total", "waiters")

    def __init__(self, target: _Target) -> None:
        self.key = target.key
        self.host = target.host
        self.port = target.port
        self.tls = target.tls
        self.idle: list[_Connection] = []
        # A waiter gets a connection handed over, or None: "a slot is yours, open one".
        self.waiters: collections.deque[asyncio.Future[_Connection | None]] = collections.deque()
        self.total = 0  # open, connecting and reserved connections


Answer = tuple[int, bytes, str | None]  # status, raw body, content coding


class _Connection(asyncio.Protocol):
    """One keep-alive connection: one request at a time, its answer parsed by llhttp."""

    __slots__ = (
        "_reading_paused", "client", "connected", "idle_since", "informational", "lost", "message", "parser",
        "payload", "pool", "raw", "served", "state", "transport", "waiter",
    )  # fmt: skip

    def __init__(self, client: BidderClient, pool: _Pool, loop: asyncio.AbstractEventLoop) -> None:
        self.client = client
        self.pool = pool
        self.transport: asyncio.Transport | None = None
        self.connected = False
        self._reading_paused = False  # read by aiohttp's StreamReader (3.10)
        self.state = _BUSY
        self.parser = HttpResponseParser(
            cast("BaseProtocol", self), loop, client.max_response_bytes, max_line_size=8190, max_headers=128,
            max_field_size=8190, read_until_eof=True, auto_decompress=False,
        )  # fmt: skip
        self.waiter: asyncio.Future[Answer] | None = None
        self.message: RawResponseMessage | None = None
        self.payload: StreamReader | None = None
        self.raw = 0  # bytes received for the current answer
        self.informational = 0
        self.served = 0
        self.idle_since = 0.0
        self.lost: asyncio.Future[None] = loop.create_future()

    # --- asyncio.Protocol -------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Keep the transport; one made after the connection was given up is dropped."""
        self.transport = cast(asyncio.Transport, transport)
        self.connected = True
        if self.state == _CLOSED:
            self.transport.abort()

    def data_received(self, data: bytes) -> None:
        """Parse what arrived; finish the request when its answer is complete."""
        if self.waiter is None:  # nothing was asked: a server talking out of turn is not trusted again
            self.close(abort=True)
            return
        self.raw += len(data)
        try:
            messages, upgraded, _ = self.parser.feed_data(data)
        except Exception as exc:  # aiohttp's BadHttpMessage and friends
            self._fail(BidderClientError(f"invalid HTTP response: {exc}"))
            return
        if messages:
            for message, payload in messages:
                if message.code < 200:
                    self.informational += 1
                    if message.code == 101 or self.informational > MAX_INFORMATIONAL:
                        self._fail(BidderClientError(f"unexpected informational response {message.code}"))
                        return
                    continue
                if self.message is not None:
                    self._fail(BidderClientError("more than one response to one request"))
                    return
                self.message = message
                self.payload = payload
                length = message.headers.get("Content-Length")
                if length is not None and length.isdigit() and int(length) > self.client.max_response_bytes:
                    self._fail(ResponseTooLarge(f"Content-Length {length} is over {self.client.max_response_bytes}"))
                    return
        if upgraded:
            self._fail(BidderClientError("the server switched protocols"))
            return
        payload = self.payload
        if payload is None:
            if self.raw > MAX_HEAD_BYTES:
                self._fail(BidderClientError(f"response head larger than {MAX_HEAD_BYTES} bytes"))
            return
        limit = self.client.max_response_bytes
        if payload.total_bytes > limit or self.raw > 2 * limit + MAX_HEAD_BYTES:
            self._fail(ResponseTooLarge(f"response body over {limit} bytes"))
        elif payload.is_eof():
            self._complete()

    def connection_lost(self, exc: Exception | None) -> None:
        """End a close-delimited answer, or fail the request the connection was serving."""
        self.connected = False
        if not self.lost.done():
            self.lost.set_result(None)
        if self.waiter is None or self.state != _BUSY:
            self.close(abort=True)
            return
        reason = f" ({exc})" if exc is not None else ""
        if self.message is not None:
            try:
                self.parser.feed_eof()
            except Exception as error:
                self._fail(BidderClientError(f"connection closed mid-response: {error}"))
                return
            if self.payload is not None and self.payload.is_eof():
                self._complete()
                return
        if self.raw == 0:
            self._fail(_NoAnswer(f"the server closed the connection without answering{reason}"))
        else:
            self._fail(BidderClientError(f"the server closed the connection mid-response{reason}"))

    # StreamReader flow control: bodies are bounded by the byte counts above, reading never pauses.
    def pause_reading(self) -> None:
        """Never pause (see :meth:`data_received` for the bounds)."""

    def resume_reading(self, resume_parser: bool = True) -> None:
        """Never paused."""

    # --- requests -----------------------------------------------------------------------------

    def send(self, data: bytes, loop: asyncio.AbstractEventLoop) -> asyncio.Future[Answer]:
        """Write one request; the future gets its answer or the error (the client watches the deadline)."""
        waiter: asyncio.Future[Answer] = loop.create_future()
        transport = self.transport
        if self.state != _BUSY or transport is None or transport.is_closing():
            self.close(abort=True)
            waiter.set_exception(_NoAnswer("the connection was closed before the request"))
            return waiter
        self.waiter = waiter
        self.raw = 0
        self.informational = 0
        transport.write(data)
        return waiter

    def abandon(self) -> None:
        """The caller stopped waiting: an answer still due makes the connection unusable."""
        if self.waiter is not None:
            self.waiter = None
            self.close(abort=True)

    def close(self, abort: bool = False) -> None:
        """Close once and give the pool slot back."""
        if self.state == _CLOSED:
            return
        was_idle = self.state == _IDLE
        self.state = _CLOSED
        pool = self.pool
        if was_idle:
            try:
                pool.idle.remove(self)
            except ValueError:
                pass
        if self.transport is not None:
            if abort:
                self.transport.abort()
            else:
                self.transport.close()
        self.client._forget(self)

    def _complete(self) -> None:
        message, payload = self.message, self.payload
        assert message is not None and payload is not None
        self.message = self.payload = None
        body = payload.read_nowait()
        waiter = self.waiter
        self.waiter = None
        self.served += 1
        if message.should_close or not self.connected:
            self.close()
        else:
            self.client._release(self)
        if waiter is not None and not waiter.done():
            waiter.set_result((message.code, body, message.compression))

    def _fail(self, exc: BaseException) -> None:
        waiter = self.waiter
        self.waiter = None
        self.message = self.payload = None
        self.close(abort=True)
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc)

    def expire(self) -> None:
        """The deadline passed with the answer still due."""
        self._fail(TimeoutError("the server did not answer before the deadline"))


def _expire(waiter: asyncio.Future[_Connection | None]) -> None:
    if not waiter.done():
        waiter.set_exception(TimeoutError("no connection became free before the deadline"))


class BidderClient:
    """Keep-alive connection pools per (scheme, host, port) for the bidder calls of one event loop."""

    def __init__(
        self,
        *,
        max_connections_per_host: int = 128,
        max_response_bytes: int = 2 * 1024 * 1024,
        user_agent: str = SERVER_HEADER_VALUE,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        if max_connections_per_host < 1:
            raise ValueError("max_connections_per_host must be at least 1")
        if not 0 < max_response_bytes < 2**30:
            raise ValueError("max_response_bytes must be between 1 byte and 1 GiB")
        if "\r" in user_agent or "\n" in user_agent:
            raise ValueError("user_agent must be one line")
        self.max_connections_per_host = max_connections_per_host
        self.max_response_bytes = max_response_bytes
        self.idle_timeout = idle_timeout
        self._ua_line = f"User-Agent: {user_agent}\r\n" if user_agent else ""
        self._ssl = ssl_context
        self._loop: asyncio.AbstractEventLoop | None = None
        self._targets: dict[str, _Target] = {}
        self._pools: dict[tuple[str, str, int], _Pool] = {}
        self._connections: set[_Connection] = set()
        self._sweeper: asyncio.TimerHandle | None = None
        # Deadlines of requests in flight, one timer for the earliest: a timer per request costs more
        # than the rest of the request. Entries of finished requests are skipped when they come up.
        self._deadlines: list[tuple[float, int, _Connection, asyncio.Future[Answer]]] = []
        self._deadline_timer: asyncio.TimerHandle | None = None
        self._deadline_at = 0.0
        self._sequence = itertools.count()
        self._closed = False

    async def request(
        self, method: str, url: str, body: bytes | None, headers: Mapping[str, str], deadline: float
    ) -> tuple[int, bytes]:
        """Send one request and return (status, decoded body).

        Raises TimeoutError at ``deadline`` (``loop.time()``), ResponseTooLarge, BidderClientError
        for connection and protocol errors, ValueError for a URL, method or header it cannot send.
        """
        if self._closed:
            raise BidderClientError("the bidder client is closed")
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        target = self._targets.get(url)
        if target is None:
            target = self._parse(url)
        data = self._encode(method, target, body, headers)
        pool = self._pools.get(target.key)
        if pool is None:
            pool = self._pools[target.key] = _Pool(target)
        fresh = False
        while True:
            if loop.time() >= deadline:
                raise TimeoutError("no time left before the deadline")
            connection = self._take_idle(pool, loop) if not fresh else None
            if connection is None:
                connection = await self._acquire(pool, deadline, loop)
            reused = connection.served > 0
            answer = connection.send(data, loop)
            self._watch(deadline, connection, answer, loop)
            try:
                status, raw, coding = await answer
            except _NoAnswer:
                if reused and not fresh:
                    fresh = True  # a keep-alive connection the server had already closed: once more, on a new one
                    continue
                raise
            except BaseException:
                connection.abandon()
                raise
            if coding is not None:
                raw = self._decode(raw, coding)
            return status, raw

    async def close(self) -> None:
        """Close every connection and fail every request still waiting or in flight."""
        self._closed = True
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        if self._deadline_timer is not None:
            self._deadline_timer.cancel()
            self._deadline_timer = None
        self._deadlines.clear()
        for pool in self._pools.values():
            while pool.waiters:
                waiter = pool.waiters.popleft()
                if not waiter.done():
                    waiter.set_exception(BidderClientError("the bidder client is closed"))
        connections = list(self._connections)
        for connection in connections:
            waiter = connection.waiter
            connection.waiter = None
            connection.close(abort=True)
            if waiter is not None and not waiter.done():
                waiter.set_exception(BidderClientError("the bidder client is closed"))
        lost = [c.lost for c in connections if c.transport is not None and not c.lost.done()]
        if lost:
            await asyncio.wait(lost, timeout=1.0)
        self._pools.clear()
        self._targets.clear()

    # --- deadlines ----------------------------------------------------------------------------

    def _watch(
        self, deadline: float, connection: _Connection, answer: asyncio.Future[Answer], loop: asyncio.AbstractEventLoop
    ) -> None:
        heap = self._deadlines
        heapq.heappush(heap, (deadline, next(self._sequence), connection, answer))
        timer = self._deadline_timer
        if timer is None or deadline < self._deadline_at:
            if timer is not None:
                timer.cancel()
            self._deadline_at = deadline
            self._deadline_timer = loop.call_at(deadline, self._expire_due)
        elif len(heap) > 2 * len(self._connections) + 1024:  # mostly finished requests: keep the live ones
            self._deadlines = [entry for entry in heap if entry[2].waiter is entry[3]]
            heapq.heapify(self._deadlines)

    def _expire_due(self) -> None:
        self._deadline_timer = None
        loop = self._loop
        if loop is None:
            return
        heap = self._deadlines
        now = loop.time() + DEADLINE_RESOLUTION  # timers fire to the millisecond, maybe a little early
        while heap and heap[0][0] <= now:
            _, _, connection, answer = heapq.heappop(heap)
            if connection.waiter is answer:
                connection.expire()
        if heap:
            self._deadline_at = heap[0][0]
            self._deadline_timer = loop.call_at(self._deadline_at, self._expire_due)

    # --- pool ---------------------------------------------------------------------------------

    def _take_idle(self, pool: _Pool, loop: asyncio.AbstractEventLoop) -> _Connection | None:
        idle = pool.idle
        if not idle:
            return None
        oldest = loop.time() - self.idle_timeout
        while idle:
            connection = idle.pop()  # the most recently used is the most likely to be alive
            connection.state = _BUSY
            transport = connection.transport
            if connection.idle_since > oldest and transport is not None and not transport.is_closing():
                return connection
            connection.close()
        return None

    async def _acquire(self, pool: _Pool, deadline: float, loop: asyncio.AbstractEventLoop) -> _Connection:
        if pool.total < self.max_connections_per_host:
            pool.total += 1
            return await self._open(pool, deadline, loop)
        waiter: asyncio.Future[_Connection | None] = loop.create_future()
        pool.waiters.append(waiter)
        timer = loop.call_at(deadline, _expire, waiter)
        try:
            got = await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                self._hand_back(pool, waiter.result())  # handed over as this task was cancelled
            else:
                try:
                    pool.waiters.remove(waiter)
                except ValueError:
                    pass
            raise
        finally:
            timer.cancel()
        if got is None:
            return await self._open(pool, deadline, loop)
        return got

    async def _open(self, pool: _Pool, deadline: float, loop: asyncio.AbstractEventLoop) -> _Connection:
        """Connect within the slot already counted in ``pool.total``."""
        connection = _Connection(self, pool, loop)
        self._connections.add(connection)
        context: ssl.SSLContext | None = None
        if pool.tls:
            context = self._ssl
            if context is None:
                context = self._ssl = ssl.create_default_context()
        try:
            async with asyncio.timeout_at(deadline):
                await loop.create_connection(
                    lambda: connection, pool.host, pool.port, ssl=context,
                    server_hostname=pool.host if context is not None else None,
                )  # fmt: skip
        except TimeoutError:
            connection.close(abort=True)
            raise
        except OSError as exc:
            connection.close(abort=True)
            raise BidderClientError(f"cannot connect to {pool.host}:{pool.port}: {exc}") from exc
        except BaseException:
            connection.close(abort=True)
            raise
        if connection.state == _CLOSED:
            raise BidderClientError("the bidder client is closed")
        return connection

    def _release(self, connection: _Connection) -> None:
        """A connection that answered in full: to the next waiter, or idle."""
        pool = connection.pool
        if self._closed:
            connection.close()
            return
        waiters = pool.waiters
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(connection)
                return
        loop = cast(asyncio.AbstractEventLoop, self._loop)
        connection.state = _IDLE
        connection.idle_since = loop.time()
        pool.idle.append(connection)
        if self._sweeper is None:
            self._sweeper = loop.call_later(self._sweep_interval(), self._sweep)

    def _hand_back(self, pool: _Pool, got: _Connection | None) -> None:
        if got is None:
            self._slot_freed(pool)
        else:
            self._release(got)

    def _forget(self, connection: _Connection) -> None:
        """A connection is closed: its slot goes to a waiter, or back to the pool."""
        self._connections.discard(connection)
        self._slot_freed(connection.pool)

    def _slot_freed(self, pool: _Pool) -> None:
        if not self._closed:
            waiters = pool.waiters
            while waiters:
                waiter = waiters.popleft()
                if not waiter.done():
                    waiter.set_result(None)
                    return
        pool.total -= 1

    def _sweep_interval(self) -> float:
        return min(max(self.idle_timeout / 4, 0.01), 5.0)

    def _sweep(self) -> None:
        """Close connections idle for longer than ``idle_timeout``; forget empty pools."""
        self._sweeper = None
        loop = self._loop
        if self._closed or loop is None:
            return
        oldest = loop.time() - self.idle_timeout
        for key, pool in list(self._pools.items()):
            idle = pool.idle
            while idle and idle[0].idle_since <= oldest:
                idle[0].close()
            if pool.total == 0 and not pool.waiters:
                del self._pools[key]
        if any(pool.idle for pool in self._pools.values()):
            self._sweeper = loop.call_later(self._sweep_interval(), self._sweep)

    # --- encoding -----------------------------------------------------------------------------

    def _parse(self, url: str) -> _Target:
        """Parse a URL once: the pool key and the fixed part of the request head."""
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            raise ValueError(f"unsupported URL scheme in {url!r}")
        host = parts.hostname
        if not host:
            raise ValueError(f"no host in {url!r}")
        if not host.isascii():
            host = host.encode("idna").decode("ascii")
        if _HOST_RE.fullmatch(host) is None:
            raise ValueError(f"invalid host in {url!r}")
        tls = scheme == "https"
        default_port = 443 if tls else 80
        port = parts.port or default_port
        path = quote(parts.path or "/", safe=_PATH_SAFE)
        if parts.query:
            path = f"{path}?{quote(parts.query, safe=_QUERY_SAFE)}"
        authority = f"[{host}]" if ":" in host else host
        if port != default_port:
            authority = f"{authority}:{port}"
        tail = f" {path} HTTP/1.1\r\nHost: {authority}\r\n"
        if parts.username is not None:
            credentials = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
            tail += f"Authorization: Basic {base64.b64encode(credentials).decode('ascii')}\r\n"
        target = _Target(host, port, tls, tail)
        if len(self._targets) >= MAX_CACHED_URLS:
            del self._targets[next(iter(self._targets))]
        self._targets[url] = target
        return target

    def _encode(self, method: str, target: _Target, body: bytes | None, headers: Mapping[str, str]) -> bytes:
        """The request bytes: request line, our headers, the caller's, the body."""
        if method not in _KNOWN_METHODS and _METHOD_RE.fullmatch(method) is None:
            raise ValueError(f"invalid HTTP method {method!r}")
        lines = [method, target.tail]
        agent = accept = False
        count = 0
        for name, value in headers.items():
            lower = name.lower()
            if lower in _OURS:
                continue
            if lower == "user-agent":
                agent = True
            elif lower == "accept-encoding":
                accept = True
            lines.append(f"{name}: {value}\r\n")
            count += 1
        if count:
            block = "".join(lines[2:])
            if block.count("\n") != count or block.count("\r") != count:
                raise ValueError("a header name or value contains a line break")
        if not agent and self._ua_line:
            lines.append(self._ua_line)
        if not accept:
            lines.append("Accept-Encoding: gzip\r\n")
        if body is not None:
            lines.append(f"Content-Length: {len(body)}\r\nConnection: keep-alive\r\n\r\n")
            return "".join(lines).encode() + body
        if method in _BODY_METHODS:
            lines.append("Content-Length: 0\r\n")
        lines.append("Connection: keep-alive\r\n\r\n")
        return "".join(lines).encode()

    def _decode(self, data: bytes, coding: str) -> bytes:
        """Decode a gzip or deflate body, never producing more than ``max_response_bytes``."""
        if coding == "gzip":
            wbits = _GZIP_WBITS
        elif coding == "deflate":  # zlib-wrapped per the RFC, raw deflate from some servers
            zlib_header = len(data) >= 2 and data[0] & 0x0F == 8 and ((data[0] << 8) | data[1]) % 31 == 0
            wbits = zlib.MAX_WBITS if zlib_header else -zlib.MAX_WBITS
        else:
            raise BidderClientError(f"unsupported Content-Encoding {coding!r}")
        limit = self.max_response_bytes
        out: list[bytes] = []
        size = 0
        while data:
            decompressor = zlib.decompressobj(wbits)
            try:
                chunk = decompressor.decompress(data, limit - size + 1)
            except zlib.error as exc:
                raise BidderClientError(f"invalid {coding} body: {exc}") from exc
            size += len(chunk)
            if size > limit:
                raise ResponseTooLarge(f"decoded response body over {limit} bytes")
            if not decompressor.eof:
                raise BidderClientError(f"truncated {coding} body")
            out.append(chunk)
            data = decompressor.unused_data
            if wbits != _GZIP_WBITS or not data.startswith(b"\x1f\x8b"):
                break  # another gzip member follows, or only trailing bytes (ignored)
        return out[0] if len(out) == 1 else b"".join(out)
