"""An open-loop HTTP/1.1 load generator: requests at a constant rate, latency from the scheduled time.

``python -m bench.openloop URL --rate R --duration S [--method M] [--body-file F] [--header 'K: V']
[--vary] [--bid-marker TEXT]`` prints one line of JSON (:meth:`OpenLoopResult.to_dict`).

``--vary``: the URL's path and query and the body are :mod:`bench.varied` templates, request *n* (from
1) rendered with *n* as wrk's ``varied.lua`` renders it (Content-Length per request); without it
every request is the same pre-encoded bytes. ``--bid-marker``: count the 2xx answers whose body
holds this text (``with_marker``), e.g. ``hb_pb`` for AMP answers with bids.

Why not wrk or ``hey -q``: both are closed-loop per connection (or worker): a slow answer delays
that connection's next request, so a stalled server is offered less load and the requests that
would have queued behind the stall are never measured (coordinated omission). Here request *i* is
due at ``start + i / rate`` whatever happened before; it goes out on an idle keep-alive connection,
or on a new one (up to ``max_connections``; past the cap it waits for a connection to free up), and
its latency runs from the time it was *due* to the last byte of its answer, so every wait a real
client would see is counted.

The generator checks itself: ``lag`` is how late it got round to each request (dispatch time minus
due time; the event loop's timers have ~1 ms granularity, so lag is 0 to 1 ms on an idle generator).
A run is flagged when the lag p99 exceeds :data:`LAG_P99_LIMIT_MS` (the generator, not the server,
set the pace) or when fewer than :data:`ACHIEVED_MIN_SHARE` of the offered rate was answered.

Timers are batched: one wake-up sends every request whose time has come (and after each answer
the generator looks whether the next one is due), so the cost per request is one write and one
parse. Latencies go into a log-linear histogram (:class:`Histogram`, under 1 % relative error,
memory bounded whatever the rate and duration). Requests still unanswered when the generator gives
up (``timeout_s`` after the last was due) count as ``timeout`` errors and enter the histogram at the
time waited so far, so giving up never makes the percentiles look better.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import math
import resource
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

LAG_P99_LIMIT_MS = 5.0
ACHIEVED_MIN_SHARE = 0.97
MAX_HEAD_BYTES = 65536

_clock: Callable[[], float] = time.monotonic


# --- the histogram ------------------------------------------------------------------------

_SUB_BITS = 7
_SUB = 1 << _SUB_BITS  # values below this (µs) are exact; above, 128 buckets per power of two


class Histogram:
    """Counts of durations in µs, log-linear buckets (HDR-like): relative error under 1/128."""

    __slots__ = ("counts", "max_us", "sum_us", "total")

    def __init__(self) -> None:
        self.counts: list[int] = [0] * (_SUB * 2)
        self.total = 0
        self.max_us = 0
        self.sum_us = 0

    def record(self, seconds: float) -> None:
        value = int(seconds * 1e6) if seconds > 0 else 0
        if value < _SUB:
            index = value
        else:
            shift = value.bit_length() - _SUB_BITS - 1
            index = (shift + 1) * _SUB + (value >> shift) - _SUB
        counts = self.counts
        if index >= len(counts):
            counts.extend([0] * (index + 1 - len(counts)))
        counts[index] += 1
        self.total += 1
        self.sum_us += value
        if value > self.max_us:
            self.max_us = value

    @staticmethod
    def _upper_us(index: int) -> int:
        """The largest value (µs) bucket ``index`` holds."""
        if index < _SUB:
            return index
        shift = index // _SUB - 1
        return (((index % _SUB) + _SUB + 1) << shift) - 1

    def percentile_ms(self, percent: float) -> float | None:
        """The value at ``percent`` (bucket upper bound, capped at the exact maximum); None if empty."""
        if not self.total:
            return None
        rank = max(1, math.ceil(self.total * percent / 100))
        seen = 0
        for index, count in enumerate(self.counts):
            seen += count
            if seen >= rank:
                return min(self._upper_us(index), self.max_us) / 1000
        return self.max_us / 1000

    def summary(self) -> dict[str, float | None]:
        return {
            "p50": self.percentile_ms(50),
            "p90": self.percentile_ms(90),
            "p99": self.percentile_ms(99),
            "max": self.max_us / 1000 if self.total else None,
            "mean": self.sum_us / self.total / 1000 if self.total else None,
        }


# --- the request --------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """Where to send and the pre-encoded request bytes (or, varied, how to render request *n*)."""

    host: str
    port: int
    request: bytes
    head: bool = False  # a HEAD request: answers carry no body
    render: Callable[[int], bytes] | None = None  # request n (from 1) of a varied run; None = ``request``

    @classmethod
    def build(
        cls,
        url: str,
        method: str = "GET",
        body: bytes | None = None,
        headers: Sequence[str] = (),
        *,
        vary: bool = False,
    ) -> Target:
        """The target for ``url`` (http only); ``headers`` as ``"Name: value"`` lines; with ``vary``, the
        path, query and body are :mod:`bench.varied` templates rendered per request."""
        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"only http://host[:port]/path URLs are supported, got {url!r}")
        port = parts.port or 80
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        lines = [f"Host: {parts.netloc}"]
        names = {"host"}
        for header in headers:
            name, sep, value = header.partition(":")
            if not sep or not name.strip():
                raise ValueError(f"a header is 'Name: value', got {header!r}")
            lines.append(f"{name.strip()}: {value.strip()}")
            names.add(name.strip().lower())
        if vary:
            if "content-length" in names:
                raise ValueError("a varied request's Content-Length is its own: do not set it")
            render = VariedRequest(method, path, "\r\n".join(lines), body)
            return cls(parts.hostname, port, render(1), head=method == "HEAD", render=render)
        if body is not None and "content-length" not in names:
            lines.append(f"Content-Length: {len(body)}")
        encoded = (f"{method} {path} HTTP/1.1\r\n" + "\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        return cls(parts.hostname, port, encoded + (body or b""), head=method == "HEAD")


class VariedRequest:
    """Request *n* of a varied run: path and body rendered from their templates (``bench.varied``)."""

    __slots__ = ("body", "head", "method", "path")

    def __init__(self, method: str, path: str, headers: str, body: bytes | None) -> None:
        try:
            from bench.varied import Template
        except ImportError:  # run as a file (python bench/openloop.py): bench/ is on sys.path
            from varied import Template  # type: ignore[no-redef]
        self.method = method
        self.path = Template.of(path)
        self.head = headers
        self.body = Template.of(body.decode()) if body is not None else None

    def __call__(self, n: int) -> bytes:
        start = f"{self.method} {self.path.render(n)} HTTP/1.1\r\n{self.head}\r\n"
        if self.body is None:
            return (start + "\r\n").encode("latin-1")
        body = self.body.render(n).encode()
        return (start + f"Content-Length: {len(body)}\r\n\r\n").encode("latin-1") + body


# --- one connection -----------------------------------------------------------------------

_HEAD, _BODY, _CHUNK_SIZE, _CHUNK_DATA, _TRAILER, _UNTIL_CLOSE = range(6)


class ResponseError(Exception):
    """An answer that cannot be parsed."""


class _Connection(asyncio.Protocol):
    """One keep-alive connection, one request in flight at a time (no pipelining)."""

    __slots__ = ("buf", "busy", "close_after", "due", "gen", "marked", "need", "state", "status", "transport")

    def __init__(self, gen: OpenLoop) -> None:
        self.gen = gen
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.state = _HEAD
        self.need = 0
        self.status = 0
        self.close_after = False
        self.due = 0.0
        self.busy = False
        self.marked = False  # the answer's body holds the generator's marker

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        self.gen._connected(self)

    def send(self, due: float) -> None:
        assert self.transport is not None
        self.due = due
        self.busy = True
        self.state = _HEAD
        self.marked = False
        gen = self.gen
        self.transport.write(gen.target.request if gen.render is None else gen.next_request())

    def connection_lost(self, exc: Exception | None) -> None:
        if self.busy and self.state == _UNTIL_CLOSE:
            self._finish()  # a body delimited by the end of the connection
        self.transport = None
        self.gen._lost(self)

    def data_received(self, data: bytes) -> None:
        if not self.busy:
            self.gen._protocol_error(self, "data without a request")
            return
        self.buf += data
        try:
            self._parse()
        except ResponseError as exc:
            self.gen._protocol_error(self, str(exc))

    def _parse(self) -> None:
        buf = self.buf
        while self.busy:
            state = self.state
            if state == _HEAD:
                end = buf.find(b"\r\n\r\n")
                if end < 0:
                    if len(buf) > MAX_HEAD_BYTES:
                        raise ResponseError("response head too long")
                    return
                self._head(bytes(buf[: end + 2]).lower())
                del buf[: end + 4]
            elif state == _BODY:
                if len(buf) < self.need:
                    return
                marker = self.gen.marker
                if marker is not None and buf.find(marker, 0, self.need) >= 0:
                    self.marked = True
                del buf[: self.need]
                self._finish()
            elif state == _CHUNK_SIZE:
                end = buf.find(b"\r\n")
                if end < 0:
                    return
                try:
                    size = int(bytes(buf[:end]).split(b";", 1)[0].strip(), 16)
                except ValueError:
                    raise ResponseError("bad chunk size") from None
                del buf[: end + 2]
                if size:
                    self.state, self.need = _CHUNK_DATA, size + 2
                else:
                    self.state = _TRAILER
            elif state == _CHUNK_DATA:
                if len(buf) < self.need:
                    return
                if buf[self.need - 2 : self.need] != b"\r\n":
                    raise ResponseError("chunk not followed by CRLF")
                marker = self.gen.marker  # (a marker split across two chunks is not seen)
                if marker is not None and buf.find(marker, 0, self.need - 2) >= 0:
                    self.marked = True
                del buf[: self.need]
                self.state = _CHUNK_SIZE
            elif state == _TRAILER:
                end = buf.find(b"\r\n")
                if end < 0:
                    return
                del buf[: end + 2]
                if end == 0:
                    self._finish()
            else:  # _UNTIL_CLOSE
                marker = self.gen.marker
                if marker is not None and marker in buf:
                    self.marked = True
                buf.clear()
                return
        if buf:
            raise ResponseError("bytes after the response")

    def _head(self, head: bytes) -> None:
        """Status and framing from the lower-cased head (status line and headers, CRLF-terminated)."""
        if not head.startswith(b"http/1.") or len(head) < 12:
            raise ResponseError("not an HTTP/1.x status line")
        try:
            status = int(head[9:12])
        except ValueError:
            raise ResponseError("bad status code") from None
        if status < 200:  # 100 Continue and the like: the real answer follows
            return
        self.status = status
        self.close_after = b"close" in _header(head, b"connection") or head.startswith(b"http/1.0")
        if self.gen.target.head or status in (204, 304):
            self._finish()
            return
        if b"chunked" in _header(head, b"transfer-encoding"):
            self.state = _CHUNK_SIZE
            return
        length = _header(head, b"content-length")
        if length:
            try:
                self.need = int(length)
            except ValueError:
                raise ResponseError("bad Content-Length") from None
            if self.need == 0:
                self._finish()
            else:
                self.state = _BODY
            return
        self.state, self.close_after = _UNTIL_CLOSE, True

    def _finish(self) -> None:
        self.busy = False
        self.state = _HEAD
        self.gen._answered(self, self.status, self.due, self.marked)


def _header(head: bytes, name: bytes) -> bytes:
    """The value of header ``name`` in a lower-cased head, or b''."""
    start = head.find(b"\r\n" + name + b":")
    if start < 0:
        return b""
    start += len(name) + 3
    return head[start : head.find(b"\r\n", start)].strip()


# --- the run ------------------------------------------------------------------------------


@dataclass
class Errors:
    connect: int = 0
    read: int = 0  # connection closed or reset before the answer ended
    parse: int = 0
    timeout: int = 0  # still unanswered when the generator gave up

    @property
    def total(self) -> int:
        return self.connect + self.read + self.parse + self.timeout


@dataclass
class OpenLoopResult:
    """One constant-rate run. Times in ms; rates in requests/s."""

    offered_rate: float
    duration_s: float
    scheduled: int
    answered: int
    achieved_rate: float
    status_2xx: int
    non_2xx: int
    errors: Errors
    latency_ms: dict[str, float | None]
    lag_ms: dict[str, float | None]
    connections_opened: int
    waited_for_connection: int  # requests that found the connection cap reached
    cpu_s: float = 0.0  # the generator process's CPU time over the run (all of it, if it shares one)
    flags: list[str] = field(default_factory=list)
    with_marker: int | None = None  # 2xx answers whose body held the marker (None: no marker asked)

    @property
    def error_count(self) -> int:
        return self.non_2xx + self.errors.total

    def to_dict(self) -> dict[str, Any]:
        return {
            "offered_rate": self.offered_rate,
            "duration_s": self.duration_s,
            "scheduled": self.scheduled,
            "answered": self.answered,
            "achieved_rate": round(self.achieved_rate, 2),
            "status_2xx": self.status_2xx,
            "non_2xx": self.non_2xx,
            "errors": {**vars(self.errors), "total": self.errors.total},
            "error_count": self.error_count,
            "latency_ms": self.latency_ms,
            "lag_ms": self.lag_ms,
            "connections_opened": self.connections_opened,
            "waited_for_connection": self.waited_for_connection,
            "cpu_s": round(self.cpu_s, 3),
            "flags": self.flags,
            "with_marker": self.with_marker,
        }


def judge(offered: float, achieved: float, lag_p99_ms: float | None, errors: int) -> list[str]:
    """Why a run's figures are suspect: the generator lagged, the rate fell short, answers failed."""
    flags = []
    if lag_p99_ms is not None and lag_p99_ms > LAG_P99_LIMIT_MS:
        flags.append(f"generator lag p99 {lag_p99_ms:.1f} ms > {LAG_P99_LIMIT_MS:g} ms")
    if achieved < ACHIEVED_MIN_SHARE * offered:
        flags.append(f"achieved {achieved:.0f} req/s < {ACHIEVED_MIN_SHARE:.0%} of {offered:g}")
    if errors:
        flags.append(f"{errors} failed requests")
    return flags


