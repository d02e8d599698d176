"""A host's own PBS-Go queries for stored requests and imps (``stored_requests.database.fetcher`` and
``poll_for_updates``), so that a PBS-Go section works unchanged.

- ``fetcher.query`` (``amp_query`` for AMP, else ``query``): rows ``id, data, type`` for the ids in
  ``$REQUEST_ID_LIST`` and ``$IMP_ID_LIST``; ``type`` is ``request`` or ``imp`` (others are ignored,
  as PBS-Go logs and ignores them). Data that is empty, SQL NULL or JSON ``null`` is not stored.
- ``poll_for_updates.query`` and ``amp_query``: rows ``id, data, type`` changed since ``$LAST_UPDATED``;
  each id is reported changed (``request``, ``imp`` or ``response``), whatever its data: empty or
  ``null`` data is PBS-Go's deletion, and any other data a save, both dropped from the caches so the
  next lookup reads them again. ``$LAST_UPDATED`` is the database's clock at the previous poll minus
  an overlap (a transaction committing late is not missed); a row seen with the same data in the
  overlap is not reported twice.
- PBS-Java's rows ``accountId, id, data, type`` (four columns or more) are read too: an id stored for
  an account, or more than once, is answered with every item (:class:`.scoped.Variants`), the lookup
  picking the requesting account's with PBS-Java's rules; the poll keeps each ``(id, account)`` row apart.
  A NULL account is the item of no account; any other value is its text (PBS-Java's ``toString``, so
  an empty account is an account of its own, as there).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hbserver.stores.stored.base import Answer, Kind, Wanted
from hbserver.stores.stored.scoped import gather
from hbserver.stores.stored.templates import IMP_IDS, LAST_UPDATED, REQUEST_IDS, ROW_TYPES, Style, prepare

if TYPE_CHECKING:
    from hbserver.stores.stored.sql import Connection


@dataclass(frozen=True)
class HostQueries:
    fetch: str = ""
    amp_fetch: str = ""
    poll: str = ""
    amp_poll: str = ""

    def any(self) -> bool:
        return bool(self.fetch or self.amp_fetch or self.poll or self.amp_poll)


class HostQueryRunner:
    def __init__(self, queries: HostQueries, style: Style) -> None:
        self.queries = queries
        self.style = style
        # Requests and imps come from the host's query when it has one (AMP's alone falls back to it).
        self.kinds: frozenset[Kind] = frozenset(("requests", "imps")) if queries.fetch else frozenset()
        self._cursor: dt.datetime | None = None
        self._seen: dict[tuple[str, Kind, str, str | None], int] = {}  # (query, kind, id, account) -> data's hash

    def start_cursor(self, now: dt.datetime) -> None:
        """Changes after ``now`` are reported (set before the first row is served)."""
        if self._cursor is None:
            self._cursor = now

    async def fetch(self, conn: Connection, wanted: Wanted, amp: bool) -> Answer:
        """Stored requests and imps through the host's fetcher query; {} when it has none."""
        template = (self.queries.amp_fetch if amp else "") or self.queries.fetch
        if not template:
            return {}
        request_ids = list(wanted.get("requests", ()))
        imp_ids = list(wanted.get("imps", ()))
        answer: Answer = {kind: {} for kind in ("requests", "imps") if kind in wanted}
        if not request_ids and not imp_ids:
            return answer
        query, args = prepare(template, [(REQUEST_IDS, request_ids), (IMP_IDS, imp_ids)], self.style)
        rows: dict[Kind, list[tuple[str, str | None, bytes]]] = {kind: [] for kind in answer}
        for account, item_id, data, row_type in await _rows(conn, query, args):
            kind = ROW_TYPES.get(str(row_type))
            stored = _stored(data)
            if kind in answer and stored is not None and item_id in wanted.get(kind, ()):
                rows[kind].append((str(item_id), account, stored))
        for kind, found in rows.items():
            answer[kind] = gather(found)  # type: ignore[assignment]  # Variants: the lookup picks
        return answer

    async def poll(self, conn: Connection, now: dt.datetime, overlap_seconds: float) -> dict[Kind, set[str]]:
        """The ids the host's poll queries report changed or deleted since the last poll."""
        changes: dict[Kind, set[str]] = {}
        if self._cursor is None:
            self._cursor = now
            return changes
        since = self._cursor - dt.timedelta(seconds=overlap_seconds)
        seen: dict[tuple[str, Kind, str, str | None], int] = {}
        for template in (self.queries.poll, self.queries.amp_poll):
            if not template:
                continue
            query, args = prepare(template, [(LAST_UPDATED, since)], self.style)
            for account, item_id, data, row_type in await _rows(conn, query, args):
                kind = ROW_TYPES.get(str(row_type))
                if kind is None:
                    continue
                key = (template, kind, str(item_id), account)
                seen[key] = digest = hash(_stored(data))
                if self._seen.get(key) != digest:
                    changes.setdefault(kind, set()).add(str(item_id))
        self._seen = seen  # what the next poll's overlap will return again
        self._cursor = max(self._cursor, now)
        return changes


async def _rows(conn: Connection, query: str, args: Sequence[Any]) -> list[tuple[str | None, Any, Any, Any]]:
    """``(account, id, data, type)`` of PBS-Go's three columns (no account) and PBS-Java's four."""
    rows = []
    for row in await conn.fetch(query, *args):
        values = tuple(row)
        if len(values) == 3:
            rows.append((None, *values))
        elif len(values) >= 4:
            rows.append((None if values[0] is None else str(values[0]), *values[1:4]))
    return rows


def _stored(data: object) -> bytes | None:
    """The data column as served, or None for no data (empty, SQL NULL, JSON null)."""
    if data is None:
        return None
    if isinstance(data, str):
        raw = data.encode()
    elif isinstance(data, (bytes, bytearray, memoryview)):
        raw = bytes(data)
    else:
        return None
    if not raw.strip() or raw.strip() == b"null":
        return None
    return raw
