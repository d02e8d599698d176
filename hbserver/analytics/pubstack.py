"""PBS-Go's pubstack analytics module (``analytics.pubstack``; PBS-Go ``analytics/pubstack``).

- Its configuration comes from pubstack: ``GET <endpoint>/bootstrap?scopeId=<scopeid>`` at start and
  every ``configuration_refresh_delay``, answering ``{"scopeId", "endpoint", "features": {name: bool}}``.
  Until a first answer (and for a feature it leaves out or sets false) nothing is sent. A failed
  fetch keeps the configuration in force. A changed one flushes every channel first.
- One channel per feature (``auction``, ``amp``, ``cookiesync``, ``setuid``; ``video`` exists in PBS-Go
  only): each event is its PBS-Go object with ``scope`` first, then a newline; a batch leaves by
  ``buffers.size`` (bytes before compression), ``buffers.count`` or every ``buffers.timeout``, gzipped,
  as ``POST <configuration's endpoint>/intake/<feature>`` (``Content-Type: application/octet-stream``,
  ``Content-Encoding: gzip``); an answer other than 200 loses the batch, as in PBS-Go, counted.
"""

from __future__ import annotations

import asyncio
import gzip
import logging
import posixpath
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import orjson

from hbserver.analytics.batching import Batcher, Limits, Poster
from hbserver.analytics.pbs import pbs_object
from hbserver.metrics import Metrics

log = logging.getLogger("hbserver.analytics")

FEATURES = {"auction": "auction", "amp": "amp", "cookie_sync": "cookiesync", "setuid": "setuid"}  # event -> feature
ALL_FEATURES = ("auction", "video", "amp", "cookiesync", "setuid")
FETCH_TIMEOUT_SECONDS = 10.0
SEND_HEADERS = {"Content-Type": "application/octet-stream", "Content-Encoding": "gzip"}


@dataclass(frozen=True, slots=True)
class RemoteConfig:
    """PBS-Go's pubstack ``Configuration``."""

    scope_id: str
    endpoint: str
    features: dict[str, bool] = field(default_factory=dict)

    def enabled(self, feature: str) -> bool:
        return self.features.get(feature) is True


def parse_remote_config(data: bytes) -> RemoteConfig:
    """A bootstrap answer; ValueError when it is not PBS-Go's Configuration."""
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"failed to decode config: {exc}") from None
    if not isinstance(doc, dict):
        raise ValueError("failed to decode config: not an object")
    scope, endpoint, features = doc.get("scopeId", ""), doc.get("endpoint", ""), doc.get("features") or {}
    if not isinstance(scope, str) or not isinstance(endpoint, str) or not isinstance(features, dict):
        raise ValueError("failed to decode config: wrong types")
    if not all(isinstance(v, bool) for v in features.values()):
        raise ValueError("failed to decode config: features must be booleans")
    return RemoteConfig(scope, endpoint, dict(features))


def intake_url(base: str, feature: str) -> str:
    """PBS-Go's BuildEndpointSender: ``path.Join(<base path>, "intake", feature)``."""
    parts = urlsplit(base)
    path = posixpath.join(parts.path or "/", "intake", feature)
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, parts.fragment))


def payload(scope: str, obj: dict[str, Any]) -> bytes:
    """One event: PBS-Go's ``{"scope": <scope>, <object's fields>}`` and a newline."""
    return orjson.dumps({"scope": scope, **obj}) + b"\n"


class PubstackModule:
    name = component = "pubstack"

    def __init__(
        self, scope: str, endpoint: str, refresh_seconds: float, limits: Limits, metrics: Metrics,
        shutdown_seconds: float = 10.0,
    ) -> None:  # fmt: skip
        self.scope, self.endpoint, self.refresh_seconds = scope, endpoint, refresh_seconds
        self.limits, self.shutdown_seconds = limits, shutdown_seconds
        self.config = RemoteConfig(scope, endpoint, dict.fromkeys(ALL_FEATURES, False))
        self._metrics = metrics
        self._poster = Poster(self.name, FETCH_TIMEOUT_SECONDS)
        self._channels: dict[str, Batcher] = {}
        self._refresher: asyncio.Task[None] | None = None
        self._retiring: set[asyncio.Task[None]] = set()
        self._closing = False

    def log_pbs(self, event: str, record: dict[str, Any], source: Any, request: dict[str, Any] | None) -> None:
        feature = FEATURES.get(event)
        channel = self._channels.get(feature) if feature is not None else None
        if channel is None:  # the feature is off
            return
        obj = pbs_object(record, source, request)
        if obj is not None and channel.push(payload(self.scope, obj)):
            self._metrics.counter(self._metrics.analytics_events, self.name, event).inc()

    async def start(self) -> None:
        self._refresher = asyncio.create_task(self._refresh(), name="analytics-pubstack-config")

    async def _refresh(self) -> None:
        url = f"{self.endpoint}/bootstrap?scopeId={self.scope}"
        while not self._closing:
            status, data = await self._poster.request("GET", url)
            if status == 200:
                try:
                    self.apply(parse_remote_config(data))
                except ValueError as exc:
                    log.warning("analytics module pubstack: fail to fetch remote configuration: %s", exc)
            elif status:
                log.warning("analytics module pubstack: fail to fetch remote configuration: unexpected "
                            "status code: %d", status)  # fmt: skip
            await asyncio.sleep(self.refresh_seconds)

    def apply(self, config: RemoteConfig) -> None:
        """A fetched configuration: when it differs, every channel flushes (to the endpoint it had) and
        the enabled features get channels to the new endpoint."""
        if config == self.config or self._closing:
            return
        log.info("analytics module pubstack: configuration %s", config)
        self.config = config
        for feature in ALL_FEATURES:
            channel = self._channels.get(feature)
            if channel is not None:
                channel.flush()
                channel.url = intake_url(config.endpoint, feature)
                if not config.enabled(feature):
                    self._retire(feature)
            elif config.enabled(feature):
                channel = Batcher(self.name, intake_url(config.endpoint, feature), self.limits, self._send,
                                  self._metrics)  # fmt: skip
                channel.start()
                self._channels[feature] = channel

    def _retire(self, feature: str) -> None:
        channel = self._channels.pop(feature)
        task = asyncio.get_running_loop().create_task(channel.close(self.shutdown_seconds))
        self._retiring.add(task)  # kept until done (the loop holds tasks weakly)
        task.add_done_callback(self._retiring.discard)

    async def _send(self, url: str, events: list[bytes]) -> bool:
        body = await asyncio.to_thread(gzip.compress, b"".join(events))
        return await self._poster.deliver(url, body, SEND_HEADERS)

    async def close(self) -> None:
        """PBS-Go on SIGTERM: every feature off, every channel flushed."""
        self._closing = True
        if self._refresher is not None:
            self._refresher.cancel()
            await asyncio.gather(self._refresher, return_exceptions=True)
        channels, self._channels = list(self._channels.values()), {}
        await asyncio.gather(*(channel.close(self.shutdown_seconds) for channel in channels), *self._retiring)
        await self._poster.close()
