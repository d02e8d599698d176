"""Cross-cutting HTTP (DECISIONS "Everywhere"): CORS, X-Prebid, body limits, gzip, JSON, errors."""

from __future__ import annotations

import gzip
import logging
import zlib

import orjson
import pytest
from aiohttp import web

from hbserver import SERVER_HEADER_VALUE
from hbserver.web.body import read_json
from hbserver.web.endpoint import Routes


async def echo_json(request: web.Request) -> web.Response:
    return web.json_response(await read_json(request), dumps=lambda v: orjson.dumps(v).decode())


async def explode(request: web.Request) -> web.Response:
    raise RuntimeError("secret internal detail")


def add_test_routes(routes: Routes) -> None:
    routes.add("POST", "/test/echo", echo_json)
    routes.add("GET", "/test/explode", explode)


@pytest.fixture
async def client(make_client):
    return await make_client(max_request_size=1000, extra_routes=add_test_routes)


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/status", 204),
        ("GET", "/event?t=win&b=1&a=a", 200),
        ("GET", "/event?t=x", 400),
        ("GET", "/nowhere", 404),
        ("POST", "/status", 405),
        ("GET", "/test/explode", 500),
        ("GET", "/metrics", 200),
    ],
)
async def test_every_response_carries_x_prebid_and_cors(client, method, path, status):
    origin = "https://publisher.example"
    response = await client.request(method, path, headers={"Origin": origin})
    assert response.status == status
    assert response.headers["X-Prebid"] == SERVER_HEADER_VALUE
    assert response.headers["Access-Control-Allow-Origin"] == origin
    assert response.headers["Access-Control-Allow-Credentials"] == "true"
    assert "Origin" in response.headers["Vary"]


async def test_no_cors_headers_without_origin(client):
    response = await client.get("/status")
    assert "Access-Control-Allow-Origin" not in response.headers
    assert response.headers["X-Prebid"] == SERVER_HEADER_VALUE


# (Origin, Access-Control-Allow-Origin, Access-Control-Allow-Credentials): "*" never with credentials.
# PBS-Go echoes every origin, "null" included (router/router.go SupportCORS: rs/cors, AllowOriginFunc
# true, AllowCredentials); hbserver does not echo "null" (sandboxed frames, file: and data: pages
# share it), it answers "*" without credentials (hbserver/web/cors.py says why).
CORS_ROWS = [
    pytest.param("https://pub.example", "https://pub.example", "true", id="echoed-with-credentials"),
    pytest.param("null", "*", None, id="null-is-not-echoed"),
    pytest.param("NULL", "NULL", "true", id="only-the-serialized-null"),
]


@pytest.mark.parametrize(("origin", "allowed", "credentials"), CORS_ROWS)
@pytest.mark.parametrize("preflight", [False, True], ids=["request", "preflight"])
async def test_cors_origins(client, origin, allowed, credentials, preflight):
    if preflight:
        headers = {"Origin": origin, "Access-Control-Request-Method": "POST"}
        response = await client.options("/event", headers=headers)
    else:
        response = await client.get("/status", headers={"Origin": origin})
    assert response.headers.getall("Access-Control-Allow-Origin") == [allowed]
    assert response.headers.get("Access-Control-Allow-Credentials") == credentials
    assert response.headers["Vary"] == "Origin"


@pytest.mark.parametrize("path", ["/event", "/test/echo", "/status"])
async def test_preflight(client, path):
    response = await client.options(
        path,
        headers={
            "Origin": "https://pub.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type,x-custom",
        },
    )
    assert response.status == 204
    assert response.headers["Access-Control-Allow-Origin"] == "https://pub.example"
    assert response.headers["Access-Control-Allow-Credentials"] == "true"
    assert "POST" in response.headers["Access-Control-Allow-Methods"]
    assert response.headers["Access-Control-Allow-Headers"] == "content-type,x-custom"
    assert int(response.headers["Access-Control-Max-Age"]) > 0


async def test_preflight_for_unknown_path_is_404(client):
    response = await client.options(
        "/nowhere", headers={"Origin": "https://pub.example", "Access-Control-Request-Method": "GET"}
    )
    assert response.status == 404


