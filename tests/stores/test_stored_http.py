"""The HTTP backend against a real aiohttp server on a local socket: PBS-Go's query format, answer
shapes, error texts, the answer size bound and the caller's deadline."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson
import pytest
from aiohttp import web

from hbserver.metrics import Metrics
from hbserver.stores.stored import StoredData, build_stored_data
from hbserver.stores.stored.http import MAX_ANSWER_BYTES, HttpBackend
from hbserver.web.client import SharedSession
from tests.conftest import make_config
from tests.stores.conftest import sample


@dataclass
class Upstream:
    """What the test server answers, and the raw query strings it was asked."""

    documents: dict[str, dict[str, Any]] = field(default_factory=dict)
    status: int = 200
    body: bytes | None = None  # sent as is instead of the documents
    chunked: bool = False
    delay: float = 0.0
    queries: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)


def parse_query(raw: str) -> list[tuple[str, str]]:
    return [tuple(pair.split("=", 1)) for pair in raw.split("&") if pair]  # type: ignore[misc]


@pytest.fixture
async def upstream(aiohttp_server) -> AsyncIterator[tuple[Upstream, str]]:
    state = Upstream()

    async def handle(request: web.Request) -> web.StreamResponse:
        state.paths.append(request.path)
        state.queries.append(request.rel_url.raw_query_string)
        if state.delay:
            await asyncio.sleep(state.delay)
        if state.body is not None:
            body = state.body
        else:
            answer: dict[str, dict[str, Any]] = {}
            members = {"request-id": "requests", "imp-id": "imps", "response-id": "responses", "account-id": "accounts"}
            for name, value in request.rel_url.query.items():
                member = members.get(name)
                if member is not None:
                    answer.setdefault(member, {})
                    if value in state.documents.get(member, {}):
                        answer[member][value] = state.documents[member][value]
            body = orjson.dumps(answer)
        if not state.chunked:
            return web.Response(status=state.status, body=body, content_type="application/json")
        response = web.StreamResponse(status=state.status)
        response.enable_chunked_encoding()
        await response.prepare(request)
        for start in range(0, len(body), 65536):
            await response.write(body[start:start + 65536])
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_get("/stored", handle)
    app.router.add_get("/amp", handle)
    server = await aiohttp_server(app)
    yield state, str(server.make_url(""))


@pytest.fixture
async def session() -> AsyncIterator[SharedSession]:
    shared = SharedSession()
    yield shared
    await shared.close()


def build(base: str, session: SharedSession, metrics: Metrics | None = None, **http: str) -> StoredData:
    endpoints = {"endpoint": base + "/stored", "amp_endpoint": ""} | http
    config = make_config({"stored_requests": {"filesystem": {"enabled": False}, "http": endpoints}})
    return build_stored_data(config, metrics or Metrics(), session)


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ("abc-123_X.~", "abc-123_X.~"),  # RFC 3986 unreserved characters stay as they are
        ("a b", "a%20b"),
        ("a&b=c", "a%26b%3Dc"),
        ("a/b?c#d", "a%2Fb%3Fc%23d"),
        ("100%", "100%25"),
        ("ä€", "%C3%A4%E2%82%AC"),
        ('"[x]"', "%22%5Bx%5D%22"),
    ],
)
def test_ids_are_percent_encoded(value, encoded):
    backend = HttpBackend("http://h/stored", SharedSession())
    assert str(backend.url([("request-id", value)])) == f"http://h/stored?request-id={encoded}"
    with_query = HttpBackend("http://h/s?x=1", SharedSession())
    assert str(with_query.url([("imp-id", value)])) == f"http://h/s?x=1&imp-id={encoded}"


async def test_requests_and_imps_are_fetched_in_one_get(upstream, session):
    state, base = upstream
    state.documents = {"requests": {"a": {"id": "a"}, "a b": {"id": "a b"}}, "imps": {"c/d": {"id": "c"}}}
    stored = build(base, session)
    requests, imps, errors = await stored.fetch_requests(["a", "a b", "zz"], ["c/d"], 2)
    assert {k: orjson.loads(v) for k, v in requests.items()} == {"a": {"id": "a"}, "a b": {"id": "a b"}}
    assert orjson.loads(imps["c/d"]) == {"id": "c"}
    assert errors == ['Stored Request with ID="zz" not found.']
    assert state.queries == ["request-id=a&request-id=a%20b&request-id=zz&imp-id=c%2Fd"]


async def test_null_or_absent_values_are_not_found(upstream, session):
    state, base = upstream
    state.body = b'{"requests": {"a": null, "b": {"x": 1}, "other": {}}}'
    stored = build(base, session)
    requests, _imps, errors = await stored.fetch_requests(["a", "b", "c"], ["i"], 2)
    assert requests == {"b": b'{"x":1}'}
    assert errors == [
        'Stored Request with ID="a" not found.', 'Stored Request with ID="c" not found.',
        'Stored Imp with ID="i" not found.',
    ]


async def test_responses_and_accounts_have_their_own_parameters(upstream, session):
    state, base = upstream
    state.documents = {"responses": {"r": [{"seat": "s"}]}, "accounts": {"acc": {"disabled": True}}}
    stored = build(base, session)
    responses = await stored.fetch_responses(["r", "q"], 2)
    assert responses == ({"r": b'[{"seat":"s"}]'}, ['Stored Response with ID="q" not found.'])
    assert await stored.fetch_account("acc") == b'{"disabled":true}'
    assert await stored.fetch_account("nobody") is None
    assert state.queries == ["response-id=r&response-id=q", "account-id=acc", "account-id=nobody"]


async def test_amp_uses_the_amp_endpoint(upstream, session):
    state, base = upstream
    state.documents = {"requests": {"tag": {"id": "amp"}}}
    stored = build(base, session, amp_endpoint=base + "/amp")
    assert await stored.fetch_amp_request("tag", 2) == (b'{"id":"amp"}', [])
    await stored.fetch_requests(["tag"], [], 2)  # not answered from the AMP cache
    assert state.paths == ["/amp", "/stored"]


async def test_amp_without_amp_endpoint_has_no_http_backend(upstream, session):
    state, base = upstream
    stored = build(base, session)
    assert await stored.fetch_amp_request("tag", 2) == (None, ['Stored Request with ID="tag" not found.'])
    assert state.paths == []


@pytest.mark.parametrize(
    ("status", "body", "chunked", "message", "reason"),
    [
        (500, b"oops", False, "Error fetching Stored Requests via HTTP. Response code was 500", "status"),
        (404, b"{}", False, "Error fetching Stored Requests via HTTP. Response code was 404", "status"),
        (200, b"not json", False, "Error fetching Stored Requests via HTTP: the answer is not a JSON object of objects",
         "malformed"),
        (200, b"[1]", False, "Error fetching Stored Requests via HTTP: the answer is not a JSON object of objects",
         "malformed"),
        (200, b'{"requests": [1]}', False,
         "Error fetching Stored Requests via HTTP: the answer is not a JSON object of objects", "malformed"),
        (200, b" " * MAX_ANSWER_BYTES + b"{}", False,
         f"Error fetching Stored Requests via HTTP: answer larger than {MAX_ANSWER_BYTES} bytes", "too_large"),
        (200, b" " * MAX_ANSWER_BYTES + b"{}", True,  # no Content-Length: counted while reading
         f"Error fetching Stored Requests via HTTP: answer larger than {MAX_ANSWER_BYTES} bytes", "too_large"),
    ],
)
async def test_bad_answers_are_clear_errors(upstream, session, status, body, chunked, message, reason):
    state, base = upstream
    state.status, state.body, state.chunked = status, body, chunked
    metrics = Metrics()
    stored = build(base, session, metrics)
    requests, imps, errors = await stored.fetch_requests(["a"], ["b"], 5)
    assert (requests, imps) == ({}, {})
    assert errors == [f'Stored Request with ID="a" could not be fetched: {message}',
                      f'Stored Imp with ID="b" could not be fetched: {message}']
    assert sample(metrics, "stored_data_fetch_errors_total", backend="http", reason=reason) == 1
    state.status, state.body = 200, None  # failures are not cached
    assert (await stored.fetch_requests(["a"], [], 5))[2] == ['Stored Request with ID="a" not found.']


@pytest.mark.parametrize("chunked", [False, True])
async def test_an_answer_at_the_size_limit_is_read(upstream, session, chunked):
    state, base = upstream
    document = b'{"requests": {"a": {"x": 1}}}'
    state.body = document + b" " * (MAX_ANSWER_BYTES - len(document))
    state.chunked = chunked
    stored = build(base, session)
    assert await stored.fetch_requests(["a"], [], 5) == ({"a": b'{"x":1}'}, {}, [])


async def test_a_failed_group_fails_only_its_own_ids(upstream, session):
    state, base = upstream
    stored = build(base, session)
    state.status = 503
    assert await stored.fetch_responses(["r"], 2) == (
        {}, ['Stored Response with ID="r" could not be fetched: '
             "Error fetching Stored Responses via HTTP. Response code was 503"],
    )
    with pytest.raises(OSError, match=r"Error fetching Accounts via HTTP\. Response code was 503"):
        await stored.fetch_account("acc")


async def test_the_deadline_is_enforced(upstream, session):
    state, base = upstream
    state.delay = 1.0
    state.documents = {"requests": {"a": {}}}
    stored = build(base, session)
    started = time.monotonic()
    requests, _imps, errors = await stored.fetch_requests(["a"], [], 0.05)
    assert time.monotonic() - started < 0.5
    assert (requests, errors) == ({}, ['Stored Request with ID="a" could not be fetched: timed out after 50 ms'])
    await stored.close()


async def test_an_unreachable_server_is_a_clear_error(session, unused_tcp_port, caplog):
    stored = build(f"http://127.0.0.1:{unused_tcp_port}", session)
    with caplog.at_level("WARNING", logger="hbserver.stored"):
        _requests, _imps, errors = await stored.fetch_requests(["a"], [], 2)
    assert errors == ['Stored Request with ID="a" could not be fetched: '
                      "Error fetching Stored Requests via HTTP: ClientConnectorError"]
    assert f"127.0.0.1:{unused_tcp_port}" in caplog.text  # the address goes to the log, never to clients


async def test_redirects_are_not_followed(session, aiohttp_server):
    elsewhere: list[str] = []

    async def other(request: web.Request) -> web.Response:
        elsewhere.append(request.path)
        return web.json_response({"requests": {"a": {"id": "from-elsewhere"}}})

    target = web.Application()
    target.router.add_get("/{tail:.*}", other)
    target_server = await aiohttp_server(target)

    async def redirect(request: web.Request) -> web.Response:
        raise web.HTTPFound(f"http://127.0.0.1:{target_server.port}/stored?{request.rel_url.raw_query_string}")

    origin = web.Application()
    origin.router.add_get("/stored", redirect)
    origin_server = await aiohttp_server(origin)
    stored = build(f"http://127.0.0.1:{origin_server.port}", session)
    requests, _imps, errors = await stored.fetch_requests(["a"], [], 2)
    assert requests == {} and elsewhere == []
    assert errors == ['Stored Request with ID="a" could not be fetched: '
                      "Error fetching Stored Requests via HTTP. Response code was 302"]


async def test_a_stored_value_nested_deeper_than_json_allows_is_malformed(upstream, session):
    state, endpoint = upstream
    state.body = b'{"requests": {"a": {"x": ' + b"[" * 300 + b"1" + b"]" * 300 + b"}}}"
    answer = await HttpBackend(endpoint + "/stored", session).fetch({"requests": ["a"]})
    assert answer["requests"]["a"].reason == (
        "Error fetching Stored Requests via HTTP: the answer is not a JSON object of objects")
