"""The PostgreSQL backend (asyncpg) and the change poll that keeps running servers current.

Tables ``stored_requests``, ``stored_imps``, ``stored_responses`` and ``accounts``, each
``(id text primary key, data jsonb, updated_at timestamptz)`` (CONTRACT §3), and ``profiles`` of the
same shape, which a database may lack (:data:`OPTIONAL_KINDS`: read as empty, looked for again at
each poll); a row whose data is SQL NULL or JSON ``null`` is not stored. One small pool per worker,
created without connecting, so a database that is down when the server starts only makes lookups
fail with a clear error.

Change detection (:meth:`PostgresBackend.poll`), every ``refresh_rate_seconds``:

- updates and inserts: rows with ``updated_at`` newer than the last one seen, minus an overlap
  (:data:`POLL_OVERLAP_SECONDS`) so that a transaction committing a little after its
  ``updated_at`` is not missed; ``(id, updated_at)`` pairs already reported are not reported twice.
- deletions: the ids this backend has served (the most recent ``track_size`` per kind) are checked
  for existence; the ones gone are reported once.
- the cursors are set before the first row is served (by the first lookup or poll that reaches
  the database), so no change after a row was read can be missed.

A lookup that cannot connect marks the database down for :data:`RETRY_SECONDS`: requests
meanwhile fail at once instead of each waiting for a connection attempt.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections import OrderedDict
from collections.abc import Callable

import asyncpg

from hbserver.stores.stored.base import KINDS, LOCATIONS, Answer, BackendError, Failure, Kind, Wanted

POOL_MAX_SIZE = 4
CONNECT_TIMEOUT_SECONDS = 5.0
CLOSE_TIMEOUT_SECONDS = 5.0
RETRY_SECONDS = 1.0
POLL_OVERLAP_SECONDS = 10.0

_STORED = "jsonb_typeof(data) <> 'null'"  # false for SQL NULL and JSON null alike
_SELECT = {k: f"SELECT id, data::text FROM {t} WHERE id = ANY($1::text[]) AND {_STORED}" for k, t in LOCATIONS.items()}
_EXISTING = {k: f"SELECT id FROM {t} WHERE id = ANY($1::text[]) AND {_STORED}" for k, t in LOCATIONS.items()}
_CURSOR = {k: f"SELECT least(max(updated_at), now()) FROM {t}" for k, t in LOCATIONS.items()}  # never NULL
_CHANGED = {k: f"SELECT id, updated_at FROM {t} WHERE updated_at > $1" for k, t in LOCATIONS.items()}
_TABLE_EXISTS = "SELECT to_regclass($1) IS NOT NULL"  # on the search path, as the queries above

# Kinds whose table came later than CONTRACT §3's four: a database without it still serves the others.
OPTIONAL_KINDS: tuple[Kind, ...] = ("profiles",)

# Errors that mean "no usable connection" rather than "this query failed".
_CONNECTION_ERRORS = (
    OSError,
    asyncpg.InterfaceError,
    asyncpg.PostgresConnectionError,
    asyncpg.CannotConnectNowError,
    asyncpg.TooManyConnectionsError,
    asyncpg.InvalidAuthorizationSpecificationError,
    asyncpg.InvalidCatalogNameError,
)

Changes = dict[Kind, set[str]]


class PostgresBackend:
    name = "database"

    def __init__(
        self, dsn: str, *, track_size: int = 10000, pool_size: int = POOL_MAX_SIZE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.dsn = dsn
        self.track_size = track_size
        self.pool_size = pool_size
        self._clock = clock
        self._pool: asyncpg.Pool | None = None
        self._down_until = 0.0
        self._down_reason = ""
        self._served: dict[Kind, OrderedDict[str, None]] = {kind: OrderedDict() for kind in KINDS}
        self._cursors: dict[Kind, dt.datetime] | None = None
        self._cursor_lock = asyncio.Lock()
        self._reported: dict[tuple[Kind, str], dt.datetime] = {}
        self._unreported: Changes = {kind: set() for kind in KINDS}
        self._absent: set[Kind] = set()  # optional kinds without a table (as of the last look)

    async def start(self) -> None:
        """Create the pool; it connects on first use (min_size 0), so this never waits for the database."""
        if self._pool is None:
            self._pool = await asyncpg.create_pool(
                self.dsn, min_size=0, max_size=self.pool_size, timeout=CONNECT_TIMEOUT_SECONDS,
                max_inactive_connection_lifetime=60.0,
            )

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        try:
            await asyncio.wait_for(pool.close(), CLOSE_TIMEOUT_SECONDS)
        except TimeoutError:
            pool.terminate()

    def _unavailable(self, exc: BaseException) -> BackendError:
        self._down_until = self._clock() + RETRY_SECONDS
        self._down_reason = exc.__class__.__name__
        return BackendError(f"database unavailable: {self._down_reason}", "unavailable", str(exc))

    async def fetch(self, wanted: Wanted) -> Answer:
        pool = self._pool
        if pool is None:
            raise BackendError("database unavailable: not started", "unavailable")
        if self._clock() < self._down_until:
            raise BackendError(f"database unavailable: {self._down_reason}", "unavailable")
        answer: Answer = {}
        try:
            async with pool.acquire() as conn:
                await self._ensure_cursors(conn)
                for kind, ids in wanted.items():
                    if kind in self._absent:
                        answer[kind] = {}
                        continue
                    rows = await conn.fetch(_SELECT[kind], list(ids))
                    found: dict[str, bytes | Failure] = {row[0]: row[1].encode() for row in rows}
                    answer[kind] = found
        except _CONNECTION_ERRORS as exc:
            raise self._unavailable(exc) from None
        except asyncpg.PostgresError as exc:
            raise BackendError(f"database error: {exc.__class__.__name__}", detail=str(exc)) from None
        for kind, found in answer.items():
            self._track(kind, found)
        return answer

    def _track(self, kind: Kind, ids: dict[str, bytes | Failure]) -> None:
        served = self._served[kind]
        for item_id in ids:
            served[item_id] = None
            served.move_to_end(item_id)
        while len(served) > self.track_size:
            served.popitem(last=False)

    async def poll(self) -> Changes:
        """The ids changed or deleted since the last poll, per kind; raises BackendError."""
        pool = self._pool
        if pool is None:
            raise BackendError("database unavailable: not started", "unavailable")
        # Kept across a poll that fails half-way: what it found is reported by the next one.
        changes = self._unreported
        try:
            async with pool.acquire() as conn:
                await self._ensure_cursors(conn)
                now: dt.datetime = await conn.fetchval("SELECT now()")
                await self._look_for_tables(conn)
                for kind in KINDS:
                    if kind in self._absent:
                        continue
                    await self._poll_updates(conn, kind, now, changes[kind])
                    await self._poll_deletions(conn, kind, changes[kind])
        except _CONNECTION_ERRORS as exc:
            raise self._unavailable(exc) from None
        except asyncpg.PostgresError as exc:
            raise BackendError(f"database error: {exc.__class__.__name__}", detail=str(exc)) from None
        self._down_until = 0.0  # reachable again: lookups need not wait for RETRY_SECONDS
        self._unreported = {kind: set() for kind in KINDS}
        return {kind: ids for kind, ids in changes.items() if kind not in self._absent}

    async def _ensure_cursors(self, conn: asyncpg.Connection) -> None:
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
                if kind in OPTIONAL_KINDS and not await conn.fetchval(_TABLE_EXISTS, LOCATIONS[kind]):
                    self._absent.add(kind)
                    continue
                await self._set_cursor(conn, kind, cursors)
            self._cursors = cursors

    async def _set_cursor(self, conn: asyncpg.Connection, kind: Kind, cursors: dict[Kind, dt.datetime]) -> None:
        overlap = dt.timedelta(seconds=POLL_OVERLAP_SECONDS)
        cursor = cursors[kind] = await conn.fetchval(_CURSOR[kind])
        for item_id, updated_at in await conn.fetch(_CHANGED[kind], cursor - overlap):
            self._reported[kind, item_id] = updated_at

    async def _look_for_tables(self, conn: asyncpg.Connection) -> None:
        """An optional table created since the last look is read from now on (none of its rows was served)."""
        assert self._cursors is not None
        for kind in list(self._absent):
            if await conn.fetchval(_TABLE_EXISTS, LOCATIONS[kind]):
                await self._set_cursor(conn, kind, self._cursors)
                self._absent.discard(kind)

    async def _poll_updates(self, conn: asyncpg.Connection, kind: Kind, now: dt.datetime, out: set[str]) -> None:
        assert self._cursors is not None
        overlap = dt.timedelta(seconds=POLL_OVERLAP_SECONDS)
        cursor = self._cursors[kind]
        newest = cursor
        for item_id, updated_at in await conn.fetch(_CHANGED[kind], cursor - overlap):
            key = (kind, item_id)
            if self._reported.get(key) != updated_at:
                self._reported[key] = updated_at
                out.add(item_id)
            newest = max(newest, updated_at)
        # A row stamped in the future (a writer's clock ahead) must not carry the cursor past now.
        cursor = self._cursors[kind] = max(cursor, min(newest, now))
        horizon = cursor - overlap
        for key in [k for k, at in self._reported.items() if k[0] == kind and at <= horizon]:
            del self._reported[key]

    async def _poll_deletions(self, conn: asyncpg.Connection, kind: Kind, out: set[str]) -> None:
        served = self._served[kind]
        if not served:
            return
        ids = list(served)
        existing = {row[0] for row in await conn.fetch(_EXISTING[kind], ids)}
        for item_id in ids:
            if item_id not in existing:
                served.pop(item_id, None)
                out.add(item_id)
