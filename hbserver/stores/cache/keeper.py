"""The cache keeper: with several workers, the one process holding the memory cache store.

Each worker would otherwise hold a store of its own, and a ``GET /cache`` (a creative, a video
player) reaching another worker than the put would miss. So the supervisor forks this process
before the workers; it keeps one :class:`~hbserver.stores.cache.memory.MemoryStore` (same bound,
LRU eviction and TTLs as in a single worker) and serves it over a Unix socket in the supervisor's
private run directory (:mod:`.wire` frames; workers connect with :mod:`.shared`).

The keeper is single-threaded (uvloop): each request runs to completion, so puts are atomic and
need no lock. It ignores SIGINT and SIGTERM (the workers still draining need it) and stops when
the read end of its lifeline pipe reaches end of file: the supervisor and every worker forked
after it hold the write end, so it outlives all of them and no longer (a killed supervisor
included). :class:`Keeper` is the supervisor's side: start, restart after an unexpected exit (the
items are lost, workers answer store errors meanwhile), stop after the workers.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import logging
import os
import signal
import socket
import struct
import time
from typing import NoReturn, cast

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

# Workers find the keeper's socket in this variable (set by the supervisor before it forks them).
CACHE_SOCKET_ENV = "HBSERVER_CACHE_SOCKET"
SOCKET_NAME = "cache.sock"
PROCESS_NAME = b"hbserver-cache"  # what ps, top and /proc/<pid>/comm show (15 bytes at most)
LISTEN_BACKLOG = 512
QUICK_EXIT_SECONDS = 5.0  # a keeper dying sooner is restarted after RESTART_PAUSE_SECONDS
RESTART_PAUSE_SECONDS = 1.0
STOP_TIMEOUT_SECONDS = 5.0
GC_GEN0_THRESHOLD = 100_000  # as the workers' (hbserver.server): requests make no cyclic garbage
_SIGNALS = {signal.SIGINT, signal.SIGTERM}


class KeeperProtocol(asyncio.Protocol):
    """One worker's connection: frames in, answers out in the same order."""

    def __init__(self, store: MemoryStore, connections: set[asyncio.Transport]) -> None:
        self.store = store
        self.connections = connections
        self.max_frame = store.max_bytes + FRAME_SLACK_BYTES
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's are not asyncio.Transport subclasses
        self.connections.add(transport)

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
        """A worker that breaks the protocol (a bug) loses its connection; it reconnects."""
        log.error("cache keeper: %s; closing the connection", reason)
        self.buffer.clear()
        if self.transport is not None:
            self.transport.abort()


async def keep(sock: socket.socket, lifeline: int, max_bytes: int) -> int:
    """Serve a new store on the listening ``sock`` until ``lifeline`` reaches end of file."""
    loop = asyncio.get_running_loop()
    store = MemoryStore(max_bytes)
    connections: set[asyncio.Transport] = set()
    server = await loop.create_unix_server(lambda: KeeperProtocol(store, connections), sock=sock)
    ended: asyncio.Future[None] = loop.create_future()

    def lifeline_readable() -> None:
        with contextlib.suppress(OSError):
            if os.read(lifeline, 64):
                return  # nobody writes; only end of file matters
        if not ended.done():
            ended.set_result(None)

    loop.add_reader(lifeline, lifeline_readable)
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_GEN0_THRESHOLD, *gc.get_threshold()[1:])
    log.info("cache keeper serving the memory store (%d bytes) to the workers", max_bytes,
             extra={"worker_pid": os.getpid()})
    await ended
    loop.remove_reader(lifeline)
    server.close()
    for transport in list(connections):
        transport.abort()
    return 0


def _name_process(name: bytes) -> None:
    """Linux's ``prctl(PR_SET_NAME)``: the keeper is told apart from the workers in ps and top."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None).prctl(15, ctypes.c_char_p(name), 0, 0, 0)


def _run_keeper(sock: socket.socket, lifeline: int, max_bytes: int) -> NoReturn:
    """The forked keeper's whole life (SIGINT and SIGTERM still blocked, as at the fork)."""
    code = 1
    try:
        for sig in _SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGNALS)
        _name_process(PROCESS_NAME)
        import uvloop

        code = uvloop.run(keep(sock, lifeline, max_bytes))
    except BaseException:
        log.exception("cache keeper %d failed", os.getpid())
    finally:
        logging.shutdown()
        os._exit(code)


class Keeper:
    """The supervisor's handle on the keeper process."""

    def __init__(self, run_dir: str, max_bytes: int) -> None:
        self.path = os.path.join(run_dir, SOCKET_NAME)
        self.max_bytes = max_bytes
        self.pid = 0
        self.started = 0.0
        self._lifeline = -1  # the pipe's write end; closing it (with every worker gone) stops the keeper

    def start(self) -> None:
        """Listen on a fresh socket and fork the keeper onto it; OSError when the socket cannot be made.

        The socket listens before the fork, so a worker's first connection waits in its queue
        instead of being refused while the keeper starts.
        """
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(self.path)
            sock.listen(LISTEN_BACKLOG)
            read_end, write_end = os.pipe()
        except OSError:
            sock.close()
            raise
        # a SIGTERM meant for the process group must not reach the supervisor's handler in the child
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
        try:
            pid = os.fork()
            if pid == 0:
                os.close(write_end)
                _run_keeper(sock, read_end, self.max_bytes)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        sock.close()
        os.close(read_end)
        self.pid, self.started, self._lifeline = pid, time.monotonic(), write_end
        os.environ[CACHE_SOCKET_ENV] = self.path
        log.info("started cache keeper %d on %s", pid, self.path)

    def reap(self, pid: int, wait_status: int, restart: bool) -> bool:
        """Whether ``pid`` was the keeper; if it was and ``restart``, a new keeper takes its place."""
        if not pid or pid != self.pid:
            return False
        code = os.waitstatus_to_exitcode(wait_status)
        self.pid = 0
        self._close_lifeline()
        if not restart:
            if code != 0:
                log.error("cache keeper %d exited with status %d while stopping", pid, code)
            return True
        log.error("cache keeper %d exited unexpectedly with status %d; restarting it (its items are lost)", pid, code)
        if time.monotonic() - self.started < QUICK_EXIT_SECONDS:
            time.sleep(RESTART_PAUSE_SECONDS)
        try:
            self.start()
        except OSError as exc:
            log.error("cannot restart the cache keeper: %s", exc)
        return True

    def stop(self) -> None:
        """After the workers: end the keeper (killed if it lingers), remove its socket."""
        self._close_lifeline()
        if os.environ.get(CACHE_SOCKET_ENV) == self.path:
            del os.environ[CACHE_SOCKET_ENV]
        if self.pid:
            self._wait_for_exit(self.pid)
            self.pid = 0
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)

    @staticmethod
    def _wait_for_exit(pid: int) -> None:
        deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
        try:
            while not os.waitpid(pid, os.WNOHANG)[0]:
                if time.monotonic() > deadline:
                    log.error("cache keeper %d did not stop; killing it", pid)
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    return
                time.sleep(0.01)
        except ChildProcessError:  # reaped already
            pass

    def _close_lifeline(self) -> None:
        if self._lifeline >= 0:
            os.close(self._lifeline)
            self._lifeline = -1
