"""The HTTP module (``analytics.http``): JSON Lines batches POSTed, gzipped, to a collector.

Records wait in a bounded buffer (``buffer_size`` per worker, the batch being sent included;
beyond it records are dropped and counted) until ``batch_size`` of them are waiting or
``flush_interval_seconds`` has passed. A batch leaves the buffer only when the collector took it
(2xx) or refused it for good (any other status but 408, 429 and 5xx: the batch is dropped,
counted and logged, at most once a minute per kind). A connection error, a timeout, 408, 429 or
5xx is retried with exponential backoff and jitter, the batch kept, so a collector that is down
for a while loses nothing as long as the buffer holds. Shutdown sends what it can within
``shutdown_seconds`` and counts the rest as dropped.

One keep-alive session of the module's own, opened on start and closed last: the application's
shared session is closed before analytics is flushed.
"""

from __future__ import annotations

import asyncio
import enum
import gzip
import logging
import random
from typing import Any

import aiohttp
import orjson

from hbserver import SERVER_HEADER_VALUE
from hbserver.analytics.buffered import BufferedModule
from hbserver.logsetup import LogLimiter
from hbserver.metrics import Metrics

log = logging.getLogger("hbserver.analytics")

REQUEST_TIMEOUT_SECONDS = 10.0  # one POST, connection included
BACKOFF_FIRST_SECONDS = 0.5
BACKOFF_MAX_SECONDS = 30.0
GZIP_LEVEL = 5
MAX_ANSWER_BYTES = 64 * 1024  # a collector's answer read to keep the connection; longer ones close it
LOG_EVERY_SECONDS = 60.0
HEADERS = {
    "Content-Type": "application/x-ndjson",
    "Content-Encoding": "gzip",
    "User-Agent": SERVER_HEADER_VALUE,
}


class Verdict(enum.Enum):
    SENT = "sent"
    REFUSED = "refused"  # for good: the batch is dropped
    RETRY = "retry"


def encode_batch(records: list[dict[str, Any]]) -> bytes:
    """JSON Lines, gzipped (run in a thread: a batch of big records costs milliseconds)."""
    data = b"".join([orjson.dumps(record) + b"\n" for record in records])
    return gzip.compress(data, compresslevel=GZIP_LEVEL, mtime=0)


def backoff_seconds(attempt: int, first: float, cap: float, rand: float) -> float:
    """The wait before retry ``attempt`` (0, 1, ...): ``first`` doubling up to ``cap``, then a
    random point in its upper half (``rand`` in [0, 1)) so that workers do not retry in step."""
    delay = min(cap, first * 2 ** min(attempt, 32))
    return delay / 2 + delay / 2 * rand


