"""PBS-Java's cache admin endpoints (``admin_endpoints``) and the bus that tells every worker: the bus
between workers over real Unix sockets, the endpoints' answers in PBS-Java's words, the changes they
make reaching the next lookup, and the admin port as the only place they are served."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from hbserver.app import create_admin_app, create_app
from hbserver.appkeys import ACCOUNTS, ADMIN_ROUTES, STORED
from hbserver.config import ConfigError
from hbserver.stores.stored.peers import ChangeBus, Message
from tests.conftest import make_config


@pytest.fixture
def run_dir() -> Iterator[str]:
    directory = tempfile.mkdtemp(prefix="hbs-", dir="/tmp")  # short: a socket path has at most 107 bytes
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def buses(run_dir: str, count: int, **kw: Any) -> tuple[list[ChangeBus], list[list[Message]]]:
    seen: list[list[Message]] = [[] for _ in range(count)]
    return [ChangeBus(seen[i].append, i, count, run_dir, **kw) for i in range(count)], seen


async def test_a_change_is_applied_on_every_worker_before_publish_returns(run_dir):
    workers, seen = buses(run_dir, 3)
    for bus in workers:
        await bus.start()
    try:
        assert await workers[1].publish({"op": "account", "id": "a"}) == []
        assert seen == [[{"op": "account", "id": "a"}]] * 3
    finally:
        for bus in workers:
            await bus.close()
    assert not list(Path(run_dir).iterdir())  # the sockets are removed


async def test_a_worker_that_does_not_confirm_is_named(run_dir):
    workers, seen = buses(run_dir, 3, timeout=0.5)
    await workers[0].start()
    await workers[2].start()
    try:
        assert await workers[0].publish({"op": "x"}) == [1]  # not listening (restarting, say)
        assert seen == [[{"op": "x"}], [], [{"op": "x"}]]
    finally:
        await workers[0].close()
        await workers[2].close()


async def test_a_message_over_the_bound_is_refused_by_the_peer(run_dir):
    workers, seen = buses(run_dir, 2, max_bytes=64)
    for bus in workers:
        await bus.start()
    try:
        assert await workers[0].publish({"op": "save", "requests": {"a": "x" * 64}}) == [1]
        assert seen[1] == []
        assert await workers[0].publish({"op": "small"}) == []
        assert seen[1] == [{"op": "small"}]
    finally:
        for bus in workers:
            await bus.close()


async def test_one_worker_applies_alone():
    seen: list[Message] = []
    bus = ChangeBus(seen.append)
    await bus.start()
    assert await bus.publish({"op": "x"}) == [] and seen == [{"op": "x"}]
    await bus.close()


ENABLED = {
    "storedrequest": {"enabled": True},
    "storedrequest_amp": {"enabled": True},
    "cache_invalidation": {"enabled": True},
}


def write(directory: Path, kind: str, item_id: str, document: dict[str, Any]) -> None:
    (directory / kind).mkdir(parents=True, exist_ok=True)
    (directory / kind / f"{item_id}.json").write_text(json.dumps(document))


@pytest.fixture
async def served(tmp_path, aiohttp_client) -> AsyncIterator[tuple[Any, web.Application, Path]]:
    write(tmp_path, "stored_requests", "r", {"id": "file"})
    write(tmp_path, "accounts", "acc", {"id": "acc", "disabled": False})
    config = make_config(
        admin={"port": 18999}, admin_endpoints=ENABLED, stored_requests={"filesystem": {"directorypath": str(tmp_path)}}
    )
    app = create_app(config)
    runner = web.AppRunner(app)
    await runner.setup()  # the main app's lifetimes (the bus among them), without listening
    try:
        yield await aiohttp_client(create_admin_app(app)), app, tmp_path
    finally:
        await runner.cleanup()


async def requests_now(app: web.Application, amp: bool = False) -> dict[str, bytes]:
    return (await app[STORED].fetch_requests(["r", "new"], [], 1.0, amp=amp))[0]


async def test_a_save_and_an_invalidation_reach_the_next_lookup(served):
    client, app, _ = served
    assert await requests_now(app) == {"r": b'{"id": "file"}'}
    body = {"requests": {"r": json.dumps({"id": "saved"}), "new": {"id": "new"}}, "imps": {"i": "{}"}}
    response = await client.post("/storedrequests/openrtb2", data=json.dumps(body))
    assert response.status == 200 and await response.read() == b""
    assert await requests_now(app) == {"r": b'{"id":"saved"}', "new": b'{"id":"new"}'}
    assert await requests_now(app, amp=True) == {"r": b'{"id": "file"}'}  # AMP's cache is apart
    response = await client.delete("/storedrequests/openrtb2", data=json.dumps({"requests": ["r", "new"]}))
    assert response.status == 200
    assert await requests_now(app) == {"r": b'{"id": "file"}'}


async def test_the_amp_endpoint_feeds_amp_cache(served):
    client, app, _ = served
    response = await client.post("/storedrequests/amp", data=json.dumps({"requests": {"r": '{"id":"amp"}'}}))
    assert response.status == 200
    assert await requests_now(app, amp=True) == {"r": b'{"id":"amp"}'}
    assert await requests_now(app) == {"r": b'{"id": "file"}'}
    response = await client.delete("/storedrequests/amp", data=json.dumps({"requests": ["r"]}))
    assert response.status == 200
    assert await requests_now(app, amp=True) == {"r": b'{"id": "file"}'}


async def test_an_account_invalidation_rereads_the_account(served):
    client, app, directory = served
    assert (await app[ACCOUNTS].get("acc")).settings.disabled is False
    write(directory, "accounts", "acc", {"id": "acc", "disabled": True})
    assert (await app[ACCOUNTS].get("acc")).settings.disabled is False  # cached
    response = await client.get("/cache/invalidate?account=acc")
    assert response.status == 200 and await response.read() == b""
    with pytest.raises(Exception, match="disabled"):
        await app[ACCOUNTS].get("acc")


BAD_CALLS = [  # (method, path, body, status, text); one app for all (building one takes seconds)
    ("POST", "/storedrequests/openrtb2", b"", 400, "Missing update data."),
    ("POST", "/storedrequests/openrtb2", b"[1]", 400, "Invalid update."),
    ("POST", "/storedrequests/openrtb2", b'{"requests": {"a": "not json"}}', 400, "Invalid update."),
    ("POST", "/storedrequests/amp", b'{"imps": []}', 400, "Invalid update."),
    ("DELETE", "/storedrequests/openrtb2", b"", 400, "Missing invalidation data."),
    ("DELETE", "/storedrequests/amp", b'{"requests": "a"}', 400, "Invalid invalidation."),
    ("DELETE", "/storedrequests/amp", b'{"imps": [1]}', 400, "Invalid invalidation."),
    ("GET", "/cache/invalidate", b"", 400, "Account id is not defined"),
    ("GET", "/cache/invalidate?account=%20", b"", 400, "Account id is not defined"),
    ("PUT", "/storedrequests/openrtb2", b"{}", 405, None),
    ("GET", "/storedrequests/amp", b"", 405, None),
]


async def test_bad_calls_are_answered_in_pbs_java_words(served):
    client, _app, _ = served
    for method, path, body, status, text in BAD_CALLS:
        response = await client.request(method, path, data=body)
        assert response.status == status, (method, path, body)
        if text is not None:
            assert await response.text() == text, (method, path, body)


async def test_a_body_over_max_request_size_is_refused(tmp_path, aiohttp_client):
    config = make_config(admin={"port": 18999}, admin_endpoints=ENABLED, max_request_size=1000)
    client = await aiohttp_client(create_admin_app(create_app(config)))
    big = json.dumps({"requests": {"a": {"x": "y" * 1000}}})
    assert (await client.post("/storedrequests/openrtb2", data=big)).status == 413


async def test_never_on_the_public_port(aiohttp_client):
    client = await aiohttp_client(create_app(make_config(admin={"port": 18999}, admin_endpoints=ENABLED)))
    for path in ("/storedrequests/openrtb2", "/storedrequests/amp", "/cache/invalidate?account=a"):
        assert (await client.post(path, data=b"{}")).status == 404
    with pytest.raises(ConfigError, match=r"admin_endpoints.storedrequest.enabled: needs admin.port"):
        make_config(admin_endpoints={"storedrequest": {"enabled": True}})
    with pytest.raises(ConfigError, match=r"admin_endpoints.cache_invalidation.enabled: needs stored_requests"):
        make_config(
            admin={"port": 18999},
            admin_endpoints={"cache_invalidation": {"enabled": True}},
            stored_requests={"in_memory_cache": {"type": "none"}},
        )


def test_paths_follow_the_config():
    config = make_config(admin={"port": 18999}, admin_endpoints={"storedrequest": {"enabled": True, "path": "/sr"}})
    routes = {(m, p) for m, p, _h in create_app(config)[ADMIN_ROUTES]}
    assert {("POST", "/sr"), ("DELETE", "/sr")} <= routes
    assert not any(p in ("/storedrequests/amp", "/cache/invalidate") for _m, p in routes)
