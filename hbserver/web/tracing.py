"""OpenTelemetry tracing without the SDK: spans, W3C ``traceparent``, head sampling, one span per request.

Off by default (``tracing.enabled``). When off nothing here runs: no :class:`Tracer` exists, routes
are registered unwrapped (:class:`hbserver.web.endpoint.Routes`) and the auction is not instrumented
(:mod:`hbserver.auction.tracing`), so a request pays nothing, not even a context-variable read.

When on, :func:`traced` wraps each route outside :func:`hbserver.web.endpoint.wrap`: it reads the
request's ``traceparent`` (W3C Trace Context level 1), decides sampling once per trace (head
sampling: OTel's ``traceidratio`` on the trace id's low 63 bits, optionally parent-based: a sampled
parent is followed whatever the ratio, an unsampled one is not), and for a sampled request opens the
server span and makes it :data:`CURRENT` for the stages below. An unsampled request builds no span.
Finished spans go to the exporter (:class:`hbserver.web.otlp.OtlpExporter`), which batches them.

``traceparent`` is not sent on to bidders (nor is it by PBS-Go or PBS-Java): a bidder is a third
party, the trace ids are the host's, and no bidder span could be joined to the trace anyway.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any, Protocol

from aiohttp import web

AttrValue = str | int | bool | float

KIND_INTERNAL = 1  # OTLP's Span.SpanKind
KIND_SERVER = 2
KIND_CLIENT = 3
STATUS_UNSET = 0  # OTLP's Status.StatusCode
STATUS_OK = 1
STATUS_ERROR = 2

TRACEPARENT = "traceparent"
_TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?")
_MAX_RATIO_BOUND = 1 << 63

# The span the running request's stages hang under; set only by a traced route (tracing on).
CURRENT: ContextVar[Span | None] = ContextVar("hbserver_current_span", default=None)

_getrandbits = random.getrandbits
_time_ns = time.time_ns


class Span:
    """One OTLP span; ids are ints (formatted as hex only when exported)."""

    __slots__ = (
        "attributes",
        "end_ns",
        "kind",
        "name",
        "parent_id",
        "span_id",
        "start_ns",
        "status",
        "status_message",
        "trace_id",
    )

    def __init__(
        self, name: str, trace_id: int, parent_id: int, kind: int = KIND_INTERNAL, start_ns: int | None = None
    ) -> None:
        self.name = name
        self.trace_id = trace_id
        self.parent_id = parent_id  # 0: a root span
        self.span_id = new_span_id()
        self.kind = kind
        self.start_ns = _time_ns() if start_ns is None else start_ns
        self.end_ns = 0
        self.attributes: dict[str, AttrValue] = {}
        self.status = STATUS_UNSET
        self.status_message = ""

    def child(self, name: str, kind: int = KIND_INTERNAL, start_ns: int | None = None) -> Span:
        return Span(name, self.trace_id, self.span_id, kind, start_ns)

    def fail(self, message: str = "") -> None:
        self.status = STATUS_ERROR
        self.status_message = message


def new_span_id() -> int:
    return _getrandbits(64) or 1  # all zero is invalid


def new_trace_id() -> int:
    return _getrandbits(128) or 1


class SpanSink(Protocol):
    def add(self, span: Span) -> None: ...


def parse_traceparent(value: str) -> tuple[int, int, bool] | None:
    """(trace id, parent span id, sampled) from a W3C ``traceparent``; None when it is not valid
    (the request then starts a trace of its own). A later version's extra fields are ignored, as
    the specification asks; version ff and all-zero ids are refused."""
    match = _TRACEPARENT.fullmatch(value.strip())
    if match is None:
        return None
    version, trace_hex, parent_hex, flags = match.group(1, 2, 3, 4)
    if version == "ff" or (version == "00" and match.group(5)):
        return None
    trace_id, parent_id = int(trace_hex, 16), int(parent_hex, 16)
    if not trace_id or not parent_id:
        return None
    return trace_id, parent_id, bool(int(flags, 16) & 1)


def format_traceparent(span: Span) -> str:
    return f"00-{span.trace_id:032x}-{span.span_id:016x}-01"


class Sampler:
    """OTel's samplers by their ``OTEL_TRACES_SAMPLER`` names, ``ratio`` their ``..._ARG``."""

    __slots__ = ("bound", "parent_based")

    def __init__(self, name: str, ratio: float) -> None:
        base = name.removeprefix("parentbased_")
        self.parent_based = name.startswith("parentbased_")
        if base == "always_on":
            ratio = 1.0
        elif base == "always_off":
            ratio = 0.0
        elif base != "traceidratio":
            raise ValueError(f"unknown sampler {name!r}")
        if not 0 <= ratio <= 1:
            raise ValueError(f"sampler ratio must be between 0 and 1, got {ratio}")
        self.bound = int(ratio * _MAX_RATIO_BOUND)

    def sampled(self, trace_id: int, parent_sampled: bool | None) -> bool:
        """``parent_sampled``: the incoming ``traceparent``'s flag, None without one."""
        if self.parent_based and parent_sampled is not None:
            return parent_sampled
        return (trace_id & 0xFFFFFFFFFFFFFFFF) >> 1 < self.bound  # OTel's TraceIdRatioBased


