"""Client connections: ``http_timeouts`` for slow clients, and connections closed cleanly at shutdown.

aiohttp 3.14 has a keep-alive timeout but no limit on how long a request's head or body may take.
:class:`Connection` extends aiohttp's protocol (one per TCP connection) with the three limits,
using the one timer aiohttp already keeps per connection (its keep-alive ``TimerHandle``), so a
request costs no timer or task of its own:

- ``header_seconds``: the request line and headers, counted from the connection's accept (first
  request) or from the first byte of the request (later requests on a kept-alive connection).
  Then the connection is closed without an answer.
- ``body_seconds``: the whole body, counted from the end of the head. The handler's read fails
  with 408 ``Request Timeout`` (sent with ``Connection: close``), then the connection closes.
- ``idle_seconds``: between an answer and the next request's first byte. Then the connection closes.

The timer is never set more than ``min(header, body, idle)`` ahead (a connection wakes at most
that often, and a check that finds nothing due just sets it again), so a phase that starts needs
no new timer: whatever is pending fires no later than the new phase's deadline. On the request
path this costs a clock read and a few attribute writes in ``data_received``.

At shutdown (:meth:`ConnectionServer.stop_keep_alive`, :meth:`ConnectionServer.close_connections`)
every response says ``Connection: close`` and each connection is closed only after answering the
request on it; a connection with no request is closed once it has been idle for
:data:`CLOSE_IDLE_AFTER_SECONDS`, so that a request already on its way is still read and answered.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aiohttp import hdrs, web
from aiohttp.helpers import ceil_timeout
from aiohttp.http import HttpVersion11
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.http_writer import StreamWriter
from aiohttp.streams import EMPTY_PAYLOAD, StreamReader
from aiohttp.web_exceptions import HTTPException
from aiohttp.web_protocol import _PAYLOAD_ACCESS_ERROR, ERROR, RequestHandler, RequestPayloadError, _ErrInfo
from aiohttp.web_request import BaseRequest

from hbserver.config import HttpTimeouts
from hbserver.web.dispatch import PlainRoute, PlainRoutes, fast_request_handler, plain_route_table
from hbserver.web.errors import HttpError
from hbserver.web.keys import METRICS
from hbserver.web.plain_request import plain_request
from hbserver.web.response import FastResponse

if TYPE_CHECKING:  # the metrics module fixes prometheus-client's mode when imported
    from hbserver.metrics import Metrics, PendingCounter

log = logging.getLogger("hbserver.http")

# At shutdown, a connection waiting for a request is closed once it has waited this long: a client
# that has just had an answer and sends its next request at once is answered (with
# Connection: close) rather than cut off.
CLOSE_IDLE_AFTER_SECONDS = 1.0
CLOSE_POLL_SECONDS = 0.02
# Errors a client causes, which aiohttp would log with a traceback.
CLIENT_FAULTS = (HttpProcessingError, RequestPayloadError, ConnectionError)


@dataclass(slots=True)
class ConnectionLimits:
    """The worker's limits, shared by all its connections; changed in place at shutdown."""

    header_seconds: float
    body_seconds: float
    idle_seconds: float
    keep_alive: bool = True  # False from SIGTERM on: every response says Connection: close
    closing: bool = False  # the listener is closed: idle connections are closed

    @classmethod
    def from_config(cls, timeouts: HttpTimeouts) -> ConnectionLimits:
        return cls(timeouts.header_seconds, timeouts.body_seconds, timeouts.idle_seconds)

    @property
    def check_every(self) -> float:
        """The longest the per-connection timer may be set ahead (see the module docstring)."""
        step = min(self.header_seconds, self.body_seconds, self.idle_seconds)
        return min(step, CLOSE_IDLE_AFTER_SECONDS) if self.closing else step


def _close_after_answer(request: BaseRequest) -> None:
    """Make the response to ``request`` (not prepared yet) say Connection: close."""
    request._message = request._message._replace(should_close=True)
    request._cache.pop("keep_alive", None)


class Heartbeat:
    """When the event loop's heartbeat timer (:class:`hbserver.overload.LoopLag`) is next due; inf without one.

    A head read after that time was read late: the loop was busy, not polling, and the bytes may have
    waited in the kernel since then; the head is stamped as arrived then."""

    __slots__ = ("due",)

    def __init__(self) -> None:
        self.due = float("inf")


