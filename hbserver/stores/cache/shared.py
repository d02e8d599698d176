"""A worker's client of another worker's cache shard (see :mod:`.sharded` and :mod:`.shard_server`).

One Unix-socket connection per peer carries every call to it, pipelined: a call writes its frame
and waits for the answer in its place in line, so calls never wait for each other's round trips
and a worker makes no pool. The caller chooses the keys, so the owner only stores and looks up.

Failures are store errors, never waits without end: no owner listening (refused or no socket)
fails at once, a lost connection fails the calls on it at once, and an owner that stops answering
fails them after :data:`STALL_SECONDS` (the caller's own, usually shorter, deadline applies as
well); the next call connects again. Messages name no path (they reach clients); ``detail`` is logged.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Sequence
from typing import cast

from hbserver.stores.cache.base import CachedValue, CacheItem, CacheStoreError, stored_value
from hbserver.stores.cache.wire import ERROR, FRAME_SLACK_BYTES, HEADER, MISS, OK, get_request, put_request
from hbserver.uuids import new_uuid

STALL_SECONDS = 1.0  # an owner answers in microseconds; one this late is taken as hung
MAX_WAITING = 10_000  # calls in line on the connection before new ones fail at once
UNAVAILABLE = "memory: the shared store is unavailable"


class _Link(asyncio.Protocol):
    """The connection: frames out, answers matched to the waiting calls in order."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.waiting: deque[tuple[asyncio.Future[tuple[int, bytes]], float]] = deque()
        self.buffer = bytearray()
        self.lost = False
        self._watch: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's are not asyncio.Transport subclasses

    def call(self, request: bytes) -> asyncio.Future[tuple[int, bytes]]:
        """Send ``request``; the future of its (code, body) answer."""
        if len(self.waiting) >= MAX_WAITING:
            raise CacheStoreError(UNAVAILABLE, detail=f"{MAX_WAITING} calls waiting for the owner")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[tuple[int, bytes]] = loop.create_future()
        assert self.transport is not None
        self.transport.write(request)
        self.waiting.append((future, loop.time()))
        if self._watch is None:
            self._watch = loop.call_at(loop.time() + STALL_SECONDS, self._check_stall)
        return future

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        source: bytes | bytearray = data
        if buffer:
            buffer += data
            source = buffer
        elif len(data) >= HEADER.size and self.waiting:  # the usual case: one whole answer
            length, code = HEADER.unpack_from(data)
            if length + 4 == len(data):
                future, _sent = self.waiting.popleft()
                if not future.done():
                    future.set_result((code, data[HEADER.size:]))
                return
        with memoryview(source) as view:
            used = self._answer_calls(view)
        if used < 0:
            return
        if source is buffer:
            del buffer[:used]
        elif used < len(data):
            buffer += data[used:]

    def _answer_calls(self, view: memoryview) -> int:
        """Hand every whole answer in ``view`` to its call; the bytes used (-1: the link failed)."""
        at, size = 0, len(view)
        waiting = self.waiting
        while size - at >= HEADER.size:
            length, code = HEADER.unpack_from(view, at)
            end = at + 4 + length
            if end > size:
                break
            if not waiting:
                self._fail("an answer nobody asked for")
                return -1
            future, _sent = waiting.popleft()
            if not future.done():  # a call whose caller gave up is skipped
                future.set_result((code, bytes(view[at + HEADER.size:end])))
            at = end
        return at

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(f"connection lost: {exc or 'closed by the owner'}")

    def _check_stall(self) -> None:
        self._watch = None
        if not self.waiting:
            return
        loop = asyncio.get_running_loop()
        oldest = self.waiting[0][1]
        if loop.time() - oldest >= STALL_SECONDS:
            self._fail(f"no answer for {STALL_SECONDS:g}s")
        else:
            self._watch = loop.call_at(oldest + STALL_SECONDS, self._check_stall)

    def _fail(self, detail: str) -> None:
        """Fail every waiting call and close: the store connects again on its next call."""
        self.lost = True
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        while self.waiting:
            future, _sent = self.waiting.popleft()
            if not future.done():
                future.set_exception(CacheStoreError(UNAVAILABLE, detail=detail))
        if self.transport is not None:
            self.transport.abort()


def _retrieve(future: asyncio.Future[_Link]) -> None:
    """Mark a failed connection attempt's error as seen (each waiting call raises it)."""
    if not future.cancelled():
        future.exception()


class PeerStore:
    """Another worker's shard of the memory store, reached over the Unix socket at ``path``."""

    name = "memory"  # the metrics label of the memory store: one store, sharded
    in_process = False

    def __init__(self, path: str, max_bytes: int) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self._link: _Link | None = None
        self._connecting: asyncio.Future[_Link] | None = None

    async def _connected(self) -> _Link:
        connecting = self._connecting
        if connecting is None or connecting.done():  # one attempt, shared by the calls made meanwhile
            connecting = self._connecting = asyncio.ensure_future(self._connect())
            connecting.add_done_callback(_retrieve)
        return await asyncio.shield(connecting)

    async def _connect(self) -> _Link:
        loop = asyncio.get_running_loop()
        try:
            _transport, link = await loop.create_unix_connection(_Link, self.path)
        except OSError as exc:
            raise CacheStoreError(UNAVAILABLE, detail=f"{self.path}: {exc}") from None
        self._link = link
        return link

    async def _call(self, request: bytes) -> tuple[int, bytes]:
        link = self._link
        if link is None or link.lost:
            link = await self._connected()
        code, body = await link.call(request)
        if code == ERROR:
            raise CacheStoreError(body.decode(errors="replace"))  # the in-process store's text
        return code, body

    async def put_many(self, items: Sequence[CacheItem]) -> list[str]:
        keys = [item.key or new_uuid() for item in items]
        request = put_request(keys, items)
        if len(request) > self.max_bytes + FRAME_SLACK_BYTES:
            raise CacheStoreError(f"a put of {len(request)} bytes exceeds the store's {self.max_bytes} bytes")
        _code, written = await self._call(request)
        if len(written) != len(keys):
            raise CacheStoreError(UNAVAILABLE, detail=f"{len(written)} answers for {len(keys)} items")
        return [key if ok else "" for key, ok in zip(keys, written, strict=True)]

    async def get(self, key: str) -> CachedValue | None:
        code, value = await self._call(get_request(key))
        if code == MISS:
            return None
        if code != OK:
            raise CacheStoreError(UNAVAILABLE, detail=f"answer code {code}")
        return stored_value(value)

    async def close(self) -> None:
        connecting, self._connecting = self._connecting, None
        if connecting is not None:
            connecting.cancel()
            with contextlib.suppress(BaseException):
                await connecting
        link, self._link = self._link, None
        if link is not None and link.transport is not None:
            link.transport.close()
