"""Fixtures for the stored-data tests: a metrics registry, a recording test backend, and a
PostgreSQL schema of its own per test (database ``test``; ``make test`` starts the server)."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass

import asyncpg
import pytest

from hbserver.metrics import Metrics
from hbserver.stores.stored.base import Answer, BackendError, Failure, Kind, Wanted
from tests.services import require

PG_URL = os.environ.get("HBS_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
TABLES = ("stored_requests", "stored_imps", "stored_responses", "accounts")


def sample(metrics: Metrics, name: str, **labels: str) -> float:
    metrics.flush()
    value = metrics.registry.get_sample_value(f"hbserver_{name}", labels)
    return value or 0.0


class RecordingBackend:
    """A backend holding a fixed map; records each batch it is asked, can be slow or fail."""

    def __init__(
        self, name: str, data: Mapping[Kind, Mapping[str, bytes | Failure]] | None = None, *,
        delay: float = 0.0, error: BackendError | None = None,
    ) -> None:
        self.name = name
        self.data = data or {}
        self.delay = delay
        self.error = error
        self.calls: list[dict[Kind, list[str]]] = []

    async def fetch(self, wanted: Wanted) -> Answer:
        self.calls.append({kind: list(ids) for kind, ids in wanted.items()})
        data, error = self.data, self.error  # read now, answered after the delay
        if self.delay:
            await asyncio.sleep(self.delay)
        if error is not None:
            raise error
        return {kind: {i: data[kind][i] for i in ids if i in data.get(kind, {})} for kind, ids in wanted.items()}


@dataclass
class Database:
    """A schema of its own in database ``test``; ``dsn`` puts it first on the search path."""

    dsn: str
    conn: asyncpg.Connection

    async def put(self, table: str, item_id: str, data: str | None) -> None:
        await self.conn.execute(
            f"INSERT INTO {table} (id, data, updated_at) VALUES ($1, $2::jsonb, clock_timestamp()) "
            "ON CONFLICT (id) DO UPDATE SET data = EXCLUDED.data, updated_at = EXCLUDED.updated_at",
            item_id, data,
        )

    async def delete(self, table: str, item_id: str) -> None:
        await self.conn.execute(f"DELETE FROM {table} WHERE id = $1", item_id)


@pytest.fixture
async def database() -> AsyncIterator[Database]:
    try:
        conn = await asyncpg.connect(PG_URL, timeout=5)
    except (OSError, asyncpg.PostgresError, TimeoutError) as exc:
        require(False, f"PostgreSQL is not reachable at {PG_URL}: {exc}")
        raise  # unreachable: require() skipped or failed
    schema = f"hbs_test_{uuid.uuid4().hex[:16]}"
    try:
        await conn.execute(f"CREATE SCHEMA {schema}")
        for table in TABLES:
            await conn.execute(
                f"CREATE TABLE {schema}.{table} "
                "(id text PRIMARY KEY, data jsonb, updated_at timestamptz NOT NULL DEFAULT now())"
            )
        await conn.execute(f"SET search_path TO {schema}")
        joiner = "&" if "?" in PG_URL else "?"
        yield Database(f"{PG_URL}{joiner}search_path={schema}", conn)
    finally:
        await conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        await conn.close()
