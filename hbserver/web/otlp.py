"""The OTLP/HTTP span exporter, JSON encoding (``POST <endpoint>``, ``Content-Type: application/json``).

Like OTel's batch span processor: finished spans wait in a bounded queue (``max_queue_size``; a
span that does not fit is dropped and counted, ``tracing_spans{outcome="queue_full"}``); a batch of
up to ``max_export_batch_size`` leaves when that many wait or every ``schedule_delay_ms``, over the
application's shared keep-alive session, each POST within ``timeout_ms``. A batch the collector
does not take (non-2xx, connection error, timeout) is dropped and counted (``failed``; logged at
most once a minute): traces are samples, and a retry queue would only grow while a collector is down.
:meth:`OtlpExporter.close` (SIGTERM, after in-flight requests) exports what waits within
``timeout_ms``, before the shared session closes.

The encoding is OTLP's JSON mapping of ``ExportTraceServiceRequest``: hex ids, times and int64
attribute values as decimal strings, enum values as numbers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import aiohttp
import orjson
from aiohttp import web

from hbserver import SERVER_HEADER_VALUE, __version__
from hbserver.config import Tracing
from hbserver.logsetup import LogLimiter
from hbserver.metrics import Metrics
from hbserver.web.tracing import STATUS_UNSET, TRACER, AttrValue, Sampler, Span, Tracer

log = logging.getLogger("hbserver.tracing")

SCOPE = {"name": "hbserver", "version": __version__}
MAX_ANSWER_BYTES = 64 * 1024
LOG_EVERY_SECONDS = 60.0


def attribute(key: str, value: AttrValue) -> dict[str, Any]:
    if isinstance(value, bool):  # before int: a bool is one
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": str(value)}}


def span_json(span: Span) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": f"{span.trace_id:032x}",
        "spanId": f"{span.span_id:016x}",
        "name": span.name,
        "kind": span.kind,
        "startTimeUnixNano": str(span.start_ns),
        "endTimeUnixNano": str(span.end_ns),
        "attributes": [attribute(k, v) for k, v in span.attributes.items()],
        "status": {},
    }
    if span.parent_id:
        out["parentSpanId"] = f"{span.parent_id:016x}"
    if span.status != STATUS_UNSET:
        out["status"] = (
            {"code": span.status, "message": span.status_message} if span.status_message else {"code": span.status}
        )
    return out


def resource_attributes(service_name: str, extra: Mapping[str, str]) -> list[dict[str, Any]]:
    values: dict[str, AttrValue] = {"service.version": __version__, "process.pid": os.getpid(), **extra}
    values["service.name"] = service_name
    return [attribute(k, v) for k, v in values.items()]


def encode(spans: list[Span], resource: list[dict[str, Any]]) -> bytes:
    """One ``ExportTraceServiceRequest`` (all spans under one resource and one scope)."""
    return orjson.dumps({"resourceSpans": [{
        "resource": {"attributes": resource},
        "scopeSpans": [{"scope": SCOPE, "spans": [span_json(span) for span in spans]}],
    }]})  # fmt: skip


class OtlpExporter:
    """Bounded span queue and the task that exports it; ``session`` gives the shared ClientSession."""

    def __init__(
        self,
        endpoint: str,
        session: Callable[[], aiohttp.ClientSession],
        metrics: Metrics,
        *,
        service_name: str = "hbserver",
        resource: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        max_queue_size: int = 2048,
        max_export_batch_size: int = 512,
        schedule_delay: float = 5.0,
        timeout: float = 10.0,
    ) -> None:
        if max_queue_size < 1 or not 1 <= max_export_batch_size <= max_queue_size:
            raise ValueError("need 1 <= max_export_batch_size <= max_queue_size")
        if schedule_delay <= 0 or timeout <= 0:
            raise ValueError("schedule_delay and timeout must be > 0")
        self.endpoint = endpoint
        self.session = session
        self.headers = {"User-Agent": SERVER_HEADER_VALUE, **(headers or {}), "Content-Type": "application/json"}
        self.resource = resource_attributes(service_name, resource or {})
        self.max_queue_size = max_queue_size
        self.batch_size = max_export_batch_size
        self.schedule_delay = schedule_delay
        self.timeout = timeout
        self.queue: deque[Span] = deque()
        self._wakeup = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        family = metrics.tracing_spans
        self._exported = metrics.counter(family, "exported")
        self._queue_full = metrics.counter(family, "queue_full")
        self._failed = metrics.counter(family, "failed")
        self._warn = LogLimiter(log, LOG_EVERY_SECONDS, count_held=True)

    def add(self, span: Span) -> None:
        """Queue a finished span (never blocks; dropped and counted when the queue is full)."""
        queue = self.queue
        if len(queue) >= self.max_queue_size or self._closing:
            self._queue_full.inc()
            return
        queue.append(span)
        if len(queue) >= self.batch_size:
            self._wakeup.set()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="otlp-export")

    async def _run(self) -> None:
        while not self._closing:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wakeup.wait(), self.schedule_delay)
            self._wakeup.clear()
            try:
                while self.queue and not self._closing:
                    await self.export_batch()
                    if len(self.queue) < self.batch_size:
                        break  # the rest waits for the next delay or a full batch
            except Exception:  # a bug must not stop the exports for good
                log.exception("tracing: export failed")

    async def export_batch(self, timeout: float | None = None) -> bool:
        """POST the queue's first batch; True when the collector took it. The batch leaves the queue
        either way (a failed one is counted)."""
        queue = self.queue
        batch = [queue.popleft() for _ in range(min(len(queue), self.batch_size))]
        if not batch:
            return True
        body = encode(batch, self.resource)
        try:
            async with self.session().post(
                self.endpoint,
                data=body,
                headers=self.headers,
                allow_redirects=False,
                timeout=aiohttp.ClientTimeout(total=timeout or self.timeout),
            ) as response:
                status = response.status
                if (response.content_length or 0) <= MAX_ANSWER_BYTES:
                    await response.read()  # read to the end: the connection is kept
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            self._warn.warning(
                "unreachable",
                "tracing: cannot post spans to %s (%s: %s); %d spans dropped",
                self.endpoint,
                exc.__class__.__name__,
                exc,
                len(batch),
            )
            self._failed.inc(len(batch))
            return False
        if 200 <= status < 300:
            self._exported.inc(len(batch))
            return True
        self._warn.warning("refused", "tracing: the collector answered %d; %d spans dropped", status, len(batch))
        self._failed.inc(len(batch))
        return False

    async def close(self) -> None:
        """Stop the task, then export what waits within ``timeout`` (the shutdown's share)."""
        self._closing = True
        self._wakeup.set()
        task, self._task = self._task, None
        if task is not None:
            done, _ = await asyncio.wait({task}, timeout=self.timeout)
            if not done:
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        while self.queue:
            left = deadline - loop.time()
            if left <= 0:
                self._failed.inc(len(self.queue))
                log.warning("tracing: %d spans not exported by shutdown", len(self.queue))
                self.queue.clear()
                break
            await self.export_batch(left)


def build_tracer(config: Tracing, session: Callable[[], aiohttp.ClientSession], metrics: Metrics) -> Tracer | None:
    """The worker's tracer and its exporter (``tracer.sink``), or None when ``tracing.enabled`` is off."""
    if not config.enabled:
        return None
    exporter = OtlpExporter(
        config.endpoint,
        session,
        metrics,
        service_name=config.service_name,
        resource=config.resource_attributes,
        headers=config.headers,
        max_queue_size=config.max_queue_size,
        max_export_batch_size=config.max_export_batch_size,
        schedule_delay=config.schedule_delay_ms / 1000,
        timeout=config.timeout_ms / 1000,
    )
    return Tracer(Sampler(config.sampler, config.sampler_arg), exporter)


async def exporter_lifetime(app: web.Application) -> AsyncIterator[None]:
    """An aiohttp ``cleanup_ctx``: the export task runs while the app does; on shutdown (after in-flight
    requests) what waits is exported. Append it after the shared session's lifetime, so it ends first."""
    exporter = app[TRACER].sink
    assert isinstance(exporter, OtlpExporter)
    exporter.start()
    yield
    await exporter.close()
