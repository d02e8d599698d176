"""Logging: structured JSON lines in production (stderr is not a terminal), readable text otherwise."""

from __future__ import annotations

import logging
import sys
import time
from typing import Any

import orjson

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime"}


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
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()


def setup_logging(json_logs: bool | None = None, level: int = logging.INFO) -> None:
    if json_logs is None:
        json_logs = not sys.stderr.isatty()
    handler = logging.StreamHandler(sys.stderr)
    if json_logs:
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s [%(process)d] %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # aiohttp's access log is off (access_log=None); keep its server errors.
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)


class LogLimiter:
    """At most one log line per ``interval`` seconds per key: a failing backend under a request
    flood is logged, not repeated per request (the metrics count every failure)."""

    def __init__(self, logger: logging.Logger, interval: float = 10.0) -> None:
        self.logger = logger
        self.interval = interval
        self._last: dict[str, float] = {}

    def warning(self, key: str, message: str, *args: object) -> None:
        now = time.monotonic()
        last = self._last.get(key)
        if last is None or now - last >= self.interval:
            self._last[key] = now
            self.logger.warning(message, *args)