HEARTBEAT = Heartbeat()  # the process's
_EXPECT = hdrs.EXPECT
_feed = RequestHandler.data_received  # called directly: cheaper than super() on every read


def plain_route(routes: PlainRoutes, message: Any) -> PlainRoute | None:
    """The plain route (``dispatch.plain_route_table``) that takes the parsed request ``message`` as it
    stands, or None: not one, or it must take aiohttp's path (not HTTP/1.1, an ``Expect`` header).

    The raw request target is looked up: when it equals a plain route's path, that is the path
    aiohttp's routing would find too (it only differs from the raw text with percent-escapes, dot
    segments or an absolute form, none of which matches a table entry as written)."""
    paths = routes.get(message.method)
    if paths is None or message.version != HttpVersion11:
        return None
    target = message.path
    cut = target.find("?")
    route = paths.get(target if cut < 0 else target[:cut])
    if route is None or _EXPECT in message.headers:
        return None
    return route


class Connection(RequestHandler):
    """aiohttp's HTTP/1.1 protocol with header, body and idle timeouts and a graceful close."""

    __slots__ = ("_accepted_at", "_body_since", "_head_since", "_limits", "_routes", "_sizes", "_transport_info")

    def __init__(self, manager: ConnectionServer, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self._limits = manager.limits
        self._routes = manager.routes
        self._sizes = manager.request_sizes
        self._transport_info: tuple[Any, Any, Any] = (None, None, None)
        self._accepted_at = 0.0
        self._head_since = 0.0  # when the head being received began; 0 = none is
        self._body_since = 0.0  # when the last head was complete

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        # The server's factory again: made before a shutdown began, this protocol may hold the one
        # stop_keep_alive replaced (it only reaches connections made by then).
        self._request_factory = self._manager.request_factory if self._manager is not None else None
        self._transport_info = (self.ssl_context, self.peername, self.sockname)  # what each request reads
        loop = self._loop
        now = loop.time()
        self._accepted_at = now  # the first request's head is due header_seconds after this
        if self._keepalive_handle is not None:
            self._keepalive_handle.cancel()
        self._keepalive_handle = loop.call_at(now + self._limits.check_every, self._process_keepalive)

    def data_received(self, data: bytes) -> None:
        """aiohttp's ``RequestHandler.data_received`` (aiohttp 3.14, pinned by tests/test_connection_loop.py)
        for the request parser's case, in one call with the stamps the timeouts read: a head's first
        bytes start its clock, a whole head starts its body's. Upgraded connections take aiohttp's own."""
        if self._force_close or self._close:
            return
        if self._payload_parser is not None or self._upgraded:
            _feed(self, data)
            return
        waiter = self._waiter
        waiting = waiter is not None and not waiter.done()  # for a request: these are bytes of its head
        try:
            messages, upgraded, tail = self._parser.feed_data(data)  # type: ignore[union-attr]
        except HttpProcessingError as exc:
            messages = [(_ErrInfo(status=400, exc=exc, message=exc.message), EMPTY_PAYLOAD)]
            upgraded = False
            tail = b""
        for item in messages:
            self._request_count += 1
            self._messages.append(item)
        if messages:  # a head came
            if waiting:
                waiter.set_result(None)  # type: ignore[union-attr]
            self._head_since = 0.0
            self._body_since = min(self._loop.time(), HEARTBEAT.due)
        elif waiting and not self._head_since:  # a head has begun
            self._head_since = self._loop.time()
        if not self._buffer_paused and len(self._messages) >= self._max_msg_queue_size:
            self._pause_reading_for_buffer()  # the parser stopped emitting; start() resumes as it drains
        self._upgraded = upgraded
        if upgraded and tail:
            self._message_tail = tail

    async def start(self) -> None:
        """The connection's request loop: aiohttp's (``RequestHandler.start``, aiohttp 3.14), except that
        each request's handler is awaited in this task instead of a task of its own.

        On Python 3.11 aiohttp makes a task per request (3.12 and later start it eagerly, in the
        same turn of the loop): a task object, a copy of the context, and two more turns of the event
        loop (the task's first step, then this loop's wake-up when it is done), about a tenth of a
        small endpoint's cost. What the separate task gave, a fresh context per request, matters here
        only for :data:`hbserver.logsetup.REQUEST_ID`, which every request sets before it logs.
        Cancellation is unchanged: aiohttp cancels this task when the client goes (handler
        cancellation), which cancelled the request's task through its ``await`` before.
        tests/test_connection_loop.py pins the aiohttp code this follows.
        """
        loop = self._loop
        messages = self._messages
        keepalive_timeout = self._keepalive_timeout
        while not self._force_close:
            if not messages:
                try:
                    self._waiter = loop.create_future()
                    await self._waiter
                finally:
                    self._waiter = None
            message, payload = messages.popleft()
            if self._parser is not None:
                self._parser.message_consumed()  # a parser slot is free again
            if self._buffer_paused and len(messages) <= self._msg_queue_resume_size:
                self._resume_reading_if_drained()
            if not await self._serve(message, payload):
                break
            if self._keepalive and not self._close and not self._force_close:
                self._next_keepalive_close_time = loop.time() + keepalive_timeout
                if self._keepalive_handle is None:
                    self._keepalive_handle = loop.call_at(self._next_keepalive_close_time, self._process_keepalive)
            else:
                break
        if not self._force_close:
            self._task_handler = None
            if self.transport is not None:
                self.transport.close()

    async def _serve(self, message: Any, payload: StreamReader) -> bool:
        """Answer one request; False when the connection is done with (the client went)."""
        manager = self._manager
        assert manager is not None and self._request_factory is not None
        manager.requests_count += 1
        writer = StreamWriter(self, self._loop)
        handler = self._request_handler
        route = None
        if isinstance(message, _ErrInfo):  # a request the parser refused: aiohttp's error answer
            handler = self._make_error_handler(message)
            message = ERROR
        elif self._routes is not None:
            route = plain_route(self._routes, message)
        assert handler is not None
        task = self._task_handler or asyncio.current_task()
        if route is not None and self._sizes is not None and self._limits.keep_alive:
            request = plain_request(message, payload, self, writer, task, self._transport_info, self._sizes)
        else:  # the application's factory, or stop_keep_alive's (which makes the request close its connection)
            request = self._request_factory(message, payload, self, writer, task)
        try:
            try:
                if route is None:
                    response, reset = await self._handle_request(request, None, handler)
                else:
                    response, reset = await self._handle_plain(request, route)
            except ConnectionError:
                self.log_debug("Ignored premature client disconnection")
                return False
            if reset:
                self.log_debug("Ignored premature client disconnection 2")
                return False
            self._keepalive = bool(response._keep_alive)  # response.keep_alive, without the property
            if not payload.is_eof():
                await self._linger(payload)
            payload.set_exception(_PAYLOAD_ACCESS_ERROR)  # the body cannot be read after the answer
        except asyncio.CancelledError:
            self.log_debug("Ignored premature client disconnection")
            self.force_close()
            raise
        except Exception as exc:
            self.log_exception("Unhandled exception", exc_info=exc)
            self.force_close()
        except BaseException:
            self.force_close()
            raise
        finally:
            request._task = None  # type: ignore[assignment]  # no cycle through a traceback
        return True

    async def _handle_plain(self, request: BaseRequest, route: PlainRoute) -> tuple[web.StreamResponse, bool]:
        """aiohttp's ``_handle_request`` for a request a plain route takes: its handler called without
        aiohttp's routing, and a :class:`FastResponse` of the plain case sent at once
        (:meth:`FastResponse.send_at_once`) rather than through ``finish_response``'s coroutines.
        Whatever else (another response, a handler's exception) is finished as aiohttp finishes it."""
        handler, request._match_info = route  # type: ignore[attr-defined]  # a web.Request, as aiohttp sets it
        self._request_in_progress = True
        try:
            try:
                try:
                    self._current_request = request
                    response = await handler(request)
                finally:
                    self._current_request = None
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # what _handle_request makes of a handler's exception
                return await self.finish_response(request, self._failure_response(request, exc), None)
            if self._upgraded or response.__class__ is not FastResponse:
                return await self.finish_response(request, response, None)
            try:
                if not response.send_at_once(request):  # type: ignore[attr-defined]
                    return await self.finish_response(request, response, None)
                if request._post is not None:  # request._finish(), whose work is for a read form only
                    request._finish()
                if self._paused:
                    await request._payload_writer.drain()
            except ConnectionError:
                self.log_access(request, response, None)
                return response, True
            if self._logging_enabled:  # log_access's own test, without the call
                self.log_access(request, response, None)
            return response, False
        finally:
            self._request_in_progress = False
            if self._handler_waiter is not None:
                self._handler_waiter.set_result(None)

    def _failure_response(self, request: BaseRequest, exc: Exception) -> web.StreamResponse:
        """aiohttp's answer to an exception out of a handler (``RequestHandler._handle_request``)."""
        if isinstance(exc, HTTPException):
            return exc
        if isinstance(exc, asyncio.TimeoutError):
            self.log_debug("Request handler timed out.", exc_info=exc)
            return self.handle_error(request, 504)
        return self.handle_error(request, 500, exc)

    async def _linger(self, payload: StreamReader) -> None:
        """Read and drop what is left of an unread body for up to ``lingering_time``, so the next
        request on the connection can be parsed; close the connection if it does not all come."""
        lingering_time = self._lingering_time
        if not self._force_close and lingering_time:
            loop = self._loop
            now = loop.time()
            end = now + lingering_time
            try:
                while not payload.is_eof() and now < end:
                    async with ceil_timeout(end - now):
                        await payload.readany()
                    now = loop.time()
            except (TimeoutError, asyncio.CancelledError):
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise
        if not payload.is_eof() and not self._force_close:
            self.log_debug("Uncompleted request.")
            self.close()

    def _process_keepalive(self) -> None:
        """The connection's one timer (aiohttp schedules it under this name too): close it when due."""
        self._keepalive_handle = None
        if self._force_close or self.transport is None:
            return
        limits = self._limits
        loop = self._loop
        now = loop.time()
        waiter = self._waiter
        if waiter is not None and not waiter.done():  # waiting for a request
            if not self._request_count:  # the connection's first
                due = self._accepted_at + limits.header_seconds
                if limits.closing and not self._head_since:  # not a byte yet
                    due = min(due, self._accepted_at + CLOSE_IDLE_AFTER_SECONDS)
            elif self._head_since:
                due = self._head_since + limits.header_seconds
            else:
                idle_since = self._next_keepalive_close_time - self._keepalive_timeout
                due = idle_since + (CLOSE_IDLE_AFTER_SECONDS if limits.closing else limits.idle_seconds)
            if now >= due:
                self.force_close()
                return
        else:
            due = now + limits.check_every
            request = self._current_request
            if request is not None and not self._close and not request.content.is_eof():
                due = self._body_since + limits.body_seconds
                if now >= due:
                    self._body_timed_out(request)
                    due = now + limits.check_every
        self._keepalive_handle = loop.call_at(min(due, now + limits.check_every), self._process_keepalive)

    def _body_timed_out(self, request: BaseRequest) -> None:
        """The handler's read of the body fails with 408; the connection closes after that answer."""
        seconds = self._limits.body_seconds
        log.debug("request body not received within %gs: answering 408", seconds)
        _close_after_answer(request)
        self._lingering_time = 0.0  # do not read the rest of the body after the answer
        self.close()  # ignore what else arrives; close once the answer is sent
        request.content.set_exception(HttpError(408, f"Request Timeout: the body did not arrive within {seconds:g}s"))

    def log_exception(self, *args: Any, **kw: Any) -> None:
        """aiohttp's error log. What a client caused (a malformed request, a body that cannot be
        decoded, a connection it closed) is logged at debug level, without a traceback."""
        exc = kw.get("exc_info")
        if isinstance(exc, CLIENT_FAULTS):
            log.debug("client error: %s", exc)
            return
        super().log_exception(*args, **kw)

    def check_now(self) -> None:
        """Run the timer's check at once (the limits changed)."""
        if self._keepalive_handle is not None:
            self._keepalive_handle.cancel()
        self._keepalive_handle = None
        if not self._force_close and self.transport is not None:
            self._keepalive_handle = self._loop.call_soon(self._process_keepalive)  # type: ignore[assignment]


class ConnectionServer(web.Server):
    """aiohttp's low-level server making :class:`Connection` protocols."""

    def __init__(
        self,
        handler: Any,
        *,
        limits: ConnectionLimits,
        metrics: Metrics | None = None,
        routes: PlainRoutes | None = None,
        request_sizes: tuple[int, int] | None = None,
        **kwargs: Any,
    ) -> None:
        """``routes``: the plain routes a :class:`Connection` serves without aiohttp's routing (None: none);
        ``request_sizes``: the application's (client_max_size, client_max_fields) when its requests are
        made by ``Application._make_request``, so a plain route's can be made by :func:`plain_request`."""
        super().__init__(handler, **kwargs)
        self.limits = limits
        self.routes = routes
        self.request_sizes = request_sizes
        self._counts: tuple[PendingCounter, PendingCounter, PendingCounter] | None = None
        if metrics is not None:  # PBS-Go's connections_opened, connections_closed, connections_error{close}
            self._counts = (
                metrics.counter(metrics.connections_opened),
                metrics.counter(metrics.connections_closed),
                metrics.counter(metrics.connections_error, "close"),
            )

    def __call__(self) -> Connection:
        return Connection(self, loop=self._loop, **self._kwargs)

    def connection_made(self, handler: RequestHandler, transport: asyncio.Transport) -> None:
        super().connection_made(handler, transport)
        if self._counts is not None:
            self._counts[0].inc()

    def connection_lost(self, handler: RequestHandler, exc: BaseException | None = None) -> None:
        super().connection_lost(handler, exc)
        if self._counts is not None:
            self._counts[1 if exc is None else 2].inc()

    def stop_keep_alive(self) -> None:
        """From now on every response says Connection: close, and its connection closes after it."""
        if not self.limits.keep_alive:
            return
        self.limits.keep_alive = False
        make_request = self.request_factory

        def make_closing_request(message: Any, *args: Any) -> BaseRequest:
            return make_request(message._replace(should_close=True), *args)

        self.request_factory = make_closing_request
        for connection in self._connections:
            if connection._request_factory is not None:
                connection._request_factory = make_closing_request
            request = connection._current_request
            if request is not None and not request.writer.output_size:
                _close_after_answer(request)

    async def close_connections(self, timeout: float) -> bool:
        """Close every connection once its request is answered (idle ones after a short grace),
        waiting up to ``timeout``; True when all are closed. Call it after closing the listener."""
        self.stop_keep_alive()
        self.limits.closing = True
        for connection in list(self._connections):
            if isinstance(connection, Connection):
                connection.check_now()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self._connections and loop.time() < deadline:
            await asyncio.sleep(min(CLOSE_POLL_SECONDS, max(0.0, deadline - loop.time())))
        return not self._connections


class ConnectionRunner(web.AppRunner):
    """An :class:`~aiohttp.web.AppRunner` whose server makes :class:`Connection` protocols."""

    __slots__ = ("_limits",)

    def __init__(self, app: web.Application, limits: ConnectionLimits, **kwargs: Any) -> None:
        kwargs.setdefault("keepalive_timeout", limits.idle_seconds)
        super().__init__(app, **kwargs)
        self._limits = limits

    @property
    def server(self) -> ConnectionServer | None:
        return self._server  # type: ignore[return-value]

    async def _make_server(self) -> ConnectionServer:
        made = await super()._make_server()  # the application's start-up, its handler and request factory
        return ConnectionServer(
            fast_request_handler(self._app, made.request_handler),  # plain routes without aiohttp's routing
            limits=self._limits,
            metrics=self._app.get(METRICS),
            routes=plain_route_table(self._app),
            request_sizes=_request_sizes(self._app, made.request_factory),
            request_factory=made.request_factory,
            handler_cancellation=made.handler_cancellation,
            loop=made._loop,
            **made._kwargs,
        )


def _request_sizes(app: web.Application, factory: Any) -> tuple[int, int] | None:
    """``app``'s (client_max_size, client_max_fields) when ``factory`` is its own request factory."""
    if factory != app._make_request:
        return None
    return app._client_max_size, app._client_max_fields
