"""PostgreSQL selected by PBS-Go's keys (``connection.driver: postgres``) with a host's PBS-Go queries, against
the real server: its fetcher query serves requests and imps (AMP's its own), its poll query's rows (NULL data
a deletion) reach the running service."""

from __future__ import annotations

import asyncio
import time
from urllib.parse import parse_qs, urlsplit

from hbserver.metrics import Metrics
from hbserver.stores.stored import build_stored_data
from hbserver.web.client import SharedSession
from tests.conftest import make_config
from tests.stores.conftest import Database


async def test_a_pbs_go_postgres_section_works_unchanged(database: Database):
    url = urlsplit(database.dsn)
    schema = parse_qs(url.query)["search_path"][0]
    await database.conn.execute(
        f"CREATE TABLE {schema}.go_requests (id text PRIMARY KEY, requestData text, last_updated timestamptz "
        "NOT NULL DEFAULT now()); "
        f"CREATE TABLE {schema}.go_amp (LIKE {schema}.go_requests INCLUDING ALL)"
    )

    async def put(table: str, item_id: str, data: str | None) -> None:
        await database.conn.execute(
            f"INSERT INTO {schema}.{table} VALUES ($1, $2, clock_timestamp()) ON CONFLICT (id) DO UPDATE "
            "SET requestData = EXCLUDED.requestData, last_updated = EXCLUDED.last_updated",
            item_id,
            data,
        )

    fetch = (
        f"SELECT id, requestData, 'request' as type FROM {schema}.go_requests WHERE id in $REQUEST_ID_LIST "
        f"UNION ALL SELECT id, requestData, 'imp' as type FROM {schema}.go_requests WHERE id in $IMP_ID_LIST"
    )
    poll = f"SELECT id, requestData, 'request' AS type FROM {schema}.go_requests WHERE last_updated > $LAST_UPDATED"
    config = make_config(
        {
            "stored_requests": {
                "filesystem": {"enabled": False},
                "database": {
                    "connection": {
                        "driver": "postgres",
                        "dbname": url.path.lstrip("/"),
                        "host": url.hostname,
                        "port": url.port or 5432,
                        "user": url.username or "",
                    },
                    "fetcher": {"query": fetch, "amp_query": fetch.replace(".go_requests", ".go_amp")},
                    "poll_for_updates": {"refresh_rate_seconds": 1, "query": poll},
                },
            }
        }
    )
    await put("go_requests", "r", '{"v": 1}')
    await put("go_amp", "r", '{"amp": 1}')
    stored = build_stored_data(config, Metrics(), SharedSession())
    assert stored.database is not None
    await stored.database.start()
    assert await stored.poll_once()
    await stored.start()
    try:
        assert await stored.fetch_requests(["r"], ["r"], 2) == ({"r": b'{"v": 1}'}, {"r": b'{"v": 1}'}, [])
        assert (await stored.fetch_amp_request("r", 2))[0] == b'{"amp": 1}'
        await put("go_requests", "r", None)  # PBS-Go's deletion
        deadline = time.monotonic() + 5
        while (await stored.fetch_requests(["r"], [], 2))[2] != ['Stored Request with ID="r" not found.']:
            assert time.monotonic() < deadline, "the deletion did not arrive"
            await asyncio.sleep(0.1)
    finally:
        await stored.close()
