"""PBS-Go's ``stored_requests.http_events``: saves and deletes polled from a host's endpoint.

At start-up ``GET {endpoint}`` loads everything the host wants cached; then every
``refresh_rate_seconds`` ``GET {endpoint}?last-modified=<RFC 3339 UTC>`` asks for what changed since the
last refresh that worked (the time of that refresh's tick, as PBS-Go). The answer is
``{"requests": {id: json}, "imps": {...}, "responses": {...}, "accounts": {...}}``; an entry
``{"deleted": true}`` is a deletion, any other a save (PBS-Go's ``extractInvalidations``). A save goes
into the in-memory cache (:meth:`StoredData.save`: served until evicted, expired or invalidated), a
deletion drops the id from it. ``amp_endpoint`` feeds AMP's cache the same way.

Each worker polls on its own, as each polls PostgreSQL: every worker sees a change at its next
refresh. A failed fetch (status, timeout, bad JSON, an answer over :data:`MAX_EVENTS_BYTES`) is
logged and counted and changes nothing; the next refresh asks again from the same time.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
from collections.abc import Callable
from typing import Any

import aiohttp
import orjson
from yarl import URL

from hbserver.stores.stored.base import Kind
from hbserver.stores.stored.service import StoredData
from hbserver.web.client import BodyTooLarge, read_bounded

log = logging.getLogger("hbserver.stored")

MAX_EVENTS_BYTES = 32 * 1024 * 1024  # one answer, read no further
# The answer's members and the kind each feeds (AMP's endpoint: requests and imps alone).
MEMBERS: dict[str, Kind] = {"requests": "requests", "imps": "imps", "responses": "responses", "accounts": "accounts"}
AMP_MEMBERS: dict[str, Kind] = {"requests": "requests", "imps": "imps"}


class EventsError(Exception):
    """A fetch that changed nothing (logged with the endpoint); ``label`` is the metric's reason."""

    def __init__(self, message: str, label: str = "malformed") -> None:
        super().__init__(message)
        self.label = label


def parse_events(body: bytes, members: dict[str, Kind]) -> tuple[dict[Kind, dict[str, bytes]], dict[Kind, list[str]]]:
    """(saves, deletions) by kind from one answer; EventsError when it is not a JSON object of objects."""
    try:
        document: Any = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise EventsError(f"the answer is not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise EventsError("the answer is not a JSON object")
    saves: dict[Kind, dict[str, bytes]] = {}
    deletions: dict[Kind, list[str]] = {}
    for member, kind in members.items():
        values = document.get(member)
        if values is None:
            continue
        if not isinstance(values, dict):
            raise EventsError(f"{member!r} is not a JSON object")
        for item_id, value in values.items():
            if isinstance(value, dict) and value.get("deleted") is True:
                deletions.setdefault(kind, []).append(item_id)
            elif value is not None:
                saves.setdefault(kind, {})[item_id] = orjson.dumps(value)
    return saves, deletions


def last_modified_url(endpoint: str, since: dt.datetime) -> URL:
    """``endpoint`` with ``last-modified`` set (replacing one it has) to ``since`` in RFC 3339, UTC."""
    stamp = since.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return URL(endpoint).update_query({"last-modified": stamp})


class HttpEvents:
    """One endpoint's refresh loop for one worker (``amp``: AMP's cache)."""

    def __init__(
        self,
        endpoint: str,
        session: Callable[[], aiohttp.ClientSession],
        stored: StoredData,
        *,
        amp: bool = False,
        refresh_rate_seconds: float,
        timeout_ms: int,
        max_bytes: int = MAX_EVENTS_BYTES,
        now: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
    ) -> None:
        self.endpoint = endpoint
        self.amp = amp
        self.refresh_rate = refresh_rate_seconds
        self.timeout = timeout_ms / 1000
        self.max_bytes = max_bytes
        self._session = session
        self._stored = stored
        self._now = now
        self._members = AMP_MEMBERS if amp else MEMBERS
        self.last_update = now()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Load everything once (bounded by ``timeout_ms``), then refresh in the background."""
        await self.fetch_all()
        if self._task is None:
            self._task = asyncio.create_task(self._refresh_forever(), name="stored-http-events")

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def fetch_all(self) -> bool:
        """PBS-Go's start-up load: ``GET {endpoint}``; False when it failed."""
        return await self._apply(URL(self.endpoint))

    async def refresh_once(self) -> bool:
        """One refresh: what changed since the last one that worked; False when it failed."""
        tick = self._now()
        if not await self._apply(last_modified_url(self.endpoint, self.last_update)):
            return False
        self.last_update = tick
        return True

    async def _refresh_forever(self) -> None:
        while True:
            await asyncio.sleep(self.refresh_rate)
            await self.refresh_once()

    async def _apply(self, url: URL) -> bool:
        try:
            async with asyncio.timeout(self.timeout):
                body = await self._get(url)
            saves, deletions = parse_events(body, self._members)
        except TimeoutError:
            return self._failed(url, "timeout", "timed out")
        except EventsError as exc:
            return self._failed(url, exc.label, str(exc))
        except aiohttp.ClientError as exc:
            return self._failed(url, "error", str(exc) or exc.__class__.__name__)
        for kind, items in saves.items():
            self._stored.save(kind, items, amp=self.amp)
        for kind, ids in deletions.items():
            self._stored.invalidate(kind, ids, amp=self.amp)
        return True

    def _failed(self, url: URL, label: str, reason: str) -> bool:
        self._stored.count_error("http_events", label)
        log.warning("stored data: http_events GET %s failed: %s", url, reason)
        return False

    async def _get(self, url: URL) -> bytes:
        async with self._session().get(url, headers={"Accept": "application/json"}, allow_redirects=False) as answer:
            if answer.status != 200:
                raise EventsError(f"status {answer.status}", "status")
            try:
                return await read_bounded(answer, self.max_bytes)
            except BodyTooLarge:
                raise EventsError(f"answer larger than {self.max_bytes} bytes", "too_large") from None