async def test_404_and_405_are_plain_text(client):
    missing = await client.get("/nowhere")
    assert (missing.status, missing.headers["Content-Type"]) == (404, "text/plain; charset=utf-8")
    wrong = await client.post("/event")
    assert wrong.status == 405
    assert wrong.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert "GET" in wrong.headers["Allow"]


async def test_500_hides_the_traceback_logs_it_with_a_request_id_and_counts_it(client, caplog):
    caplog.set_level(logging.ERROR, logger="hbserver.http")
    response = await client.get("/test/explode", headers={"X-Request-Id": "req-42"})
    body = await response.text()
    assert response.status == 500
    assert body == "Internal server error (request id req-42)"
    assert "secret" not in body and "Traceback" not in body
    assert response.headers["X-Request-Id"] == "req-42"
    [record] = [r for r in caplog.records if r.name == "hbserver.http"]
    assert record.request_id == "req-42" and record.exc_info is not None
    generated = await client.get("/test/explode", headers={"X-Request-Id": "bad id with spaces"})
    rid = generated.headers["X-Request-Id"]
    assert len(rid) == 32 and rid in await generated.text()
    metrics = await (await client.get("/metrics")).text()
    assert 'hbserver_internal_errors{endpoint="/test/explode"} 2.0' in metrics
    assert 'hbserver_http_requests{endpoint="/test/explode",status="500"} 2.0' in metrics


DOC = {"id": "req-1", "imp": [{"id": "1"}], "tmax": 500}
DOC_BYTES = orjson.dumps(DOC)


@pytest.mark.parametrize("content_type", ["text/plain", "application/json", "application/x-www-form-urlencoded", None])
async def test_json_is_parsed_whatever_the_content_type(client, content_type):
    headers = {"Content-Type": content_type} if content_type else {}
    response = await client.post("/test/echo", data=DOC_BYTES, headers=headers)
    assert response.status == 200
    assert orjson.loads(await response.read()) == DOC


@pytest.mark.parametrize(
    ("path", "headers", "body"),
    [
        ("/test/echo", {"Content-Encoding": "gzip"}, gzip.compress(DOC_BYTES)),
        ("/test/echo?gzip=1", {}, gzip.compress(DOC_BYTES)),  # Prebid.js endpointCompression
        ("/test/echo?gzip=1", {"Content-Encoding": "gzip"}, gzip.compress(DOC_BYTES)),  # both signals
    ],
)
async def test_gzip_bodies(client, path, headers, body):
    response = await client.post(path, data=body, headers={"Content-Type": "text/plain", **headers})
    assert response.status == 200
    assert orjson.loads(await response.read()) == DOC


def gzip_bomb(size: int) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    bomb = compressor.compress(b"\0" * size) + compressor.flush()
    assert len(bomb) < 1000  # under the raw limit: only the decompressed size is too large
    return bomb


@pytest.mark.parametrize(
    ("path", "headers", "body", "status", "message"),
    [
        ("/test/echo", {}, b"", 400, "Invalid request: request body is empty"),
        ("/test/echo", {}, b"  \n", 400, "Invalid request: request body is empty"),
        ("/test/echo", {}, b"{nope", 400, "Invalid request: request body is not valid JSON: "),
        ("/test/echo", {}, b"x" * 1001, 413, "Request body too large: the limit is 1000 bytes"),
        ("/test/echo", {}, b"x" * 1000, 400, "Invalid request: request body is not valid JSON: "),
        ("/test/echo?gzip=1", {}, b"not gzip", 400, "Invalid request: request body is not valid gzip: "),
        ("/test/echo?gzip=1", {}, gzip.compress(DOC_BYTES)[:-12], 400,
         "Invalid request: request body is not valid gzip: truncated data"),
        ("/test/echo?gzip=1", {}, gzip_bomb(800_000), 413,
         "Request body too large: the limit is 1000 bytes after decompression"),
        ("/test/echo", {"Content-Encoding": "gzip"}, gzip_bomb(800_000), 413,
         "Request body too large: the limit is 1000 bytes"),
    ],
)
async def test_body_errors(client, path, headers, body, status, message):
    response = await client.post(path, data=body, headers=headers)
    assert response.status == status
    assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert (await response.text()).startswith(message)


async def test_chunked_body_over_the_limit_is_413(client):
    async def chunks():
        for _ in range(20):
            yield b"x" * 100

    response = await client.post("/test/echo", data=chunks())
    assert response.status == 413
    assert await response.text() == "Request body too large: the limit is 1000 bytes"


