"""A bounded in-memory buffer drained by one background task: the base of delivering modules."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from hbserver.metrics import Metrics

log = logging.getLogger("hbserver.analytics")

DEFAULT_CAPACITY = 10000
# After the first record arrives the writer waits this long, so that one delivery (one write,
# one thread hand-off) carries many records instead of one.
BATCH_DELAY_SECONDS = 0.05


class BufferedModule:
    """Subclasses implement :meth:`deliver` (called off the hot path with a batch of records)."""

    name = "buffered"
    wake_size = 1  # records waiting that wake the delivering task

    def __init__(self, metrics: Metrics, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError("capacity must be >= 1")
        self.capacity = capacity
        self._buffer: list[dict[str, Any]] = []
        self._wakeup = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self._metrics = metrics
        self._dropped = metrics.counter(metrics.analytics_dropped, self.name)

    def log(self, record: dict[str, Any]) -> None:
        buffer = self._buffer
        if self._closing or len(buffer) >= self.capacity:
            self._dropped.inc()
            return
        buffer.append(record)
        metrics = self._metrics
        metrics.counter(metrics.analytics_events, self.name, record["event"]).inc()
        if len(buffer) >= self.wake_size and not self._wakeup.is_set():
            self._wakeup.set()

    def count_dropped(self, n: int) -> None:
        self._dropped.inc(n)

    async def start(self) -> None:
        await self.open()
        self._task = asyncio.create_task(self._run(), name=f"analytics-{self.name}")

    async def close(self) -> None:
        """Stop accepting, deliver what is buffered, release resources."""
        self._closing = True
        self._wakeup.set()
        if self._task is not None:
            await self._task
            self._task = None
        await self._flush()
        await self.shutdown()

    async def _run(self) -> None:
        while not self._closing:
            await self._wakeup.wait()
            if not self._closing:
                await asyncio.sleep(BATCH_DELAY_SECONDS)
            self._wakeup.clear()
            await self._flush()

    async def _flush(self) -> None:
        if not self._buffer:
            return
        batch, self._buffer = self._buffer, []
        try:
            await self.deliver(batch)
        except Exception:
            log.exception("analytics module %s lost %d records", self.name, len(batch))
            self.count_dropped(len(batch))

    async def open(self) -> None:
        """Acquire resources before the first delivery."""

    async def deliver(self, batch: list[dict[str, Any]]) -> None:
        raise NotImplementedError

    async def shutdown(self) -> None:
        """Release resources after the last delivery."""
