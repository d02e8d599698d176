"""PBS-Go's analytics buffers (pubstack's event channels, agma's logger), bounded.

Serialized events gather in one batch; the batch leaves when it holds ``count`` events or ``size``
bytes, and on every tick of ``timeout`` whatever is there leaves (PBS-Go's ticker). A batch that
left waits in a queue of at most ``max_waiting`` batches for the one task that sends them, one at a
time; a batch that finds the queue full is dropped. PBS-Go sends each batch once (no retry): a batch
the collector refuses, or that cannot reach it, is dropped too. Every event dropped is counted in
``hbserver_analytics_dropped_events{module}``. :meth:`Batcher.close` sends the batch under way and
the queue within the shutdown's time, and counts the rest as dropped. ``release``, when given, is
told the bytes of every event that leaves (sent, refused or dropped): a budget shared by several
batchers (hbserver.analytics.account_http) is kept with it.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import aiohttp

from hbserver.logsetup import LogLimiter
from hbserver.metrics import Metrics

log = logging.getLogger("hbserver.analytics")

MAX_WAITING_BATCHES = 8
LOG_EVERY_SECONDS = 60.0  # a collector's failures are logged at most this often (per kind)

# (url, events) -> whether the collector took them
Send = Callable[[str, list[bytes]], Awaitable[bool]]


@dataclass(frozen=True, slots=True)
class Limits:
    count: int  # events in a batch
    size: int  # bytes in a batch (its events, plus ``per_event`` each and ``base``)
    timeout: float  # seconds between two ticks
    per_event: int = 0  # bytes a batch adds per event (agma's commas)
    base: int = 0  # bytes a batch has before any event (agma's "[")


class Batcher:
    """One buffer, one sending task; ``url`` is where the next batch goes (it may change)."""

    def __init__(
        self, module: str, url: str, limits: Limits, send: Send, metrics: Metrics,
        max_waiting: int = MAX_WAITING_BATCHES, release: Callable[[int], None] | None = None,
    ) -> None:  # fmt: skip
        if limits.count < 1 or limits.size < 1 or limits.timeout <= 0 or max_waiting < 1:
            raise ValueError("count, size, timeout and max_waiting must be positive")
        self.module, self.url, self.limits = module, url, limits
        self._send = send
        self._events: list[bytes] = []
        self._size = limits.base
        self._waiting: deque[tuple[str, list[bytes]]] = deque()
        self._max_waiting = max_waiting
        self._wakeup = asyncio.Event()
        self._closing = False
        self._tasks: list[asyncio.Task[None]] = []
        self._dropped = metrics.counter(metrics.analytics_dropped, module)
        self._release = release

    def push(self, event: bytes) -> bool:
        """Buffer one event (no I/O); False when it was dropped (closing)."""
        if self._closing:
            self._dropped.inc()
            return False
        self._events.append(event)
        self._size += len(event) + self.limits.per_event
        if len(self._events) >= self.limits.count or self._size >= self.limits.size:
            self.flush()
        return True

    def flush(self) -> None:
        """The batch under way leaves (to the current ``url``)."""
        if not self._events:
            return
        batch, self._events, self._size = self._events, [], self.limits.base
        if len(self._waiting) >= self._max_waiting:
            log.warning("analytics module %s: %d batches wait already; %d events dropped",
                        self.module, len(self._waiting), len(batch))  # fmt: skip
            self._dropped.inc(len(batch))
            self._released(batch)
            return
        self._waiting.append((self.url, batch))
        self._wakeup.set()

    def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._sender(), name=f"analytics-{self.module}-send"),
            asyncio.create_task(self._ticker(), name=f"analytics-{self.module}-tick"),
        ]

    async def _ticker(self) -> None:
        while True:
            await asyncio.sleep(self.limits.timeout)
            self.flush()

    async def _sender(self) -> None:
        """Sends the waiting batches, one at a time; ends once closing with none left."""
        while not (self._closing and not self._waiting):
            if not self._waiting:
                await self._wakeup.wait()
                self._wakeup.clear()
                continue
            await self._deliver(*self._waiting.popleft())

    def _released(self, batch: list[bytes]) -> None:
        if self._release is not None:
            self._release(sum(map(len, batch)))

    async def _deliver(self, url: str, batch: list[bytes]) -> None:
        try:
            taken = await self._send(url, batch)
        except asyncio.CancelledError:  # shutdown's time is up: this batch is lost
            self._dropped.inc(len(batch))
            self._released(batch)
            raise
        except Exception:
            log.exception("analytics module %s: a batch could not be sent", self.module)
            taken = False
        self._released(batch)
        if not taken:
            self._dropped.inc(len(batch))

    async def close(self, seconds: float) -> None:
        """Stop taking events; send what is buffered within ``seconds``; count the rest as dropped."""
        self._closing = True
        self.flush()
        tasks, self._tasks = self._tasks, []
        for task in tasks[1:]:
            task.cancel()  # the ticker
        if tasks:
            sender = tasks[0]
            self._wakeup.set()
            done, _ = await asyncio.wait({sender}, timeout=seconds)
            if not done:
                sender.cancel()
                await asyncio.gather(sender, return_exceptions=True)
        left = sum(len(batch) for _, batch in self._waiting)
        if left:
            log.warning("analytics module %s: %d events not sent by shutdown", self.module, left)
            self._dropped.inc(left)
            for _, batch in self._waiting:
                self._released(batch)
            self._waiting.clear()


class Poster:
    """The module's own HTTP session (a few keep-alive connections); ``timeout`` bounds each call."""

    MAX_ANSWER_BYTES = 64 * 1024  # a collector's answer read whole (the connection is kept); longer ones close it

    def __init__(self, module: str, timeout: float) -> None:
        self.module = module
        self.timeout = timeout
        self._session: aiohttp.ClientSession | None = None
        self._warn = LogLimiter(log, LOG_EVERY_SECONDS, count_held=True)

    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=4, enable_cleanup_closed=True),
                cookie_jar=aiohttp.DummyCookieJar(),
                timeout=aiohttp.ClientTimeout(total=self.timeout),
            )
        return self._session

    async def request(
        self, method: str, url: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, bytes]:
        """The answer's status and body (at most MAX_ANSWER_BYTES; longer: empty); (0, b"") when the
        collector cannot be reached in time."""
        try:
            async with self.session().request(method, url, data=body, headers=headers, allow_redirects=False) as answer:
                length = answer.content_length
                data = b""
                if length is None or length <= self.MAX_ANSWER_BYTES:
                    data = await answer.content.read(self.MAX_ANSWER_BYTES + 1)
                return answer.status, data if len(data) <= self.MAX_ANSWER_BYTES else b""
        except (aiohttp.ClientError, OSError, TimeoutError, ValueError) as exc:
            self._warn.warning("unreachable", "analytics module %s: cannot reach %s (%s: %s)", self.module, url,
                               exc.__class__.__name__, exc)  # fmt: skip
            return 0, b""

    async def deliver(self, url: str, body: bytes, headers: dict[str, str] | None, any_2xx: bool = False) -> bool:
        """POST ``body``: True when the collector took it (200, or any 2xx with ``any_2xx``); a refusal
        is logged (an unreachable collector is, by :meth:`request`)."""
        status, _ = await self.request("POST", url, body, headers)
        if status == 200 or (any_2xx and 200 <= status < 300):
            return True
        if status:
            self.refused(url, status)
        return False

    def refused(self, url: str, status: int) -> None:
        self._warn.warning("refused", "analytics module %s: %s answered %d instead of 200", self.module, url, status)

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