async def test_status_response_text(make_client):
    client = await make_client(status_response="ready")
    response = await client.get("/status")
    assert (response.status, await response.text()) == (200, "ready")
    head = await client.head("/status")
    assert head.status == 200


async def test_metrics_can_move_or_be_switched_off(make_client):
    moved = await make_client(metrics={"prometheus": {"path": "/internal/prom", "namespace": "pbs"}})
    assert (await moved.get("/metrics")).status == 404
    text = await (await moved.get("/internal/prom")).text()
    assert 'pbs_http_requests{endpoint="other",status="404"} 1.0' in text
    off = await make_client(metrics={"prometheus": {"enabled": False}})
    assert (await off.get("/metrics")).status == 404


async def test_overlong_request_line_is_refused(client):
    response = await client.get("/event?t=win&b=" + "x" * 20000 + "&a=acc")
    assert 400 <= response.status < 500


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("", {}),
        ("uids=abc", {"uids": "abc"}),
        ("uids=YWJj==", {"uids": "YWJj=="}),  # base64 padding: split on the first '=' only
        ("  a=1 ;\tb=2 ;c=", {"a": "1", "b": "2", "c": ""}),
        ('q="quoted"; r="', {"q": "quoted", "r": '"'}),
        ("uids=first; uids=second", {"uids": "first"}),  # Go's Request.Cookie: the first wins
        ("novalue; =orphan; x=1", {"x": "1"}),
        (";;; ;", {}),
    ],
)
def test_cookie_header_parsing(header, expected):
    from hbserver.web.cookies import parse_cookie_header

    assert parse_cookie_header(header) == expected


async def test_sync_endpoints_read_the_uids_cookie_among_many(make_client):
    """A browser's header carries the publisher's cookies too; /getuids finds ours among them."""
    import base64

    client = await make_client({})
    uids = base64.urlsafe_b64encode(b'{"tempUIDs":{"adnxs":{"uid":"u-1","expires":"2999-01-01T00:00:00Z"}}}').decode()
    header = f'_ga=GA1.2.3.4; consent="a=b"; uids={uids}; theme=dark'
    response = await client.get("/getuids", headers={"Cookie": header})
    assert response.status == 200
    assert (await response.json()) == {"buyeruids": {"adnxs": "u-1"}}


async def test_a_body_received_whole_is_taken_from_the_buffer_without_resuming_reading(aiohttp_server, monkeypatch):
    """read_body takes a one-chunk body as read_nowait() would, minus its resume_reading() (a
    re-feed of the parser and a transport call per POST); a chunked body pipelined behind it on the
    same connection still goes through aiohttp's own read."""
    import asyncio

    from aiohttp.web_protocol import RequestHandler

    from hbserver.appkeys import MAX_REQUEST_SIZE
    from hbserver.web.body import read_body

    resumed: list[bool] = []
    original = RequestHandler.resume_reading

    def resume_reading(self: RequestHandler, resume_parser: bool = True) -> None:
        resumed.append(resume_parser)
        original(self, resume_parser)

    monkeypatch.setattr(RequestHandler, "resume_reading", resume_reading)
    seen: list[tuple[bytes, int, bytes]] = []

    async def echo(request: web.Request) -> web.Response:
        await asyncio.sleep(0.05)  # the whole request is in by now
        before = len(resumed)
        body = await read_body(request)
        seen.append((body, len(resumed) - before, await request.content.read()))
        return web.Response(body=body)

    app = web.Application()
    app[MAX_REQUEST_SIZE] = 1000
    app.router.add_post("/e", echo)
    server = await aiohttp_server(app)
    reader, writer = await asyncio.open_connection(server.host, server.port)
    writer.write(b"POST /e HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
                 b"POST /e HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nde\r\n1\r\nf\r\n0\r\n\r\n")
    try:
        for expected in (b"abc", b"def"):
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
            assert head.startswith(b"HTTP/1.1 200 OK\r\n") and b"Content-Length: 3\r\n" in head
            assert await reader.readexactly(3) == expected
    finally:
        writer.close()
    assert seen[0] == (b"abc", 0, b"")  # taken whole, nothing resumed, nothing left
    assert seen[1][0] == b"def" and seen[1][2] == b""
