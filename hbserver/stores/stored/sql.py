"""The SQL backend shared by PostgreSQL (asyncpg) and MySQL / MariaDB (asyncmy), and the change poll
that keeps running servers current. A :class:`Dialect` holds what differs: the driver, its pool and
errors, and the SQL words.

hbserver's tables (deploy/postgres-init.sql, deploy/mysql-init.sql): ``stored_requests``,
``stored_imps``, ``stored_responses`` and ``accounts``, each ``(id, data, updated_at)`` (CONTRACT §3),
and ``profiles`` of the same shape, which a database may lack (:data:`OPTIONAL_KINDS`: read as
empty, looked for again at each poll); a row whose data is SQL NULL or JSON ``null`` is not stored.
One small pool per worker, created without connecting, so a database that is down when the server
starts only makes lookups fail with a clear error.

Change detection (:meth:`SqlBackend.poll`), every ``refresh_rate_seconds``:

- updates and inserts: rows with ``updated_at`` newer than the last one seen, minus an overlap
  (:data:`POLL_OVERLAP_SECONDS`) so that a transaction committing a little after its
  ``updated_at`` is not missed; ``(id, updated_at)`` pairs already reported are not reported twice.
- deletions: the ids this backend has served (the most recent ``track_size`` per kind) are checked
  for existence; the ones gone are reported once.
- the cursors are set before the first row is served (by the first lookup or poll that reaches
  the database), so no change after a row was read can be missed.

Per-account stored ids (PBS-Java's, :mod:`.scoped`): ``stored_requests`` and ``stored_imps`` may have
an ``account`` column (empty for the item of no account; the primary key then ``(id, account)``). Whether
they have it is looked up once, when the cursors are set; a table without it serves ids of no account.
An id stored for an account, or more than once, is answered with every item (:class:`.scoped.Variants`),
the lookup picking the requesting account's; the poll keys its rows and the served items by
``(id, account)``, so a change or deletion of one account's item is reported (as its id).

A host's own PBS-Go queries (:class:`HostQueries`) replace the tables of stored requests and imps:
see :mod:`.host_queries`.

A lookup that cannot connect marks the database down for :data:`RETRY_SECONDS`: requests
meanwhile fail at once instead of each waiting for a connection attempt.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

from hbserver.stores.stored.base import KINDS, LOCATIONS, Answer, BackendError, Kind, Wanted
from hbserver.stores.stored.host_queries import HostQueries, HostQueryRunner
from hbserver.stores.stored.scoped import SCOPED_KINDS, gather
from hbserver.stores.stored.templates import Style

POOL_MAX_SIZE = 4
CONNECT_TIMEOUT_SECONDS = 5.0
CLOSE_TIMEOUT_SECONDS = 5.0
RETRY_SECONDS = 1.0
POLL_OVERLAP_SECONDS = 10.0

# Kinds whose table came later than CONTRACT §3's four: a database without it still serves the others.
OPTIONAL_KINDS: tuple[Kind, ...] = ("profiles",)
ACCOUNT_COLUMN = "account"  # of stored_requests and stored_imps, when the database has it

Changes = dict[Kind, set[str]]
_Item = tuple[str, "str | None"]  # (id, account): one stored row (account None: of no account)


class Connection(Protocol):
    """asyncpg's connection API, which the MySQL dialect wraps asyncmy's in."""

    async def fetch(self, query: str, *args: Any) -> Sequence[Sequence[Any]]: ...

    async def fetchval(self, query: str, *args: Any) -> Any: ...


class Dialect(Protocol):
    """What one database product needs: its pool, its errors and its SQL."""

    style: Style

    async def open(self, pool_size: int) -> None: ...

    async def close(self) -> None: ...

    def acquire(self) -> AbstractAsyncContextManager[Connection]: ...

    def classify(self, exc: BaseException) -> str | None:
        """``unavailable`` (no usable connection), ``error`` (this query failed), None (not the driver's)."""

    def select(self, table: str, ids: list[str], scoped: bool) -> tuple[str, list[object]]:
        """``id, account, data`` (text) of the stored rows of ``ids``; the account is NULL for none
        (empty, NULL, or a table without the column: ``scoped`` false)."""

    def existing(self, table: str, ids: list[str], scoped: bool) -> tuple[str, list[object]]:
        """``id, account`` of the stored rows of ``ids`` (the account as :meth:`select`'s)."""

    def cursor(self, table: str) -> str:
        """The newest ``updated_at``, never after now, and now for an empty table (never NULL)."""

    def changed(self, table: str, scoped: bool) -> str:
        """``id, account, updated_at`` of the rows updated after the one argument."""

    def table_exists(self) -> str:
        """1/true when the table named by the one argument is there."""

    def column_exists(self) -> str:
        """1/true when the table named by the first argument has the column named by the second."""

    def now(self) -> str: ...


class SqlBackend:
    name = "database"

    def __init__(
        self,
        dialect: Dialect,
        *,
        track_size: int = 10000,
        pool_size: int = POOL_MAX_SIZE,
        clock: Callable[[], float] = time.monotonic,
        queries: HostQueries | None = None,
    ) -> None:
        self.dialect = dialect
        self.track_size = track_size
        self.pool_size = pool_size
        self._clock = clock
        self._started = False
        self._down_until = 0.0
        self._down_reason = ""
        self._served: dict[Kind, OrderedDict[_Item, None]] = {kind: OrderedDict() for kind in KINDS}
        self._cursors: dict[Kind, dt.datetime] | None = None
        self._cursor_lock = asyncio.Lock()
        self._reported: dict[tuple[Kind, _Item], dt.datetime] = {}
        self._scoped: set[Kind] = set()  # kinds whose table has the account column (looked up with the cursors)
        self._unreported: Changes = {kind: set() for kind in KINDS}
        self._absent: set[Kind] = set()  # optional kinds without a table (as of the last look)
        self._host = HostQueryRunner(queries, dialect.style) if queries is not None and queries.any() else None
        # The kinds a host's fetcher query serves: hbserver's tables are not read (nor polled) for them,
        # and every other table becomes optional (the host's database may have only its own).
        self._hosted: frozenset[Kind] = self._host.kinds if self._host is not None else frozenset()
        self._optional = OPTIONAL_KINDS if self._host is None else tuple(k for k in KINDS if k not in self._hosted)

    def for_amp(self) -> AmpView:
        """This backend as AMP's chain asks it: ``fetcher.amp_query`` (else ``fetcher.query``) for stored
        requests and imps; the same pool, cursors and tracking."""
        return AmpView(self)

    async def start(self) -> None:
        """Create the pool; it connects on first use, so this never waits for the database."""
        if not self._started:
            await self.dialect.open(self.pool_size)
            self._started = True

    async def close(self) -> None:
        if self._started:
            self._started = False
            await self.dialect.close()

    def _unavailable(self, exc: BaseException) -> BackendError:
        self._down_until = self._clock() + RETRY_SECONDS
        self._down_reason = exc.__class__.__name__
        return BackendError(f"database unavailable: {self._down_reason}", "unavailable", str(exc))

    def _failed(self, exc: BaseException) -> BackendError:
        """The BackendError a driver's exception means; re-raises one that is not the driver's."""
        kind = self.dialect.classify(exc)
        if kind == "unavailable":
            return self._unavailable(exc)
        if kind == "error":
            return BackendError(f"database error: {exc.__class__.__name__}", detail=str(exc))
        raise exc

    def _check_up(self) -> None:
        if not self._started:
            raise BackendError("database unavailable: not started", "unavailable")
        if self._clock() < self._down_until:
            raise BackendError(f"database unavailable: {self._down_reason}", "unavailable")

    async def fetch(self, wanted: Wanted, amp: bool = False) -> Answer:
        self._check_up()
        answer: Answer = {}
        try:
            async with self.dialect.acquire() as conn:
                await self._ensure_cursors(conn)
                if self._host is not None:
                    answer.update(await self._host.fetch(conn, wanted, amp))
                for kind, ids in wanted.items():
                    if kind in self._hosted:
                        continue
                    if kind in self._absent or not ids:
                        answer[kind] = {}
                        continue
                    query = self.dialect.select(LOCATIONS[kind], list(ids), kind in self._scoped)
                    rows = [(row[0], row[1], _raw(row[2])) for row in await conn.fetch(*_flat(query))]
                    self._track(kind, [(row[0], row[1]) for row in rows])
                    answer[kind] = gather(rows)  # type: ignore[assignment]  # Variants: the lookup picks
        except Exception as exc:  # the dialect tells which are the driver's
            raise self._failed(exc) from None
        return answer

    def _track(self, kind: Kind, items: list[_Item]) -> None:
        """Remember served rows, so that their deletion is reported (the most recent ``track_size``)."""
        served = self._served[kind]
        for item in items:
            served[item] = None
            served.move_to_end(item)
        while len(served) > self.track_size:
            served.popitem(last=False)

    async def poll(self) -> Changes:
        """The ids changed or deleted since the last poll, per kind; raises BackendError."""
        if not self._started:
            raise BackendError("database unavailable: not started", "unavailable")
        # Kept across a poll that fails half-way: what it found is reported by the next one.
        changes = self._unreported
        try:
            async with self.dialect.acquire() as conn:
                await self._ensure_cursors(conn)
                now: dt.datetime = await conn.fetchval(self.dialect.now())
                await self._look_for_tables(conn)
                if self._host is not None:
                    for kind, ids in (await self._host.poll(conn, now, POLL_OVERLAP_SECONDS)).items():
                        changes[kind] |= ids
                for kind in KINDS:
                    if kind in self._absent or kind in self._hosted:
                        continue
                    await self._poll_updates(conn, kind, now, changes[kind])
                    await self._poll_deletions(conn, kind, changes[kind])
        except Exception as exc:  # the dialect tells which are the driver's
            raise self._failed(exc) from None
        self._down_until = 0.0  # reachable again: lookups need not wait for RETRY_SECONDS
        self._unreported = {kind: set() for kind in KINDS}
        return {kind: ids for kind, ids in changes.items() if kind not in self._absent or ids}

    async def _ensure_cursors(self, conn: Connection) -> None:
        """Set the change cursors before the first row is served, so that every later change is seen.

        Rows already inside the overlap window are recorded as reported: they are not news.
        """
        if self._cursors is not None:
            return
        async with self._cursor_lock:
            if self._cursors is not None:
                return
            cursors: dict[Kind, dt.datetime] = {}
            for kind in KINDS:
                if kind in self._hosted:
                    continue
                if kind in self._optional and not await self._table_exists(conn, kind):
                    self._absent.add(kind)
                    continue
                await self._found_table(conn, kind, cursors)
            if self._host is not None:
                self._host.start_cursor(await conn.fetchval(self.dialect.now()))
            self._cursors = cursors

    async def _table_exists(self, conn: Connection, kind: Kind) -> bool:
        return bool(await conn.fetchval(self.dialect.table_exists(), LOCATIONS[kind]))

    async def _found_table(self, conn: Connection, kind: Kind, cursors: dict[Kind, dt.datetime]) -> None:
        """A table read from now on: whether it has the account column, and its change cursor.

        Rows already inside the overlap window are recorded as reported: they are not news."""
        table = LOCATIONS[kind]
        if kind in SCOPED_KINDS and await conn.fetchval(self.dialect.column_exists(), table, ACCOUNT_COLUMN):
            self._scoped.add(kind)
        overlap = dt.timedelta(seconds=POLL_OVERLAP_SECONDS)
        cursor = cursors[kind] = await conn.fetchval(self.dialect.cursor(table))
        for item_id, account, updated_at in await conn.fetch(self._changed(kind), cursor - overlap):
            self._reported[kind, (item_id, account)] = updated_at

    def _changed(self, kind: Kind) -> str:
        return self.dialect.changed(LOCATIONS[kind], kind in self._scoped)

    async def _look_for_tables(self, conn: Connection) -> None:
        """An optional table created since the last look is read from now on (none of its rows was served)."""
        assert self._cursors is not None
        for kind in list(self._absent):
            if await self._table_exists(conn, kind):
                await self._found_table(conn, kind, self._cursors)
                self._absent.discard(kind)

    async def _poll_updates(self, conn: Connection, kind: Kind, now: dt.datetime, out: set[str]) -> None:
        assert self._cursors is not None
        overlap = dt.timedelta(seconds=POLL_OVERLAP_SECONDS)
        cursor = self._cursors[kind]
        newest = cursor
        for item_id, account, updated_at in await conn.fetch(self._changed(kind), cursor - overlap):
            key = (kind, (item_id, account))
            if self._reported.get(key) != updated_at:
                self._reported[key] = updated_at
                out.add(item_id)
            newest = max(newest, updated_at)
        # A row stamped in the future (a writer's clock ahead) must not carry the cursor past now.
        cursor = self._cursors[kind] = max(cursor, min(newest, now))
        horizon = cursor - overlap
        for key in [k for k, at in self._reported.items() if k[0] == kind and at <= horizon]:
            del self._reported[key]

    async def _poll_deletions(self, conn: Connection, kind: Kind, out: set[str]) -> None:
        served = self._served[kind]
        if not served:
            return
        items = list(served)
        query = self.dialect.existing(LOCATIONS[kind], list(dict.fromkeys(i for i, _ in items)), kind in self._scoped)
        existing = {(row[0], row[1]) for row in await conn.fetch(*_flat(query))}
        for item in items:
            if item not in existing:
                served.pop(item, None)
                out.add(item[0])


class AmpView:
    """A :class:`SqlBackend` as AMP's backend chain asks it (see :meth:`SqlBackend.for_amp`)."""

    name = "database"

    def __init__(self, backend: SqlBackend) -> None:
        self.backend = backend

    async def fetch(self, wanted: Wanted) -> Answer:
        return await self.backend.fetch(wanted, amp=True)


def _flat(query: tuple[str, list[object]]) -> tuple[object, ...]:
    return (query[0], *query[1])


def _raw(data: object) -> bytes:
    """A data column as the JSON bytes served: text is encoded, bytes are kept."""
    if isinstance(data, str):
        return data.encode()
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise TypeError(f"stored data column is {type(data).__name__}, not text")
