"""Cache changes told to every worker: what one admin request changes, every worker serves.

An admin request (:mod:`hbserver.endpoints.stored_admin`) reaches one worker only (the admin port is
shared with SO_REUSEPORT), but each worker has its own in-memory caches. So the worker that takes it
applies the change and sends it to each other worker of its supervisor, over the Unix socket that
worker listens on in the supervisor's private run directory (``stored-<index>.sock``, as the cache
shards' sockets), and answers only once every worker has confirmed: the next auction, on any
worker, sees the change.

A message is one JSON document, sent as a 4-byte big-endian length and the document; the peer
applies it on its own event loop and answers ``ok``. Documents over ``max_bytes`` are refused, and a
peer has :data:`PEER_TIMEOUT_SECONDS` to confirm. A worker that did not confirm (restarting, say) is
named in the answer; a restarted worker starts with empty caches, so what it lacks is only a save.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import struct
from collections.abc import Callable
from typing import Any

import orjson

log = logging.getLogger("hbserver.stored")

PEER_TIMEOUT_SECONDS = 2.0
_LENGTH = struct.Struct(">I")
_OK = b"ok"

Message = dict[str, Any]
Handler = Callable[[Message], None]


def socket_path(run_dir: str, index: int) -> str:
    return os.path.join(run_dir, f"stored-{index}.sock")


class ChangeBus:
    """Worker ``index`` of ``count``: applies a message here and on every other worker.

    With one worker (``count`` 1 or no run directory) a message is applied here alone."""

    def __init__(
        self,
        handler: Handler,
        index: int = 0,
        count: int = 1,
        run_dir: str | None = None,
        max_bytes: int = 1 << 20,
        timeout: float = PEER_TIMEOUT_SECONDS,
    ) -> None:
        self.handler = handler
        self.index = index
        self.max_bytes = max_bytes
        self.timeout = timeout
        shared = run_dir is not None and count > 1
        self.path = socket_path(run_dir, index) if shared and run_dir else None
        self.peers = {i: socket_path(run_dir, i) for i in range(count) if i != index} if shared and run_dir else {}
        self._server: asyncio.AbstractServer | None = None

    async def start(self) -> None:
        """Listen for the other workers (OSError when the socket cannot be made)."""
        if self.path is None or self._server is not None:
            return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)  # left by this slot's previous worker
        self._server = await asyncio.start_unix_server(self._serve, self.path)

    async def close(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        if self.path is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.path)

    async def publish(self, message: Message) -> list[int]:
        """Apply ``message`` here and on every other worker; the indexes of the workers that did not confirm."""
        self.handler(message)
        if not self.peers:
            return []
        frame = orjson.dumps(message)
        indexes = list(self.peers)
        answers = await asyncio.gather(*(self._send(self.peers[i], frame) for i in indexes))
        failed = [i for i, ok in zip(indexes, answers, strict=True) if not ok]
        if failed:
            log.warning("stored data: workers %s did not confirm a cache change", failed)
        return failed

    async def _send(self, path: str, frame: bytes) -> bool:
        writer = None
        try:
            async with asyncio.timeout(self.timeout):
                reader, writer = await asyncio.open_unix_connection(path)
                writer.write(_LENGTH.pack(len(frame)) + frame)
                await writer.drain()
                return await reader.read(len(_OK)) == _OK
        except (OSError, TimeoutError):
            return False
        finally:
            if writer is not None:
                writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(self.timeout):
                (length,) = _LENGTH.unpack(await reader.readexactly(_LENGTH.size))
                if length > self.max_bytes:
                    log.error(
                        "stored data: a peer's cache change of %d bytes is over %d; refused", length, self.max_bytes
                    )
                    return
                message = orjson.loads(await reader.readexactly(length))
            self.handler(message)
            writer.write(_OK)
            await writer.drain()
        except (OSError, TimeoutError, asyncio.IncompleteReadError, orjson.JSONDecodeError) as exc:
            log.warning("stored data: a peer's cache change was not read: %s", exc.__class__.__name__)
        except Exception:  # a bug in applying it: the sender hears no ok
            log.exception("stored data: a peer's cache change could not be applied")
        finally:
            writer.close()


def from_environment(handler: Handler, max_bytes: int) -> ChangeBus:
    """This worker's bus: its peers when a supervisor runs several workers, else none."""
    from hbserver.server import RUN_DIR_ENV, WORKER_COUNT_ENV, WORKER_INDEX_ENV

    return ChangeBus(
        handler,
        int(os.environ.get(WORKER_INDEX_ENV) or 0),
        int(os.environ.get(WORKER_COUNT_ENV) or 1),
        os.environ.get(RUN_DIR_ENV) or None,
        max_bytes,
    )
