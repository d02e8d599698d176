"""PBS-Go's agma analytics module (``analytics.agma``; PBS-Go ``analytics/agma``).

An auction or AMP request answered 200 is reported when (PBS-Go's shouldTrackEvent):

- ``user.consent`` is a TCF v2 string giving purpose 9 consent and vendor consent to agma (GVL id
  1122), read as the activities left the request for ``agma``;
- its publisher (``site.publisher.id``, else ``app.publisher.id``) and its site or app id (``site.id``;
  ``app.id``, else ``app.bundle``) are not both empty, and a configured account has that
  ``publisher_id`` and either no ``site_app_id`` or that one (the first such account's ``code`` goes).

Each event is ``{"type", "id", "code", "site", "app", "device", "user", "created_at"}`` (the request's
own objects, the absent ones left out; ``created_at``: the auction's start). Batches are JSON arrays,
leaving by ``buffers.size`` (bytes of the array), ``buffers.count`` or every ``buffers.timeout``,
``POST``ed to ``endpoint.url`` (``Content-Type: application/json``, ``X-Prebid``, gzipped with
``Content-Encoding: gzip`` when ``endpoint.gzip``) within ``endpoint.timeout``; any answer but 200
loses the batch, as in PBS-Go, counted.
"""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import Sequence
from typing import Any

import orjson

from hbserver import SERVER_HEADER_VALUE
from hbserver.analytics.batching import Batcher, Limits, Poster
from hbserver.analytics.pbs import go_time
from hbserver.config import AgmaAccount
from hbserver.metrics import Metrics
from hbserver.privacy.tcf2 import ConsentError, parse_tcf2_cached

AGMA_GVL_ID = 1122
PURPOSE = 9
EVENTS = ("auction", "amp")


def _object(holder: Any, key: str) -> dict[str, Any]:
    value = holder.get(key) if isinstance(holder, dict) else None
    return value if isinstance(value, dict) else {}


def _text(holder: dict[str, Any], key: str) -> str:
    value = holder.get(key)
    return value if isinstance(value, str) else ""


def publisher_and_site(request: dict[str, Any]) -> tuple[str, str]:
    """PBS-Go's extractPublisherAndSite: an app's values win over a site's."""
    publisher = site_app = ""
    site = request.get("site")
    if isinstance(site, dict):
        publisher, site_app = _text(_object(site, "publisher"), "id"), _text(site, "id")
    app = request.get("app")
    if isinstance(app, dict):
        publisher = _text(_object(app, "publisher"), "id")
        site_app = _text(app, "id") or _text(app, "bundle")
    return publisher, site_app


def consent_allows(request: dict[str, Any]) -> bool:
    user = request.get("user")
    if not isinstance(user, dict):
        return False
    consent = user.get("consent")
    try:
        parsed = parse_tcf2_cached(consent if isinstance(consent, str) else "")
    except (ConsentError, ValueError):
        return False
    return parsed.purpose_consent(PURPOSE) and parsed.vendor_consent(AGMA_GVL_ID)


def account_code(request: dict[str, Any], accounts: Sequence[AgmaAccount]) -> str | None:
    """The code of the account to report ``request`` under; None: not reported."""
    if not consent_allows(request):
        return None
    publisher, site_app = publisher_and_site(request)
    if not publisher and not site_app:
        return None
    for account in accounts:
        if account.publisher_id == publisher and account.site_app_id in ("", site_app):
            return account.code
    return None


def event_json(event: str, request: dict[str, Any], code: str, started: float) -> bytes:
    """PBS-Go's agma logObject."""
    obj: dict[str, Any] = {"type": event, "id": _text(request, "id"), "code": code}
    for key in ("site", "app", "device", "user"):
        if isinstance(request.get(key), dict):
            obj[key] = request[key]
    obj["created_at"] = go_time(started)
    return orjson.dumps(obj)


class AgmaModule:
    name = component = "agma"

    def __init__(
        self, url: str, timeout: float, use_gzip: bool, accounts: Sequence[AgmaAccount], limits: Limits,
        metrics: Metrics, shutdown_seconds: float = 10.0,
    ) -> None:  # fmt: skip
        if not accounts:
            raise ValueError("Please configure at least one account for Agma Analytics")
        self.url, self.use_gzip, self.accounts = url, use_gzip, tuple(accounts)
        self.shutdown_seconds = shutdown_seconds
        self._metrics = metrics
        self._poster = Poster(self.name, timeout)
        array = Limits(limits.count, limits.size, limits.timeout, per_event=1, base=1)  # "[" and the commas
        self._batcher = Batcher(self.name, url, array, self._send, metrics)
        self._headers = {"Content-Type": "application/json", "X-Prebid": SERVER_HEADER_VALUE}
        if use_gzip:
            self._headers["Content-Encoding"] = "gzip"

    def log_pbs(self, event: str, record: dict[str, Any], source: Any, request: dict[str, Any] | None) -> None:
        if event not in EVENTS or record["status"] != 200 or request is None:
            return
        code = account_code(request, self.accounts)
        if code is None:
            return
        started = getattr(source, "started", 0.0)
        if self._batcher.push(event_json(event, request, code, started)):
            self._metrics.counter(self._metrics.analytics_events, self.name, event).inc()

    async def start(self) -> None:
        self._batcher.start()

    async def _send(self, url: str, events: list[bytes]) -> bool:
        body = b"[" + b",".join(events) + b"]"
        if self.use_gzip:
            body = await asyncio.to_thread(gzip.compress, body)
        return await self._poster.deliver(url, body, self._headers)

    async def close(self) -> None:
        await self._batcher.close(self.shutdown_seconds)
        await self._poster.close()