class HttpModule(BufferedModule):
    name = "http"
    component = "http"  # hbserver's own module (PBS-Go has none like it): its activity component name

    def __init__(
        self,
        endpoint: str,
        metrics: Metrics,
        *,
        batch_size: int = 500,
        flush_interval: float = 5.0,
        buffer_size: int = 10000,
        request_timeout: float = REQUEST_TIMEOUT_SECONDS,
        shutdown_seconds: float = 10.0,
        backoff_first: float = BACKOFF_FIRST_SECONDS,
        backoff_max: float = BACKOFF_MAX_SECONDS,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        if flush_interval <= 0 or request_timeout <= 0 or shutdown_seconds < 0:
            raise ValueError("flush_interval and request_timeout must be > 0, shutdown_seconds >= 0")
        if backoff_first <= 0 or backoff_max < backoff_first:
            raise ValueError("backoff_first must be > 0 and backoff_max >= backoff_first")
        super().__init__(metrics, buffer_size)
        self.endpoint = endpoint
        self.batch_size = self.wake_size = batch_size
        self.flush_interval = flush_interval
        self.request_timeout = request_timeout
        self.shutdown_seconds = shutdown_seconds
        self.backoff_first = backoff_first
        self.backoff_max = backoff_max
        self._stop = asyncio.Event()
        self._session: aiohttp.ClientSession | None = None
        self._warn = LogLimiter(log, LOG_EVERY_SECONDS, count_held=True)

    async def open(self) -> None:
        self._open_session()

    def _open_session(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=4, enable_cleanup_closed=True),
                cookie_jar=aiohttp.DummyCookieJar(),
                timeout=aiohttp.ClientTimeout(total=self.request_timeout),
            )
        return self._session

    async def shutdown(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def _run(self) -> None:
        """A batch as soon as ``batch_size`` records wait; whatever waits every ``flush_interval``."""
        buffer = self._buffer
        while not self._closing:
            timed_out = False
            try:
                await asyncio.wait_for(self._wakeup.wait(), self.flush_interval)
            except TimeoutError:
                timed_out = True
            self._wakeup.clear()
            due = len(buffer) if timed_out else 0  # the records that have waited long enough
            try:
                while not self._closing and (due > 0 or len(buffer) >= self.batch_size):
                    sent = await self._send_head(None)
                    if not sent:
                        break
                    due -= sent
            except Exception:  # a bug must not stop delivery for good; the batch stays buffered
                log.exception("analytics module http: delivery failed")

    async def close(self) -> None:
        """Stop accepting; send what is buffered within ``shutdown_seconds``; count the rest as dropped."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.shutdown_seconds
        self._closing = True
        self._stop.set()
        self._wakeup.set()
        task, self._task = self._task, None
        if task is not None:  # it ends after the POST under way (no more waiting to retry)
            done, _ = await asyncio.wait({task}, timeout=self.shutdown_seconds)
            if not done:
                task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
            except Exception:
                log.exception("analytics module http: the delivering task failed")
        while self._buffer and loop.time() < deadline:
            if not await self._send_head(deadline):
                break
        if self._buffer:
            log.warning("analytics module http: %d records not delivered by shutdown", len(self._buffer))
            self.count_dropped(len(self._buffer))
            self._buffer.clear()
        await self.shutdown()

    async def _send_head(self, deadline: float | None) -> int:
        """Deliver the first batch of the buffer, retrying until the collector takes or refuses it.

        Returns how many records left the buffer: 0 when it gave up (stopping, or ``deadline``, the
        shutdown's, passed), the batch then still at the head of the buffer.
        """
        buffer = self._buffer
        n = min(len(buffer), self.batch_size)
        if n == 0:
            return 0
        try:
            body = await asyncio.to_thread(encode_batch, buffer[:n])
        except Exception:  # a record JSON cannot carry: nothing would ever take this batch
            log.exception("analytics module http: a batch of %d records cannot be encoded; dropped", n)
            return self._drop_head(n)
        loop = asyncio.get_running_loop()
        attempt = 0
        while True:
            verdict = await self._post(body, n, deadline)
            if verdict is Verdict.SENT:
                del buffer[:n]
                return n
            if verdict is Verdict.REFUSED:
                return self._drop_head(n)
            delay = backoff_seconds(attempt, self.backoff_first, self.backoff_max, random.random())
            attempt += 1
            if deadline is None:
                try:  # the wait ends early when the module stops: shutdown takes over
                    await asyncio.wait_for(self._stop.wait(), delay)
                    return 0
                except TimeoutError:
                    continue
            left = deadline - loop.time()
            if left <= 0:
                return 0
            await asyncio.sleep(min(delay, left))

    def _drop_head(self, n: int) -> int:
        del self._buffer[:n]
        self.count_dropped(n)
        return n

    async def _post(self, body: bytes, n: int, deadline: float | None) -> Verdict:
        timeout = self.request_timeout
        if deadline is not None:
            timeout = min(timeout, deadline - asyncio.get_running_loop().time())
            if timeout <= 0:
                return Verdict.RETRY
        session = self._open_session()
        try:
            async with session.post(
                self.endpoint, data=body, headers=HEADERS, allow_redirects=False,
                timeout=aiohttp.ClientTimeout(total=timeout),
            ) as response:
                status = response.status
                length = response.content_length
                if length is not None and length <= MAX_ANSWER_BYTES:
                    await response.read()  # read to the end: the connection is kept
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            self._warn.warning("unreachable", "analytics module http: cannot post to the collector (%s: %s); "
                               "retrying", exc.__class__.__name__, exc)
            return Verdict.RETRY
        if 200 <= status < 300:
            return Verdict.SENT
        if status in (408, 429) or status >= 500:
            self._warn.warning("failing", "analytics module http: the collector answered %d; retrying", status)
            return Verdict.RETRY
        self._warn.warning("refused", "analytics module http: the collector answered %d; %d records dropped",
                           status, n)
        return Verdict.REFUSED
