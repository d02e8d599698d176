"""The listening sockets, accepted from in batches.

uvloop's libuv (1.49 on) accepts one connection each time the listening socket is reported readable,
that is one per turn of the event loop. A worker under load turns the loop every few tens of
milliseconds, so new connections wait in the kernel's accept queue, their requests unread, for seconds:
a queue no deadline or overload check in the process can see (it measured 1,800 connections waiting,
about 12 taken a second, at twice the saturation of the AMP path). :class:`BatchSite` listens with
sockets of its own and takes up to :data:`ACCEPT_BATCH` connections per readiness, as asyncio's own
loop does, handing each to the server with ``loop.connect_accepted_socket``: their requests are read
in the next turn, where the overload check sees how long they waited.

A full process (``EMFILE``) or machine (``ENFILE``) file table stops accepting for
:data:`PAUSE_ON_FD_LIMIT_SECONDS` (the socket would otherwise be reported readable at once, again and
again), with a warning; the connections wait in the queue meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import socket
from collections.abc import Callable, Iterable
from typing import Any

from aiohttp import web

log = logging.getLogger("hbserver.http")

ACCEPT_BATCH = 256  # connections taken from an accept queue per readiness, at most
PAUSE_ON_FD_LIMIT_SECONDS = 1.0
_FD_LIMIT = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)


class BatchListener:
    """Listening ``sockets`` whose connections are handed to ``factory``'s protocols; what an aiohttp
    site keeps as its server (``sockets``, ``close``, ``wait_closed``)."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, sockets: Iterable[socket.socket], factory: Callable[[], Any]
    ) -> None:
        self.sockets = tuple(sockets)
        self._loop = loop
        self._factory = factory
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False
        for sock in self.sockets:
            loop.add_reader(sock.fileno(), self._accept, sock)

    def _accept(self, sock: socket.socket) -> None:
        for _ in range(ACCEPT_BATCH):
            try:
                conn, _address = sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                if exc.errno in _FD_LIMIT:
                    self._pause(sock, exc)
                return  # ECONNABORTED and the like: the client gave up; the next readiness goes on
            conn.setblocking(False)
            with contextlib.suppress(OSError):
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            task = self._loop.create_task(self._serve(conn))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _serve(self, conn: socket.socket) -> None:
        try:
            await self._loop.connect_accepted_socket(self._factory, conn)
        except OSError:  # the client has gone already
            conn.close()

    def _pause(self, sock: socket.socket, exc: OSError) -> None:
        log.warning("cannot accept connections (%s): pausing %gs", exc.strerror or exc, PAUSE_ON_FD_LIMIT_SECONDS)
        self._loop.remove_reader(sock.fileno())
        self._loop.call_later(PAUSE_ON_FD_LIMIT_SECONDS, self._resume, sock)

    def _resume(self, sock: socket.socket) -> None:
        if not self._closed:
            self._loop.add_reader(sock.fileno(), self._accept, sock)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for sock in self.sockets:
            self._loop.remove_reader(sock.fileno())
            sock.close()

    async def wait_closed(self) -> None:
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)


def listening_sockets(host: str | None, port: int, backlog: int, reuse_port: bool) -> list[socket.socket]:
    """Bound, listening, non-blocking sockets for ``host:port`` (every address of ``host``; all
    interfaces when it is empty), as ``loop.create_server`` makes them; OSError when one cannot bind."""
    infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    sockets: list[socket.socket] = []
    seen: set[tuple[int, Any]] = set()
    try:
        for family, kind, proto, _, address in infos:
            if (family, address) in seen:
                continue
            seen.add((family, address))
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if reuse_port:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            if port == 0 and len(sockets) > 1:  # every address on the port the first was given
                address = (address[0], sockets[0].getsockname()[1], *address[2:])
            sock.bind(address)
            sock.listen(backlog)
            sock.setblocking(False)
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


class BatchSite(web.BaseSite):
    """aiohttp's ``TCPSite`` on :class:`BatchListener`: the same host, port, backlog and SO_REUSEPORT."""

    __slots__ = ("_host", "_port", "_reuse_port")

    def __init__(
        self, runner: web.BaseRunner, host: str | None, port: int, *, backlog: int = 128, reuse_port: bool = True
    ) -> None:
        super().__init__(runner, backlog=backlog)
        self._host = host
        self._port = port
        self._reuse_port = reuse_port

    @property
    def name(self) -> str:
        return f"http://{self._host or '0.0.0.0'}:{self._port}"

    async def start(self) -> None:
        await super().start()
        server = self._runner.server
        assert server is not None
        sockets = listening_sockets(self._host, self._port, self._backlog, self._reuse_port)
        self._server = BatchListener(asyncio.get_running_loop(), sockets, server)  # type: ignore[assignment]
