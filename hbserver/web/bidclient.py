"""A lean pooled HTTP/1.1 client for the bidder fan-out.

``aiohttp.ClientSession`` costs well over 100 µs of CPU per keep-alive POST; this client costs a
fraction of that by doing only what the fan-out needs: asyncio protocols on the loop's own
transports (uvloop in production), llhttp through httptools (aiohttp's own llhttp parser builds a
StreamReader, a CIMultiDict and a message tuple per answer: about three times the cost), request
heads encoded once per (method, URL, headers) seen lately, one future per request and one timer for
all the deadlines, no cookies, no redirects. Of the response headers only the ``X-`` ones reach the
caller (``PendingRequest.response_headers``): the bidder-specific ones adapters read, such as
``X-Smt-Adtype`` (smaato) or ``X-NBR`` (amx); framing and coding headers are the client's own.

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
from types import MappingProxyType
from typing import Final, cast
from urllib.parse import quote, unquote, urlsplit

import httptools

from hbserver import SERVER_HEADER_VALUE
from hbserver.numbers import UINT64, int_or

__all__ = ["BidderClient", "BidderClientError", "PendingRequest", "ResponseTooLarge"]

_X_PREFIXES: Final = frozenset({b"x-", b"X-"})
MAX_HEAD_BYTES: Final = 64 * 1024  # status line and headers of one response
MAX_HEADERS: Final = 128  # header fields of one response
MAX_INFORMATIONAL: Final = 8  # 1xx answers tolerated before the final one
MAX_CACHED_URLS: Final = 512
MAX_CACHED_HEADS: Final = 512
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
_TOKEN_RE: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
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


class _Failure:
    """An error a request's future or task ends with: set as its result, raised by whoever takes it.

    An exception set on a future (or ending a task) stays there, and once raised its traceback
    holds the frames it went through; those frames hold the future (a local, ``PendingRequest
    .answer``): a reference cycle, and with it whatever the frames hold — a cut answer's 2 MiB of
    body or decoded bomb. With CPython's collector at a first-generation threshold of 100,000
    (``hbserver.server.tune_gc``) that garbage waits, often promoted to an older generation that is
    collected far more rarely; a worker grew by ~2 MB per cut answer. So an error travels as a
    result instead, without a traceback, and :meth:`take` hands it over once: the exception then
    raised is held by no future, and when the caller drops it, it is freed at once.
    """

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error: BaseException | None = error.with_traceback(None)

    def take(self) -> BaseException:
        """The error, to raise; the failure keeps no reference to it."""
        error = self.error
        self.error = None
        return error if error is not None else BidderClientError("the request's error was already taken")


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
        self.waiters: collections.deque[asyncio.Future[_Connection | _Failure | None]] = collections.deque()
        self.total = 0  # open, connecting and reserved connections


class PendingRequest:
    """A request :meth:`BidderClient.start` sent (or is sending in a task): what finishing it needs."""

    __slots__ = (
        "answer", "body", "connection", "deadline", "headers", "method", "response_headers", "reused", "url", "wait",
    )

    def __init__(
        self,
        answer: asyncio.Future[_Answer | _Failure] | asyncio.Task[tuple[int, bytes, float] | _Failure] | None,
        connection: _Connection | None,
        method: str,
        url: str,
        body: bytes | None,
        headers: Mapping[str, str],
        deadline: float,
    ) -> None:
        self.answer = answer
        self.connection = connection  # None: a task sends it (no idle connection was at hand)
        self.method = method
        self.url = url
        self.body = body
        self.headers = headers
        self.deadline = deadline
        # For the adapter connection metrics: whether a kept-alive connection carried the request
        # (None until it has one) and the seconds spent waiting for that connection.
        self.reused: bool | None = None
        self.wait = 0.0
        # The answer's X- headers (names in lower case, repeated ones joined by ", "), once finished.
        self.response_headers: Mapping[str, str] = _NO_HEADERS


# status, raw body, content coding, loop time when complete, X- headers
_Answer = tuple[int, bytes, bytes | None, float, Mapping[str, str]]
_NO_HEADERS: Mapping[str, str] = MappingProxyType({})


class _Connection(asyncio.Protocol):
    """One keep-alive connection: one request at a time, its answer parsed by llhttp (httptools).

    The parser calls the ``on_*`` methods while :meth:`data_received` feeds it; they only record,
    and every bound is checked once the bytes at hand are parsed.
    """

    __slots__ = (
        "body", "chunked", "client", "coding", "connected", "done", "error", "extra", "head", "headers",
        "idle_since", "interim", "keep_alive", "length", "loop", "lost", "parser", "pool", "raw", "served", "size",
        "state", "status", "transport", "waiter",
    )  # fmt: skip

    def __init__(self, client: BidderClient, pool: _Pool, loop: asyncio.AbstractEventLoop) -> None:
        self.client = client
        self.pool = pool
        self.loop = loop
        self.transport: asyncio.Transport | None = None
        self.connected = False
        self.state = _BUSY
        self.parser = httptools.HttpResponseParser(self)  # which holds this protocol: see close()
        self.waiter: asyncio.Future[_Answer | _Failure] | None = None
        self.served = 0
        self.idle_since = 0.0
        self.lost: asyncio.Future[None] = loop.create_future()
        self._reset()

    def _reset(self) -> None:
        self.raw = 0  # bytes received for the current answer
        self.status = 0  # of the final answer, once its head is complete
        self.body: list[bytes] = []
        self.size = 0
        self.headers = 0  # header fields of the current head
        self.head = 0  # and their bytes, all heads together
        self.length = -1  # Content-Length, -1 without one
        self.chunked = False
        self.coding: bytes | None = None
        self.extra: dict[str, str] | None = None  # the X- headers of the current head
        self.interim = 0  # 1xx answers so far
        self.keep_alive = False
        self.done = False
        self.error: str | None = None

    # --- httptools callbacks ------------------------------------------------------------------

    def on_header(self, name: bytes, value: bytes) -> None:
        """Note the framing and coding headers; count them all."""
        size = len(name)
        self.headers += 1
        self.head += size + len(value)
        if size == 14:
            if name.lower() == b"content-length":
                self.length = int_or(value.decode("latin-1"), -1, UINT64, signs="")  # httptools checked it
        elif size == 16:
            if name.lower() == b"content-encoding":
                self.coding = value.strip().lower() or None
        elif size == 17 and name.lower() == b"transfer-encoding":
            self.chunked = True
        if name[:2] in _X_PREFIXES:
            self._keep(name, value)

    def _keep(self, name: bytes, value: bytes) -> None:
        """An ``X-`` header for the adapter (bounded by the head limits checked after parsing)."""
        if self.extra is None:
            self.extra = {}
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        self.extra[key] = f"{self.extra[key]}, {text}" if key in self.extra else text

    def on_headers_complete(self) -> None:
        """Take the status of a final answer; a 1xx one is skipped."""
        status = self.parser.get_status_code()
        if status < 200:
            self.interim += 1
        elif self.status:
            self.error = "more than one response to one request"
        else:
            self.status = status

    def on_body(self, body: bytes) -> None:
        """Keep a piece of the body."""
        self.body.append(body)
        self.size += len(body)

    def on_message_complete(self) -> None:
        """A whole answer: a 1xx one only resets the head."""
        if self.status:
            self.done = True
            self.keep_alive = self.parser.should_keep_alive()
        else:  # the end of a 1xx answer: the final one follows
            self.headers = 0
            self.length = -1
            self.chunked = False
            self.coding = None
            self.extra = None

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
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(BidderClientError("the server switched protocols"))
            return
        except httptools.HttpParserError as exc:
            self._fail(BidderClientError(f"invalid HTTP response: {exc}"))
            return
        limit = self.client.max_response_bytes
        if self.size > limit or (self.length > limit and not self.done) or self.raw > 2 * limit + MAX_HEAD_BYTES:
            self._fail(ResponseTooLarge(f"response body over {limit} bytes"))
        elif self.error is not None:
            self._fail(BidderClientError(self.error))
        elif self.head > MAX_HEAD_BYTES or (not self.status and self.raw > MAX_HEAD_BYTES):
            self._fail(BidderClientError(f"response head larger than {MAX_HEAD_BYTES} bytes"))
        elif self.headers > MAX_HEADERS:
            self._fail(BidderClientError(f"too many response headers (over {MAX_HEADERS})"))
        elif self.interim > MAX_INFORMATIONAL:
            self._fail(BidderClientError(f"too many informational responses (over {MAX_INFORMATIONAL})"))
        elif self.done:
            self._complete()

    def connection_lost(self, exc: Exception | None) -> None:
        """End a close-delimited answer, or fail the request the connection was serving."""
        self.connected = False
        if not self.lost.done():
            self.lost.set_result(None)
        if self.waiter is None or self.state != _BUSY:
            self.close(abort=True)
            return
        if self.status and self.length < 0 and not self.chunked and self.error is None:
            self.done = True  # a body delimited by the end of the connection
            self.keep_alive = False
            self._complete()
        elif self.raw == 0:
            reason = f" ({exc})" if exc is not None else ""
            self._fail(_NoAnswer(f"the server closed the connection without answering{reason}"))
        else:
            self._fail(BidderClientError("the server closed the connection mid-response"))

    # --- requests -----------------------------------------------------------------------------

    def send(self, data: bytes, loop: asyncio.AbstractEventLoop) -> asyncio.Future[_Answer | _Failure]:
        """Write one request; the future gets its answer or the error (the client watches the deadline)."""
        waiter: asyncio.Future[_Answer | _Failure] = loop.create_future()
        transport = self.transport
        if self.state != _BUSY or transport is None or transport.is_closing():
            self.close(abort=True)
            waiter.set_result(_Failure(_NoAnswer("the connection was closed before the request")))
            return waiter
        self.waiter = waiter
        transport.write(data)
        return waiter

    def abandon(self) -> None:
        """The caller stopped waiting: an answer still due makes the connection unusable."""
        if self.waiter is not None:
            self.waiter = None
            self.close(abort=True)

    def close(self, abort: bool = False) -> None:
        """Close once and give the pool slot back.

        The answer's buffers are let go at once (a cut one's may be 2 MiB, and the deadline heap
        holds the connection until its deadline), and so is the parser: it holds this protocol's
        methods, a reference cycle that would leave every closed connection to the collector. No
        data is parsed after this: :meth:`data_received` stops at the missing waiter.
        """
        if self.state == _CLOSED:
            return
        was_idle = self.state == _IDLE
        self.state = _CLOSED
        self._reset()
        self.parser = _SPENT_PARSER
        if was_idle:
            try:
                self.pool.idle.remove(self)
            except ValueError:
                pass
        if self.transport is not None:
            if abort:
                self.transport.abort()
            else:
                self.transport.close()
        self.client._forget(self)

    def expire(self) -> None:
        """The deadline passed with the answer still due."""
        self._fail(TimeoutError("the server did not answer before the deadline"))

    def _complete(self) -> None:
        body = self.body
        extra = self.extra
        answer = (
            self.status, body[0] if len(body) == 1 else b"".join(body), self.coding, self.loop.time(),
            _NO_HEADERS if extra is None else extra,
        )
        keep_alive = self.keep_alive and self.connected
        self._reset()
        waiter = self.waiter
        self.waiter = None
        self.served += 1
        if keep_alive:
            self.client._release(self)
        else:
            self.close()
        if waiter is not None and not waiter.done():
            waiter.set_result(answer)

    def _fail(self, exc: BaseException) -> None:
        waiter = self.waiter
        self.waiter = None
        self.close(abort=True)
        if waiter is not None and not waiter.done():
            waiter.set_result(_Failure(exc))


class _NoCallbacks:
    """The protocol of :data:`_SPENT_PARSER`: no callbacks."""

    __slots__ = ()


# What a closed connection holds instead of its parser (never fed: see _Connection.close).
_SPENT_PARSER: Final = httptools.HttpResponseParser(_NoCallbacks())


def _expire(waiter: asyncio.Future[_Connection | _Failure | None]) -> None:
    if not waiter.done():
        waiter.set_result(_Failure(TimeoutError("no connection became free before the deadline")))


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
        self._ssl_loading: asyncio.Future[ssl.SSLContext] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._targets: dict[str, _Target] = {}
        self._heads: dict[tuple[object, ...], tuple[_Target, bytes]] = {}
        self._pools: dict[tuple[str, str, int], _Pool] = {}
        self._connections: set[_Connection] = set()
        self._sweeper: asyncio.TimerHandle | None = None
        # Deadlines of requests in flight, one timer for the earliest: a timer per request costs more
        # than the rest of the request. Entries of finished requests are skipped when they come up.
        self._deadlines: list[tuple[float, int, _Connection, asyncio.Future[_Answer | _Failure]]] = []
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
        return await self._request(method, url, body, headers, deadline, fresh=False)

    def _open_loop(self) -> asyncio.AbstractEventLoop:
        """The loop this client runs on (fixed by its first request); raises once the client is closed."""
        if self._closed:
            raise BidderClientError("the bidder client is closed")
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        return loop

    def start(
        self, method: str, url: str, body: bytes | None, headers: Mapping[str, str], deadline: float
    ) -> PendingRequest:
        """Send one request now, without a task: pass the result to :meth:`finish` or :meth:`cancel`.

        The fan-out's path: on a free keep-alive connection the request is written at once and
        only its answer is awaited later; otherwise a task connects (or waits for a slot) and
        sends it. Raises at once what :meth:`request` would raise before sending.
        """
        loop = self._open_loop()
        target, data = self._encode(method, url, body, headers)
        now = loop.time()
        if now >= deadline:
            raise TimeoutError("no time left before the deadline")
        pool = self._pools.get(target.key)
        connection = self._take_idle(pool, now) if pool is not None and pool.idle else None
        if connection is None:
            pending = PendingRequest(None, None, method, url, body, headers, deadline)
            pending.answer = loop.create_task(self._timed(method, url, body, headers, deadline, pending))
            return pending
        answer = connection.send(data, loop)
        self._track(deadline, connection, answer, loop)
        pending = PendingRequest(answer, connection, method, url, body, headers, deadline)
        pending.reused = True
        return pending

    async def finish(self, pending: PendingRequest) -> tuple[int, bytes, float]:
        """The answer of a :meth:`start`: (status, decoded body, ``loop.time()`` when it was complete).

        Raises as :meth:`request` does; a keep-alive connection the server had closed is retried
        once on a new one, as there.
        """
        connection = pending.connection
        if connection is None:  # the task's own result already carries the time
            done = await cast("asyncio.Task[tuple[int, bytes, float] | _Failure]", pending.answer)
            if isinstance(done, _Failure):
                raise done.take()  # never held in a local here: this frame is in its traceback
            return done
        if pending.answer is None:
            raise BidderClientError("the request was never sent")
        try:
            got = await cast("asyncio.Future[_Answer | _Failure]", pending.answer)
        except BaseException:
            connection.abandon()
            raise
        if isinstance(got, _Failure):
            if not isinstance(got.error, _NoAnswer):
                raise got.take()
            status, raw = await self._request(
                pending.method, pending.url, pending.body, pending.headers, pending.deadline, fresh=True,
                pending=pending,
            )
            return status, raw, cast(asyncio.AbstractEventLoop, self._loop).time()
        status, raw, coding, done_at, pending.response_headers = got
        if coding is not None:
            raw = self._decode(raw, coding)
        return status, raw, done_at

    def cancel(self, pending: PendingRequest) -> None:
        """Give up a started request whose answer will not be awaited (its connection is not reused)."""
        answer = pending.answer
        if answer is None:
            return
        if answer.done():
            if not answer.cancelled():
                answer.exception()  # retrieved: no "exception was never retrieved" log
            return
        connection = pending.connection
        if connection is not None and connection.waiter is answer:
            connection.abandon()
        answer.cancel()

    async def _timed(
        self, method: str, url: str, body: bytes | None, headers: Mapping[str, str], deadline: float,
        pending: PendingRequest,
    ) -> tuple[int, bytes, float] | _Failure:
        """:meth:`_request` in a task; what it raises by design is the task's result (see _Failure)."""
        try:
            status, raw = await self._request(method, url, body, headers, deadline, fresh=False, pending=pending)
        except (OSError, ValueError) as exc:  # TimeoutError, BidderClientError, ResponseTooLarge...
            return _Failure(exc)
        return status, raw, cast(asyncio.AbstractEventLoop, self._loop).time()

    async def _request(
        self, method: str, url: str, body: bytes | None, headers: Mapping[str, str], deadline: float, fresh: bool,
        pending: PendingRequest | None = None,
    ) -> tuple[int, bytes]:
        loop = self._open_loop()
        target, data = self._encode(method, url, body, headers)
        retried = fresh
        asked = loop.time()
        while True:
            pool = self._pools.get(target.key)
            if pool is None:
                pool = self._pools[target.key] = _Pool(target)
            now = loop.time()
            if now >= deadline:
                raise TimeoutError("no time left before the deadline")
            connection = self._take_idle(pool, now) if pool.idle and not fresh else None
            if connection is None:
                connection = await self._acquire(pool, deadline, loop)
            reused = connection.served > 0
            if pending is not None:
                pending.reused = reused
                pending.wait = loop.time() - asked
            answer = connection.send(data, loop)
            self._track(deadline, connection, answer, loop)
            try:
                got = await answer
            except BaseException:
                connection.abandon()
                raise
            if isinstance(got, _Failure):
                if reused and not retried and isinstance(got.error, _NoAnswer):
                    fresh = retried = True  # a keep-alive connection the server had closed: once more, on a new one
                    continue
                raise got.take()
            status, raw, coding, _, extra = got
            if coding is not None:
                raw = self._decode(raw, coding)
            if pending is not None:
                pending.response_headers = extra
            return status, raw

    def _track(
        self, deadline: float, connection: _Connection, answer: asyncio.Future[_Answer | _Failure],
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        """Watch ``answer``'s deadline with the one timer."""
        heapq.heappush(self._deadlines, (deadline, next(self._sequence), connection, answer))
        if deadline < self._deadline_at or self._deadline_timer is None:
            self._watch(deadline, loop)
        elif len(self._deadlines) > 2 * len(self._connections) + 1024:
            self._compact()

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
                    waiter.set_result(_Failure(BidderClientError("the bidder client is closed")))
        connections = list(self._connections)
        for connection in connections:
            waiter = connection.waiter
            connection.waiter = None
            connection.close(abort=True)
            if waiter is not None and not waiter.done():
                waiter.set_result(_Failure(BidderClientError("the bidder client is closed")))
        lost = [c.lost for c in connections if c.transport is not None and not c.lost.done()]
        if lost:
            await asyncio.wait(lost, timeout=1.0)
        self._pools.clear()
        self._targets.clear()
        self._heads.clear()

    # --- deadlines ----------------------------------------------------------------------------

    def _watch(self, deadline: float, loop: asyncio.AbstractEventLoop) -> None:
        """A new earliest deadline: move the timer to it."""
        if self._deadline_timer is not None:
            self._deadline_timer.cancel()
        self._deadline_at = deadline
        self._deadline_timer = loop.call_at(deadline, self._expire_due)

    def _compact(self) -> None:
        """Mostly finished requests in the heap: keep the live ones."""
        self._deadlines = [entry for entry in self._deadlines if entry[2].waiter is entry[3]]
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

    def _take_idle(self, pool: _Pool, now: float) -> _Connection | None:
        idle = pool.idle
        oldest = now - self.idle_timeout
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
        waiter: asyncio.Future[_Connection | _Failure | None] = loop.create_future()
        pool.waiters.append(waiter)
        timer = loop.call_at(deadline, _expire, waiter)
        try:
            got = await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled() and not isinstance(waiter.result(), _Failure):
                # handed over as this task was cancelled
                self._hand_back(pool, cast("_Connection | None", waiter.result()))
            else:
                try:
                    pool.waiters.remove(waiter)
                except ValueError:
                    pass
            raise
        finally:
            timer.cancel()
        if isinstance(got, _Failure):
            raise got.take()
        if got is None:
            return await self._open(pool, deadline, loop)
        return got

    async def _open(self, pool: _Pool, deadline: float, loop: asyncio.AbstractEventLoop) -> _Connection:
        """Connect within the slot already counted in ``pool.total``."""
        connection = _Connection(self, pool, loop)
        self._connections.add(connection)
        try:
            async with asyncio.timeout_at(deadline):
                context = (self._ssl or await self._default_tls(loop)) if pool.tls else None
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
            closed = "the bidder client is closed" if self._closed else "the server closed the connection at once"
            raise BidderClientError(closed)
        return connection

    async def _default_tls(self, loop: asyncio.AbstractEventLoop) -> ssl.SSLContext:
        """The system's trust store, loaded once in a thread (tens of ms the loop should not wait)."""
        loading = self._ssl_loading
        if loading is None:
            loading = self._ssl_loading = loop.run_in_executor(None, ssl.create_default_context)
        try:
            self._ssl = await asyncio.shield(loading)
        except Exception:
            if loading.done():
                self._ssl_loading = None  # try again with the next connection
            raise
        return self._ssl

    def _release(self, connection: _Connection) -> None:
        """A connection that answered in full: to the next waiter, or idle."""
        pool = connection.pool
        if self._closed or self._pools.get(pool.key) is not pool:
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

    def _encode(self, method: str, url: str, body: bytes | None, headers: Mapping[str, str]) -> tuple[_Target, bytes]:
        """The target and the request bytes; a head is built once per (method, URL, headers) seen lately."""
        try:
            key: tuple[object, ...] | None = (method, url, body is None, *headers.items())
            cached = self._heads.get(key)
        except TypeError:  # an unhashable header value: no caching
            key = cached = None
        if cached is None:
            cached = self._head(method, url, body is None, headers)
            if key is not None:
                if len(self._heads) >= MAX_CACHED_HEADS:
                    del self._heads[next(iter(self._heads))]
                self._heads[key] = cached
        target, head = cached
        if body is None:
            return target, head
        return target, b"".join((head, b"%d\r\nConnection: keep-alive\r\n\r\n" % len(body), body))

    def _head(self, method: str, url: str, no_body: bool, headers: Mapping[str, str]) -> tuple[_Target, bytes]:
        """Request line, our headers and the caller's; up to the Content-Length value when a body follows."""
        if method not in _KNOWN_METHODS and _METHOD_RE.fullmatch(method) is None:
            raise ValueError(f"invalid HTTP method {method!r}")
        target = self._targets.get(url)
        if target is None:
            target = self._parse(url)
        lines = [method, target.tail]
        agent = accept = False
        for name, value in headers.items():
            if _TOKEN_RE.fullmatch(name) is None:
                raise ValueError(f"invalid header name {name!r}")
            text = str(value)
            if "\r" in text or "\n" in text:
                raise ValueError(f"a line break in the value of header {name!r}")
            lower = name.lower()
            if lower in _OURS:
                continue
            if lower == "user-agent":
                agent = True
            elif lower == "accept-encoding":
                accept = True
            lines.append(f"{name}: {text}\r\n")
        if not agent and self._ua_line:
            lines.append(self._ua_line)
        if not accept:
            lines.append("Accept-Encoding: gzip\r\n")
        if not no_body:
            lines.append("Content-Length: ")
        elif method in _BODY_METHODS:
            lines.append("Content-Length: 0\r\nConnection: keep-alive\r\n\r\n")
        else:
            lines.append("Connection: keep-alive\r\n\r\n")
        return target, "".join(lines).encode()

    def _decode(self, data: bytes, coding: bytes) -> bytes:
        """Decode a gzip or deflate body, never producing more than ``max_response_bytes``."""
        if coding == b"gzip" or coding == b"x-gzip":
            wbits = _GZIP_WBITS
        elif coding == b"identity":
            return data
        elif coding == b"deflate":  # zlib-wrapped per the RFC, raw deflate from some servers
            zlib_header = len(data) >= 2 and data[0] & 0x0F == 8 and ((data[0] << 8) | data[1]) % 31 == 0
            wbits = zlib.MAX_WBITS if zlib_header else -zlib.MAX_WBITS
        else:
            raise BidderClientError(f"unsupported Content-Encoding {coding.decode('latin-1')!r}")
        limit = self.max_response_bytes
        out: list[bytes] = []
        size = 0
        while data:
            decompressor = zlib.decompressobj(wbits)
            try:
                chunk = decompressor.decompress(data, limit - size + 1)
            except zlib.error as exc:
                raise BidderClientError(f"invalid {coding.decode('latin-1')} body: {exc}") from exc
            size += len(chunk)
            if size > limit:
                raise ResponseTooLarge(f"decoded response body over {limit} bytes")
            if not decompressor.eof:
                raise BidderClientError(f"truncated {coding.decode('latin-1')} body")
            out.append(chunk)
            data = decompressor.unused_data
            if wbits != _GZIP_WBITS or not data.startswith(b"\x1f\x8b"):
                break  # another gzip member follows, or only trailing bytes (ignored)
        return out[0] if len(out) == 1 else b"".join(out)
