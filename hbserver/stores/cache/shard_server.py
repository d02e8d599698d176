"""A worker's shard of the memory cache store, served to the other workers of its supervisor.

With several workers each one holds the keys it owns (:mod:`.sharded`) in an in-process
:class:`~hbserver.stores.cache.memory.MemoryStore` and serves that store on a Unix socket in the
supervisor's private run directory (``cache-<index>.sock``), so a ``GET /cache`` reaching another
worker than the put is answered from the owner's shard (:mod:`.wire` frames; peers connect with
:mod:`.shared`). The server runs on the worker's own event loop: each frame is answered to
completion before the next, so a batch is atomic without locks, and a peer's call costs the owner
a read, a dictionary operation and a write, never a blocking call.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import struct
from typing import cast

from hbserver.stores.cache.base import CacheStoreError
from hbserver.stores.cache.memory import MemoryStore
from hbserver.stores.cache.wire import (
    ERROR,
    FRAME_SLACK_BYTES,
    GET,
    HEADER,
    MISS,
    OK,
    PUT,
    frame,
    parse_put,
)

log = logging.getLogger("hbserver.cache")

LISTEN_BACKLOG = 512


class ShardProtocol(asyncio.Protocol):
    """One peer's connection: frames in, answers out in the same order."""

    def __init__(self, store: MemoryStore, connections: set[asyncio.Transport]) -> None:
        self.store = store
        self.connections = connections
        self.max_frame = store.max_bytes + FRAME_SLACK_BYTES
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's are not asyncio.Transport subclasses
        self.connections.add(self.transport)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.transport is not None:
            self.connections.discard(self.transport)

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        source: bytes | bytearray = data
        if buffer:
            buffer += data
            source = buffer
        answers: list[bytes] = []
        try:
            with memoryview(source) as view:
                used = self._answer_frames(view, answers)
        except (ValueError, struct.error) as exc:  # UnicodeDecodeError is a ValueError
            self._abandon(f"malformed frame: {exc}")
            return
        if source is buffer:
            del buffer[:used]
        elif used < len(data):
            buffer += data[used:]
        if answers and self.transport is not None:
            self.transport.write(b"".join(answers))

    def _answer_frames(self, view: memoryview, answers: list[bytes]) -> int:
        """Answer every whole frame in ``view``; the bytes used."""
        at, size = 0, len(view)
        while size - at >= HEADER.size:
            length, code = HEADER.unpack_from(view, at)
            if not 0 < length <= self.max_frame:
                raise ValueError(f"frame of {length} bytes")
            end = at + 4 + length
            if end > size:
                break
            self._answer(code, view[at + HEADER.size:end], answers)
            at = end
        return at

    def _answer(self, code: int, body: memoryview, answers: list[bytes]) -> None:
        if code == GET:
            value = self.store.get_stored_now(str(body, "utf-8"))
            if value is None:
                answers.append(frame(MISS, b""))
            else:
                answers.append(HEADER.pack(len(value) + 1, OK))
                answers.append(value)
        elif code == PUT:
            try:
                keys = self.store.put_stored_now(parse_put(body))
            except CacheStoreError as exc:
                answers.append(frame(ERROR, str(exc).encode()))
                return
            answers.append(frame(OK, bytes([1 if key else 0 for key in keys])))
        else:
            raise ValueError(f"unknown request code {code}")

    def _abandon(self, reason: str) -> None:
        """A peer that breaks the protocol (a bug) loses its connection; it reconnects."""
        log.error("cache shard: %s; closing the connection", reason)
        self.buffer.clear()
        if self.transport is not None:
            self.transport.abort()


class ShardServer:
    """``store`` served on the Unix socket at ``path`` (a stale socket file there is replaced)."""

    def __init__(self, store: MemoryStore, path: str) -> None:
        self.store = store
        self.path = path
        self.connections: set[asyncio.Transport] = set()
        self._server: asyncio.AbstractServer | None = None

    async def start(self) -> None:
        """Listen; OSError when the socket cannot be made."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)  # left by this slot's previous worker
        loop = asyncio.get_running_loop()
        self._server = await loop.create_unix_server(
            lambda: ShardProtocol(self.store, self.connections), self.path, backlog=LISTEN_BACKLOG,
        )

    async def close(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        for transport in list(self.connections):
            transport.abort()
        with contextlib.suppress(OSError):
            os.unlink(self.path)
