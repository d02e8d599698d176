"""PBS-Go's ``stored_requests.http_events`` against a real aiohttp server on a local socket: the start-up
load, refreshes with ``last-modified``, saves and ``{"deleted": true}`` deletions reaching the cache,
AMP's cache apart, and failures (status, timeout, size bound, bad JSON) that change nothing."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson
import pytest
from aiohttp import web

from hbserver.metrics import Metrics
from hbserver.stores.stored import StoredData
from hbserver.stores.stored.events import MEMBERS, EventsError, HttpEvents, last_modified_url, parse_events
from hbserver.web.client import SharedSession
from tests.conftest import make_config
from tests.stores.conftest import RecordingBackend, sample

T0 = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    ("body", "saves", "deletions"),
    [
        (b"{}", {}, {}),
        (
            b'{"requests": {"a": {"id": "a"}, "b": {"deleted": true}}}',
            {"requests": {"a": b'{"id":"a"}'}},
            {"requests": ["b"]},
        ),
        (
            b'{"imps": {"i": {"deleted": false}}, "accounts": {"x": {"deleted": true}}}',
            {"imps": {"i": b'{"deleted":false}'}},
            {"accounts": ["x"]},
        ),
        (b'{"responses": {"r": null}, "requests": null}', {}, {}),  # null: nothing
        (b'{"other": {"a": 1}}', {}, {}),  # members PBS-Go does not read
    ],
)
def test_answers_split_into_saves_and_deletions(body, saves, deletions):
    assert parse_events(body, MEMBERS) == (saves, deletions)


@pytest.mark.parametrize("body", [b"[]", b"not json", b'{"requests": []}', b'{"imps": "x"}'])
def test_malformed_answers_are_refused(body):
    with pytest.raises(EventsError):
        parse_events(body, MEMBERS)


def test_last_modified_is_rfc3339_utc_and_replaces_one_given():
    plus_two = dt.timezone(dt.timedelta(hours=2))
    url = last_modified_url(
        "http://h.example/ev?x=1&last-modified=old", dt.datetime(2026, 1, 2, 5, 4, 5, tzinfo=plus_two)
    )
    assert url.query.getall("last-modified") == ["2026-01-02T03:04:05Z"]
    assert url.query["x"] == "1"


@dataclass
class Host:
    answers: list[Any] = field(default_factory=list)  # each a document, a status or bytes; the last repeats
    delay: float = 0.0
    asked: list[str] = field(default_factory=list)


@pytest.fixture
async def host(aiohttp_server) -> AsyncIterator[tuple[Host, str]]:
    state = Host()

    async def handle(request: web.Request) -> web.Response:
        state.asked.append(request.rel_url.raw_query_string)
        await asyncio.sleep(state.delay)
        answer = state.answers.pop(0) if len(state.answers) > 1 else state.answers[0]
        if isinstance(answer, int):
            return web.Response(status=answer)
        return web.Response(body=answer if isinstance(answer, bytes) else orjson.dumps(answer))

    app = web.Application()
    app.router.add_get("/events", handle)
    server = await aiohttp_server(app)
    yield state, str(server.make_url("/events"))


@pytest.fixture
async def session() -> AsyncIterator[SharedSession]:
    shared = SharedSession()
    yield shared
    await shared.close()


def make(stored: StoredData, url: str, session: SharedSession, **kw: Any) -> HttpEvents:
    clock = iter([T0, *(T0 + dt.timedelta(minutes=n) for n in range(1, 100))])
    kw.setdefault("timeout_ms", 1000)
    return HttpEvents(url, session, stored, refresh_rate_seconds=3600, now=lambda: next(clock), **kw)


def stored_with(data: dict[str, dict[str, bytes]]) -> tuple[StoredData, Metrics]:
    metrics = Metrics()
    return StoredData(metrics, filesystem=RecordingBackend("filesystem", data)), metrics  # type: ignore[arg-type]


async def test_a_save_is_served_and_a_deletion_brings_the_backend_back(host, session):
    state, url = host
    stored, _ = stored_with({"requests": {"a": b'{"id":"file"}'}})
    state.answers = [{"requests": {"a": {"id": "saved"}, "new": {"id": "new"}}}]
    events = make(stored, url, session)
    await events.start()
    try:
        assert state.asked == [""]  # the start-up load asks for everything
        found, _imps, errors = await stored.fetch_requests(["a", "new"], [], 1.0)
        assert found == {"a": b'{"id":"saved"}', "new": b'{"id":"new"}'} and errors == []
        state.answers = [{"requests": {"a": {"deleted": True}, "new": {"deleted": True}}}]
        assert await events.refresh_once()
        assert state.asked[1] == "last-modified=2026-01-02T03:04:05Z"  # since the load
        found, _imps, errors = await stored.fetch_requests(["a", "new"], [], 1.0)
        assert found == {"a": b'{"id":"file"}'} and errors == ['Stored Request with ID="new" not found.']
        state.answers = [{}]
        assert await events.refresh_once()
        assert state.asked[2] == "last-modified=2026-01-02T03:05:05Z"  # since the last refresh that worked
    finally:
        await events.close()


async def test_amp_events_feed_amp_cache_alone(host, session):
    state, url = host
    stored, _ = stored_with({"requests": {"a": b'{"id":"file"}'}})
    state.answers = [{"requests": {"a": {"id": "amp"}}, "accounts": {"x": {"id": "x"}}}]
    events = make(stored, url, session, amp=True)
    assert await events.fetch_all()
    assert (await stored.fetch_amp_request("a", 1.0))[0] == b'{"id":"amp"}'
    assert (await stored.fetch_requests(["a"], [], 1.0))[0] == {"a": b'{"id":"file"}'}
    assert await stored.fetch_account("x") is None  # AMP's endpoint feeds requests and imps only


async def test_a_saved_account_is_loaded_and_its_listeners_told(host, session):
    state, url = host
    stored, _ = stored_with({"accounts": {"x": b'{"id":"x","disabled":false}'}})
    told: list[str] = []
    stored.add_listener("accounts", told.append)
    state.answers = [{"accounts": {"x": {"id": "x", "disabled": True}}}]
    assert await make(stored, url, session).fetch_all()
    assert told == ["x"]
    assert await stored.fetch_account("x") == b'{"id":"x","disabled":true}'
    state.answers = [{"accounts": {"x": {"deleted": True}}}]
    assert await make(stored, url, session).fetch_all()
    assert told == ["x", "x"]
    assert await stored.fetch_account("x") == b'{"id":"x","disabled":false}'


@pytest.mark.parametrize(
    ("answer", "delay", "reason"),
    [
        (500, 0.0, "status"),
        (b"[1]", 0.0, "malformed"),
        (b'{"requests": {"a": {"id": "x"}}}', 0.5, "timeout"),
        (orjson.dumps({"requests": {"a": {"id": "x" * 300}}}), 0.0, "too_large"),
    ],
)
async def test_a_failed_refresh_changes_nothing_and_is_counted(host, session, answer, delay, reason):
    state, url = host
    stored, metrics = stored_with({"requests": {"a": b'{"id":"file"}'}})
    state.answers, state.delay = [answer], delay
    events = make(stored, url, session, timeout_ms=200, max_bytes=256)
    assert not await events.refresh_once()
    assert events.last_update == T0  # the next refresh asks from the same time
    assert sample(metrics, "stored_data_fetch_errors_total", backend="http_events", reason=reason) == 1
    assert (await stored.fetch_requests(["a"], [], 1.0))[0] == {"a": b'{"id":"file"}'}


async def test_the_server_polls_at_the_refresh_rate(host):
    from hbserver.app import create_app
    from hbserver.appkeys import STORED

    state, url = host
    state.answers = [{"requests": {"a": {"id": "first"}}}, {}, {"requests": {"a": {"id": "second"}}}, {}]
    config = make_config(
        stored_requests={
            "filesystem": {"enabled": False},
            "http_events": {"endpoint": url, "refresh_rate_seconds": 1, "timeout_ms": 500},
        }
    )
    app = create_app(config)
    async with _running(app):
        assert (await app[STORED].fetch_requests(["a"], [], 1.0))[0] == {"a": b'{"id":"first"}'}
        for _ in range(60):
            await asyncio.sleep(0.1)
            if (await app[STORED].fetch_requests(["a"], [], 1.0))[0] == {"a": b'{"id":"second"}'}:
                break
        else:
            pytest.fail(f"the refresh never came: {state.asked}")
    assert state.asked[0] == "" and all(q.startswith("last-modified=") for q in state.asked[1:])


@contextlib.asynccontextmanager
async def _running(app: web.Application) -> AsyncIterator[None]:
    """The app started (its cleanup contexts entered) without listening."""
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        yield
    finally:
        await runner.cleanup()


def test_config_checks():
    from hbserver.config import ConfigError

    with pytest.raises(ConfigError, match=r"http_events.refresh_rate_seconds: must be 0 if in_memory_cache.type"):
        make_config(stored_requests={"in_memory_cache": {"type": "none"}, "http_events": {"refresh_rate_seconds": 5}})
    with pytest.raises(ConfigError, match=r"http_events.timeout_ms: must be > 0"):
        make_config(stored_requests={"http_events": {"endpoint": "http://127.0.0.1:1/e", "refresh_rate_seconds": 5}})
    with pytest.raises(ConfigError, match=r"http_events.amp_endpoint: not a URL"):
        make_config(stored_requests={"http_events": {"amp_endpoint": "ftp://x"}})