class Tracer:
    """Sampling and span ends for one worker; ``sink`` batches finished spans for export."""

    def __init__(self, sampler: Sampler, sink: SpanSink) -> None:
        self.sampler = sampler
        self.sink = sink

    def start_request(self, name: str, traceparent: str | None) -> Span | None:
        """The server span of a request, or None when its trace is not sampled."""
        parent = parse_traceparent(traceparent) if traceparent is not None else None
        if parent is None:
            trace_id = new_trace_id()
            if not self.sampler.sampled(trace_id, None):
                return None
            return Span(name, trace_id, 0, KIND_SERVER)
        trace_id, parent_id, parent_sampled = parent
        if not self.sampler.sampled(trace_id, parent_sampled):
            return None
        return Span(name, trace_id, parent_id, KIND_SERVER)

    def end(self, span: Span, end_ns: int | None = None) -> None:
        span.end_ns = _time_ns() if end_ns is None else end_ns
        self.sink.add(span)


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
_set_current = CURRENT.set


def traced(handler: Handler, method: str, route: str, tracer: Tracer) -> Handler:
    """``handler`` (already :func:`~hbserver.web.endpoint.wrap`-ped: it never raises but on
    cancellation) with a server span per sampled request: OTel's HTTP attributes, the request id,
    and an error status on a 5xx. Only the route (no query: it may carry user data) is recorded."""
    name = f"{method} {route}"
    start_request = tracer.start_request

    async def traced_handler(request: web.Request) -> web.StreamResponse:
        span = start_request(name, request.headers.get(TRACEPARENT))
        _set_current(span)  # set, never reset: the next request on this task sets its own
        if span is None:
            return await handler(request)
        attributes = span.attributes
        attributes["http.request.method"] = request.method
        attributes["http.route"] = route
        try:
            response = await handler(request)
        except BaseException:
            attributes["http.response.status_code"] = 499  # cancelled: the client or the shutdown
            tracer.end(span)
            raise
        status = response.status
        attributes["http.response.status_code"] = status
        request_id = response.headers.get("X-Request-Id")
        if request_id is not None:
            attributes["hbserver.request_id"] = request_id
        if status >= 500:
            span.fail()
        tracer.end(span)
        return response

    traced_handler.__name__ = getattr(handler, "__name__", "traced_handler")
    return traced_handler


def set_attributes(values: dict[str, Any]) -> None:
    """Attributes on the current span (the request's), when there is one."""
    span = CURRENT.get()
    if span is not None:
        span.attributes.update(values)


TRACER: web.AppKey[Tracer] = web.AppKey("tracer")