class OpenLoop:
    """Sends ``rate * duration_s`` requests to ``target`` at a constant rate; see the module doc."""

    def __init__(
        self,
        target: Target,
        rate: float,
        duration_s: float,
        *,
        max_connections: int = 2048,
        timeout_s: float = 10.0,
        marker: bytes | None = None,
    ) -> None:
        if rate <= 0 or duration_s <= 0 or max_connections < 1:
            raise ValueError("rate, duration and max_connections must be > 0")
        if marker is not None and not marker:
            raise ValueError("the bid marker must not be empty")
        self.target = target
        self.render = target.render
        self.marker = marker
        self.with_marker = 0
        self._sent = 0  # requests written so far (the varied request number)
        self.rate = rate
        self.duration_s = duration_s
        self.max_connections = max_connections
        self.timeout_s = timeout_s
        self.total = max(1, round(rate * duration_s))
        self.latency = Histogram()
        self.lag = Histogram()
        self.errors = Errors()
        self.status_2xx = self.non_2xx = 0
        self.opened = self.waited = 0
        self._idle: list[_Connection] = []
        self._open: set[_Connection] = set()
        self._connecting = 0
        self._pending: collections.deque[float] = collections.deque()
        self._next = 0  # index of the next request to dispatch
        self._next_due = math.inf
        self._finished = 0
        self._start = 0.0
        self._last_answer = 0.0
        self._cpu_start = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._connects: set[asyncio.Task[None]] = set()
        self._closed = False
        self._done: asyncio.Future[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def next_request(self) -> bytes:
        """The next varied request's bytes (request numbers from 1)."""
        assert self.render is not None
        self._sent += 1
        return self.render(self._sent)

    def _due(self, index: int) -> float:
        return self._start + index / self.rate

    async def run(self) -> OpenLoopResult:
        self._loop = loop = asyncio.get_running_loop()
        self._done = loop.create_future()
        self._cpu_start = _cpu_seconds()
        self._start = _clock() + 0.02
        self._next_due = self._start
        self._arm(self._start)
        try:
            await asyncio.wait_for(asyncio.shield(self._done), self.duration_s + self.timeout_s + 0.02)
        except TimeoutError:
            self._give_up()
        finally:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
            for task in list(self._connects):
                task.cancel()
            for conn in list(self._open):
                if conn.transport is not None:
                    conn.transport.abort()
        return self._result()

    # scheduling

    def _arm(self, due: float) -> None:
        assert self._loop is not None
        # The loop's timers round to whole ms and may fire a little early: aim at the next ms after.
        delay = math.ceil(max(0.0, due - _clock()) * 1000) / 1000
        self._timer = self._loop.call_later(delay, self._tick)

    def _tick(self) -> None:
        now = _clock()
        index, total, due = self._next, self.total, self._next_due
        lag = self.lag
        while due <= now:
            lag.record(now - due)
            self._dispatch(due)
            index += 1
            if index >= total:
                due = math.inf
                break
            due = self._start + index / self.rate
        self._next, self._next_due = index, due
        if self._timer is not None:
            self._timer.cancel()  # a no-op when the timer called us; else it was set for a due now sent
            self._timer = None
        if due != math.inf:
            self._arm(due)

    def _dispatch(self, due: float) -> None:
        if self._idle:
            self._idle.pop().send(due)
            return
        self._pending.append(due)
        self._open_more()

    def _open_more(self) -> None:
        wanted = len(self._pending) - self._connecting
        room = self.max_connections - len(self._open) - self._connecting
        if wanted > 0 and room <= 0:
            self.waited += 1
        assert self._loop is not None
        for _ in range(min(wanted, room)):
            self._connecting += 1
            self.opened += 1
            task = self._loop.create_task(self._connect())
            self._connects.add(task)
            task.add_done_callback(self._connects.discard)

    async def _connect(self) -> None:
        assert self._loop is not None
        try:
            await self._loop.create_connection(lambda: _Connection(self), self.target.host, self.target.port)
        except OSError:
            self._connecting -= 1
            self.errors.connect += 1
            if self._pending:
                self._pending.popleft()
                self._count_finished()

    # connection events

    def _connected(self, conn: _Connection) -> None:
        self._connecting -= 1
        if self._closed:
            assert conn.transport is not None
            conn.transport.abort()
            return
        self._open.add(conn)
        self._release(conn)

    def _release(self, conn: _Connection) -> None:
        if self._pending:
            conn.send(self._pending.popleft())
        else:
            self._idle.append(conn)

    def _answered(self, conn: _Connection, status: int, due: float, marked: bool = False) -> None:
        now = _clock()
        self.latency.record(now - due)
        self._last_answer = now
        if 200 <= status < 300:
            self.status_2xx += 1
            if marked:
                self.with_marker += 1
        else:
            self.non_2xx += 1
        if conn.close_after:
            conn.close_after = False
            if conn.transport is not None:
                conn.transport.close()
        else:
            self._release(conn)
        self._count_finished()
        if now >= self._next_due:
            self._tick()

    def _lost(self, conn: _Connection) -> None:
        self._open.discard(conn)
        if conn in self._idle:
            self._idle.remove(conn)
        if conn.busy:
            conn.busy = False
            self.errors.read += 1
            self._count_finished()
        if self._pending:
            self._open_more()

    def _protocol_error(self, conn: _Connection, reason: str) -> None:
        if conn.busy:
            conn.busy = False
            self.errors.parse += 1
            self._count_finished()
        if conn.transport is not None:
            conn.transport.abort()

    def _count_finished(self) -> None:
        self._finished += 1
        if self._finished >= self.total and self._done is not None and not self._done.done():
            self._done.set_result(None)

    def _give_up(self) -> None:
        """The run's time is over: what is still waiting counts as timed out, at its wait so far."""
        now = _clock()
        waiting = [conn.due for conn in self._open if conn.busy] + list(self._pending)
        waiting += [self._due(i) for i in range(self._next, self.total)]
        for due in waiting:
            self.latency.record(now - due)
            self.errors.timeout += 1
        self._pending.clear()
        self._next = self.total
        for conn in self._open:
            conn.busy = False

    def _result(self) -> OpenLoopResult:
        answered = self.status_2xx + self.non_2xx
        elapsed = max(self.duration_s, self._last_answer - self._start)
        achieved = answered / elapsed
        lag = self.lag.summary()
        result = OpenLoopResult(
            offered_rate=self.rate,
            duration_s=self.duration_s,
            scheduled=self.total,
            answered=answered,
            achieved_rate=achieved,
            status_2xx=self.status_2xx,
            non_2xx=self.non_2xx,
            errors=self.errors,
            latency_ms=self.latency.summary(),
            lag_ms=lag,
            connections_opened=self.opened,
            waited_for_connection=self.waited,
            cpu_s=_cpu_seconds() - self._cpu_start,
            with_marker=self.with_marker if self.marker is not None else None,
        )
        result.flags = judge(self.rate, achieved, lag["p99"], result.error_count)
        return result


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def run_openloop(
    target: Target,
    rate: float,
    duration_s: float,
    *,
    max_connections: int = 2048,
    timeout_s: float = 10.0,
    marker: bytes | None = None,
) -> OpenLoopResult:
    """Offer ``rate`` requests/s to ``target`` for ``duration_s`` seconds; the measured result."""
    return await OpenLoop(
        target, rate, duration_s, max_connections=max_connections, timeout_s=timeout_s, marker=marker
    ).run()


# --- the command line ---------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.openloop", description=__doc__.split("\n")[0])
    parser.add_argument("url")
    parser.add_argument("--rate", type=float, required=True, help="requests per second")
    parser.add_argument("--duration", type=float, required=True, help="seconds of requests")
    parser.add_argument("--method", default="GET")
    parser.add_argument("--body-file", type=Path, help="request body")
    parser.add_argument("--header", action="append", default=[], help="'Name: value' (repeatable)")
    parser.add_argument("--max-connections", type=int, default=2048)
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for answers after the last")
    parser.add_argument("--vary", action="store_true", help="render path and body per request (bench.varied)")
    parser.add_argument("--bid-marker", help="count 2xx answers whose body holds this text")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        body = args.body_file.read_bytes() if args.body_file is not None else None
        target = Target.build(args.url, args.method.upper(), body, args.header, vary=args.vary)
        marker = args.bid_marker.encode() if args.bid_marker is not None else None
        generator = OpenLoop(
            target, args.rate, args.duration, max_connections=args.max_connections, timeout_s=args.timeout,
            marker=marker,
        )
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"openloop: {exc}\n")
        return 2
    import uvloop

    result = uvloop.run(generator.run())
    sys.stdout.write(json.dumps(result.to_dict()) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
