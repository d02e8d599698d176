"""Logging: structured JSON lines in production (stderr is not a terminal), readable text otherwise.

Two filters sit on the one root handler, so they see every line of every logger:

- :class:`RequestIdFilter` adds the id of the request being handled (:data:`REQUEST_ID`, set by
  :func:`hbserver.web.endpoint.wrap`) as ``request_id``; tasks started while handling a request
  (the bidder fan-out) copy the context, so their lines carry it too.
- :class:`RepeatFilter` lets an identical WARNING-or-worse line (same logger, level, message template,
  exception type) out at most once per interval; the next one that passes says how many were dropped
  (``suppressed``). The metrics still count every failure; the log just does not repeat it per request.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from contextvars import ContextVar
from typing import Any, TextIO

import orjson

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime"}

# The id of the request being handled in this context (None outside requests).
REQUEST_ID: ContextVar[str | None] = ContextVar("hbserver_request_id", default=None)

REPEAT_INTERVAL_SECONDS = 10.0
MAX_REPEAT_KEYS = 1024  # distinct warning/error templates remembered at once

# Loggers whose lines are asked for by configuration (sampling, the admin endpoint), not by the level.
ALWAYS_INFO_LOGGERS = ("hbserver.access", "hbserver.httpinteraction")

# A record attribute (``extra={REPEAT_KEY: ...}``, never written out) that splits one template's repeats.
REPEAT_KEY = "_repeat_key"

TEXT_FORMAT = "%(asctime)s %(levelname)s [%(process)d] %(name)s: %(message)s"


def _extras(record: logging.LogRecord) -> list[tuple[str, Any]]:
    return [(k, v) for k, v in record.__dict__.items() if k not in _STANDARD and not k.startswith("_")]


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "pid": record.process,
            "msg": record.getMessage(),
        }
        for key, value in _extras(record):
            entry[key] = value
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()


class TextFormatter(logging.Formatter):
    """The text format, with the record's extra fields (request_id, endpoint, ...) as ``key=value``."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)

    def formatMessage(self, record: logging.LogRecord) -> str:
        line = super().formatMessage(record)
        extras = _extras(record)
        if not extras:
            return line
        return line + " " + " ".join(
            f"{key}={value if isinstance(value, (str, int, float)) else orjson.dumps(value, default=str).decode()}"
            for key, value in extras
        )


class RequestIdFilter(logging.Filter):
    """Adds ``request_id`` to a line logged while a request is handled (unless it has one)."""

    def filter(self, record: logging.LogRecord) -> bool:
        rid = REQUEST_ID.get()
        if rid is not None and "request_id" not in record.__dict__:
            record.request_id = rid
        return True


class RepeatFilter(logging.Filter):
    """At most one identical WARNING+ line per ``interval`` seconds; bounded memory of keys.

    The key is (logger, level, message template, exception type): the arguments are left out, so
    one error per request is one key; a caller that tells cases apart (:class:`LogLimiter`) adds
    its own key as the record attribute :data:`REPEAT_KEY`. When
    ``max_keys`` templates are remembered, the entries whose interval is over are forgotten, and if
    none is, the oldest ones (their suppressed counts are lost, not their next line).
    """

    def __init__(self, interval: float = REPEAT_INTERVAL_SECONDS, max_keys: int = MAX_REPEAT_KEYS,
                 clock: Any = time.monotonic) -> None:
        super().__init__()
        self.interval = interval
        self.max_keys = max_keys
        self.clock = clock
        self._seen: dict[tuple[Any, ...], list[Any]] = {}  # key -> [last emitted at, suppressed since]
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        exc_type = record.exc_info[0] if record.exc_info else None
        key = (record.name, record.levelno, str(record.msg), exc_type, record.__dict__.get(REPEAT_KEY))
        now = self.clock()
        with self._lock:
            entry = self._seen.get(key)
            if entry is not None and now - entry[0] < self.interval:
                entry[1] += 1
                return False
            suppressed = entry[1] if entry is not None else 0
            if entry is None and len(self._seen) >= self.max_keys:
                self._forget(now)
            self._seen[key] = [now, 0]
        if suppressed:
            record.suppressed = suppressed
        return True

    def _forget(self, now: float) -> None:
        """Make room: drop the keys whose interval is over, else the oldest half."""
        seen = self._seen
        expired = [key for key, (last, _) in seen.items() if now - last >= self.interval]
        if not expired:
            expired = list(seen)[: max(1, len(seen) // 2)]
        for key in expired:
            del seen[key]


def setup_logging(json_logs: bool | None = None, level: int = logging.INFO, stream: TextIO | None = None) -> None:
    """One handler on the root logger (JSON unless ``stream`` is a terminal) with the request-id
    and repeat filters; the root level is ``level``. Forked workers inherit all of it."""
    stream = stream if stream is not None else sys.stderr
    if json_logs is None:
        json_logs = not stream.isatty()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter() if json_logs else TextFormatter())
    handler.addFilter(RequestIdFilter())
    handler.addFilter(RepeatFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # aiohttp's access log is off (access_log=None); keep its server errors.
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
    for name in ALWAYS_INFO_LOGGERS:
        logging.getLogger(name).setLevel(min(level, logging.INFO))


class LogLimiter:
    """At most one log line per ``interval`` seconds per key: a failing backend under a request
    flood is logged, not repeated per request (the metrics count every failure).

    Keyed by the caller (a backend and its failure, say); the key goes along as :data:`REPEAT_KEY`
    so the root :class:`RepeatFilter` (keyed by the template) does not merge two keys' lines. At most
    ``max_keys`` keys are remembered (the expired ones are forgotten first, else all). With
    ``count_held`` the next line of a key says how many were held back since the last one.
    """

    def __init__(
        self, logger: logging.Logger, interval: float = 10.0, max_keys: int = MAX_REPEAT_KEYS,
        count_held: bool = False,
    ) -> None:
        self.logger = logger
        self.interval = interval
        self.max_keys = max_keys
        self.count_held = count_held
        self._last: dict[str, float] = {}
        self._held: dict[str, int] = {}

    def warning(self, key: str, message: str, *args: object) -> None:
        now = time.monotonic()
        last = self._last.get(key)
        if last is None or now - last >= self.interval:
            if last is None and len(self._last) >= self.max_keys:
                self._last = {k: t for k, t in self._last.items() if now - t < self.interval}
                if len(self._last) >= self.max_keys:
                    self._last.clear()
            self._last[key] = now
            held = self._held.pop(key, 0) if self.count_held else 0
            if held:
                self.logger.warning(message + " (%d more like it not logged)", *args, held, extra={REPEAT_KEY: key})
            else:
                self.logger.warning(message, *args, extra={REPEAT_KEY: key})
        elif self.count_held:
            self._held[key] = self._held.get(key, 0) + 1
