"""Logs (issue 17 "Logs"): the level from configuration in every worker, the request id on every
response and on every log line of its request, in-flight requests, the sampled access log and the
rate limit on repeated warnings and errors."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import re
import socket
import time
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from aiohttp import web

from hbserver import cli
from hbserver.appkeys import METRICS
from hbserver.logsetup import (
    REQUEST_ID,
    JsonFormatter,
    LogLimiter,
    RepeatFilter,
    RequestIdFilter,
    TextFormatter,
    setup_logging,
)
from hbserver.web import endpoint as endpoint_module
from hbserver.web.endpoint import Routes
from hbserver.web.requestlog import new_request_id, request_id_from
from tests.auction.helpers import banner_imp, bid, bidder_config
from tests.e2e.helpers import Server, get

HEX32 = re.compile(r"[0-9a-f]{32}")
TEST_LOGGERS = ("hbserver.access", "hbserver.httpinteraction", "aiohttp.access")


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """Undo setup_logging: the root's handlers and level, and the loggers it sets."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    levels = {name: logging.getLogger(name).level for name in TEST_LOGGERS}
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    for name, saved in levels.items():
        logging.getLogger(name).setLevel(saved)


class LogCapture:
    """setup_logging writing into a buffer; ``records()`` parses the JSON lines."""

    def __init__(self) -> None:
        self.stream = io.StringIO()

    def setup(self, json_logs: bool = True, level: int = logging.INFO) -> None:
        setup_logging(json_logs=json_logs, level=level, stream=self.stream)

    def lines(self) -> list[str]:
        return self.stream.getvalue().splitlines()

    def records(self, logger: str | None = None) -> list[dict[str, Any]]:
        records = [json.loads(line) for line in self.lines()]
        return [r for r in records if logger is None or r["logger"] == logger]


@pytest.fixture
def logs(restore_logging) -> LogCapture:
    capture = LogCapture()
    capture.setup()
    return capture


# ---------------------------------------------------------------- level


@pytest.mark.parametrize(
    ("level", "expected"),
    [("debug", logging.DEBUG), ("info", logging.INFO), ("warning", logging.WARNING), ("error", logging.ERROR)],
)
def test_the_cli_applies_logging_level_from_the_environment(restore_logging, monkeypatch, capsys, level, expected):
    import hbserver.server

    served = []
    monkeypatch.setattr(hbserver.server, "serve", lambda config: served.append(config) or 0)
    monkeypatch.setenv("HBS_LOGGING__LEVEL", level)
    assert cli.main(["--port", "8123", "--workers", "1"]) == 0
    assert served[0].logging.level == level
    assert logging.getLogger().level == expected
    logging.getLogger("hbserver.test").debug("a debug line")
    logging.getLogger("hbserver.test").warning("a warning line")
    err = capsys.readouterr().err
    assert ("a debug line" in err) is (expected <= logging.DEBUG)
    assert "a warning line" in err if expected <= logging.WARNING else "a warning line" not in err
    # lines asked for by configuration (access log, interaction log) are not silenced by the level
    assert logging.getLogger("hbserver.access").isEnabledFor(logging.INFO)
    assert logging.getLogger("hbserver.httpinteraction").isEnabledFor(logging.INFO)


def test_the_cli_applies_logging_level_from_the_config_file(restore_logging, monkeypatch, tmp_path, capsys):
    import hbserver.server

    monkeypatch.setattr(hbserver.server, "serve", lambda config: 0)
    monkeypatch.delenv("HBS_LOGGING__LEVEL", raising=False)
    path = tmp_path / "config.yaml"
    path.write_text("logging:\n  level: error\n")
    assert cli.main(["--config", str(path), "--port", "8123", "--workers", "1"]) == 0
    assert logging.getLogger().level == logging.ERROR


def test_a_bad_level_is_refused_at_start(monkeypatch, capsys):
    monkeypatch.setenv("HBS_LOGGING__LEVEL", "verbose")
    assert cli.main(["--port", "8123", "--workers", "1"]) == 2
    assert "logging.level" in capsys.readouterr().err


def _garbage_request(port: int) -> None:
    """A request line aiohttp cannot parse: the worker logs "client error" at debug level."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"NOT A REQUEST\r\n\r\n")
        try:
            sock.recv(4096)
        except OSError:
            pass


def _json_lines(text: str) -> list[dict[str, Any]]:
    out = []
    for line in text.splitlines():
        if line.startswith("{"):
            out.append(json.loads(line))
    return out


def _ready_pids(output: str) -> set[int]:
    """The workers that logged their "worker <pid> ready" line."""
    return {r["pid"] for r in _json_lines(output) if r["msg"].startswith("worker ") and r["msg"].endswith(" ready")}


@pytest.mark.parametrize(("level", "debug_expected"), [("debug", True), ("warning", False)])
def test_every_worker_of_a_real_server_logs_at_the_configured_level(tmp_path, level, debug_expected):
    env = {"HBS_LOGGING__LEVEL": level, "HBS_LOGGING__ACCESS__SAMPLE_RATE": "1"}
    server = Server("--workers", "2", env=env, cwd=tmp_path)
    try:
        server.wait_ready()  # one worker answers; the other may still be starting
        deadline = time.monotonic() + 15
        while debug_expected and len(_ready_pids(server.output())) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)  # both workers' "ready" lines (info: logged at debug level only)
        debug_pids: set[int] = set()
        attempts = 0
        while time.monotonic() < deadline and attempts < (300 if debug_expected else 40):
            attempts += 1
            _garbage_request(server.port)
            if debug_expected:
                debug_pids = {r["pid"] for r in _json_lines(server.output()) if r["level"] == "debug"}
                if len(debug_pids) == 2:
                    break
        assert get(f"{server.base}/getuids?secret=q")[0] == 200
        time.sleep(0.3)
        records = _json_lines(server.output())
        if debug_expected:
            assert len(debug_pids) == 2, server.output()  # both workers log debug lines
            assert len(_ready_pids(server.output())) == 2
        else:
            assert not [r for r in records if r["level"] in ("debug", "info") and r["logger"] != "hbserver.access"]
        # the access log is JSON, in every mode of the level, without the query string
        [access] = [r for r in records if r["logger"] == "hbserver.access" and r["endpoint"] == "/getuids"]
        assert HEX32.fullmatch(access["request_id"]) and access["method"] == "GET"
        assert "secret" not in json.dumps(access)
    finally:
        server.stop()


# ---------------------------------------------------------------- request ids


def test_new_request_ids_are_unique_32_hex_and_cheap():
    ids = [new_request_id() for _ in range(10_000)]
    assert len(set(ids)) == len(ids) and all(HEX32.fullmatch(i) for i in ids)
    started = time.perf_counter()
    for _ in range(100_000):
        new_request_id()
    per_id = (time.perf_counter() - started) / 100_000
    assert per_id < 5e-6, per_id  # a uuid4() costs about 2 µs; this is a few hundred ns


def test_a_forked_worker_draws_its_own_prefix():
    parent = new_request_id()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report one id and leave at once
        os.write(write, new_request_id().encode())
        os._exit(0)
    os.close(write)
    child = os.read(read, 64).decode()
    os.close(read)
    os.waitpid(pid, 0)
    assert HEX32.fullmatch(child) and child[:16] != parent[:16]


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("req-42", True),
        ("A.b_c-9", True),
        ("x" * 64, True),
        ("x" * 65, False),  # too long
        ("", False),
        ("has space", False),
        ("semi;colon", False),
        ("slash/id", False),
        ("quote\"id", False),
        (None, False),
    ],
)
def test_request_id_from_keeps_only_sane_ids(given, kept):
    rid = request_id_from(given)
    if kept:
        assert rid == given
    else:
        assert HEX32.fullmatch(rid)


async def explode(request: web.Request) -> web.Response:
    raise RuntimeError("boom")


async def fan_out(request: web.Request) -> web.Response:
    """Logs from the handler and from tasks it starts (as the bidder fan-out does), on several loggers."""
    logging.getLogger("hbserver.test").info("in the handler")  # info: warnings are rate-limited

    async def bidder(name: str) -> None:
        await asyncio.sleep(0)
        logging.getLogger(f"thirdparty.{name}").info("in a task for %s", name)

    await asyncio.gather(*(asyncio.create_task(bidder(n)) for n in ("alpha", "beta")))
    return web.Response(text="ok")


async def in_flight(request: web.Request) -> web.Response:
    return web.Response(text=str(request.app[METRICS].in_flight))


def add_test_routes(routes: Routes) -> None:
    routes.add("GET", "/test/explode", explode)
    routes.add("GET", "/test/fan-out", fan_out)
    routes.add("GET", "/test/in-flight", in_flight)


PREFLIGHT = {"Origin": "https://pub.example", "Access-Control-Request-Method": "POST"}


@pytest.mark.parametrize(
    ("method", "path", "headers", "status"),
    [
        ("GET", "/info/bidders", {}, 200),
        ("GET", "/status", {}, 204),
        ("GET", "/nowhere", {}, 404),
        ("POST", "/status", {}, 405),
        ("GET", "/test/explode", {}, 500),
        ("OPTIONS", "/cookie_sync", PREFLIGHT, 204),
        ("GET", "/event?t=x", {}, 400),
    ],
)
@pytest.mark.parametrize(
    ("given", "echoed"),
    [(None, False), ("abc-123", True), ("x" * 65, False), ("bad id", False), ("ünïcode", False)],
)
async def test_every_response_carries_x_request_id(make_client, method, path, headers, status, given, echoed):
    client = await make_client(extra_routes=add_test_routes)
    sent = dict(headers)
    if given is not None:
        sent["X-Request-Id"] = given
    response = await client.request(method, path, headers=sent)
    assert response.status == status
    rid = response.headers["X-Request-Id"]
    if echoed:
        assert rid == given
    else:
        assert HEX32.fullmatch(rid)
    if status == 500:
        assert await response.text() == f"Internal server error (request id {rid})"


async def test_fresh_ids_differ_per_request(make_client):
    client = await make_client()
    ids = {(await client.get("/status")).headers["X-Request-Id"] for _ in range(20)}
    assert len(ids) == 20


@pytest.mark.parametrize("json_logs", [True, False])
async def test_every_log_line_of_a_request_carries_its_id(make_client, restore_logging, json_logs):
    capture = LogCapture()
    capture.setup(json_logs=json_logs)
    client = await make_client(extra_routes=add_test_routes)
    logging.getLogger("hbserver.test").warning("outside any request")
    first = await client.get("/test/fan-out", headers={"X-Request-Id": "first-1"})
    second = await client.get("/test/fan-out")
    rid = second.headers["X-Request-Id"]
    assert first.status == second.status == 200
    lines = capture.lines()
    if json_logs:
        records = [json.loads(line) for line in lines]
        ids = {r["msg"]: [] for r in records}
        for r in records:
            ids[r["msg"]].append(r.get("request_id"))
        assert ids["outside any request"] == [None]
        for msg in ("in the handler", "in a task for alpha", "in a task for beta"):
            assert ids[msg] == ["first-1", rid], msg
    else:
        assert [line for line in lines if "outside any request" in line and "request_id" not in line]
        for msg in ("in the handler", "in a task for alpha", "in a task for beta"):
            matching = [line for line in lines if msg in line]
            assert len(matching) == 2, msg
            assert matching[0].endswith("request_id=first-1") and matching[1].endswith(f"request_id={rid}")
    assert REQUEST_ID.get() is None  # nothing leaks out of the request


async def test_the_500_log_line_and_body_name_the_same_id(make_client, logs):
    client = await make_client(extra_routes=add_test_routes)
    response = await client.get("/test/explode")
    rid = response.headers["X-Request-Id"]
    [record] = [r for r in logs.records("hbserver.http")]
    assert record["request_id"] == rid and "RuntimeError: boom" in record["exc"]
    assert rid in await response.text()


def test_request_id_filter_keeps_an_explicit_id():
    token = REQUEST_ID.set("ctx-id")
    try:
        explicit = logging.LogRecord("x", logging.INFO, "", 0, "m", (), None)
        explicit.request_id = "given"
        plain = logging.LogRecord("x", logging.INFO, "", 0, "m", (), None)
        RequestIdFilter().filter(explicit)
        RequestIdFilter().filter(plain)
    finally:
        REQUEST_ID.reset(token)
    assert (explicit.request_id, plain.request_id) == ("given", "ctx-id")


def test_formatters_show_extra_fields():
    record = logging.LogRecord("hbserver.x", logging.WARNING, "", 0, "hello %s", ("world",), None)
    record.request_id = "r-1"
    record.bidders = ["a", "b"]
    assert TextFormatter().format(record).endswith('hbserver.x: hello world request_id=r-1 bidders=["a","b"]')
    entry = json.loads(JsonFormatter().format(record))
    assert (entry["msg"], entry["request_id"], entry["bidders"], entry["level"]) == (
        "hello world", "r-1", ["a", "b"], "warning"
    )


# ---------------------------------------------------------------- in flight


async def test_in_flight_counts_requests_being_answered(make_client):
    client = await make_client(extra_routes=add_test_routes)
    metrics = client.app[METRICS]
    assert metrics.in_flight == 0
    assert await (await client.get("/test/in-flight")).text() == "1"
    assert (await client.get("/test/explode")).status == 500
    assert (await client.get("/nowhere")).status == 404
    assert metrics.in_flight == 0  # decremented after answers and after exceptions alike


async def test_in_flight_with_concurrent_requests(make_client):
    gate = asyncio.Event()
    seen: list[int] = []

    async def hold(request: web.Request) -> web.Response:
        seen.append(request.app[METRICS].in_flight)
        await gate.wait()
        return web.Response(text="held")

    client = await make_client(extra_routes=lambda routes: routes.add("GET", "/test/hold", hold))
    tasks = [asyncio.create_task(client.get("/test/hold")) for _ in range(3)]
    for _ in range(200):
        if len(seen) == 3:
            break
        await asyncio.sleep(0.01)
    assert client.app[METRICS].in_flight == 3 and sorted(seen) == [1, 2, 3]
    gate.set()
    assert [r.status for r in await asyncio.gather(*tasks)] == [200, 200, 200]
    assert client.app[METRICS].in_flight == 0


# ---------------------------------------------------------------- access log


ACCESS_FIELDS = {"request_id", "method", "endpoint", "status", "duration_ms"}


async def test_sample_rate_0_writes_nothing_and_draws_nothing(make_client, logs, monkeypatch):
    def no_draw() -> float:
        raise AssertionError("random() called at sample_rate 0")

    monkeypatch.setattr(endpoint_module, "_random", no_draw)
    client = await make_client()
    for path in ("/status", "/nowhere", "/event?t=win&b=1&a=acc"):
        await client.get(path)
    assert logs.records("hbserver.access") == []


@pytest.mark.parametrize(
    ("method", "path", "endpoint", "status", "account"),
    [
        ("GET", "/status?private=q1", "/status", 204, None),
        ("GET", "/nowhere?private=q1", "other", 404, None),
        ("POST", "/status?private=q1", "other", 405, None),
        ("GET", "/event?t=win&b=private&a=acc-7", "/event", 200, "acc-7"),
        ("POST", "/cookie_sync?private=q1", "/cookie_sync", 200, "acc-8"),
    ],
)
async def test_sample_rate_1_logs_every_request_with_its_fields(
    make_client, logs, method, path, endpoint, status, account
):
    client = await make_client(logging={"access": {"sample_rate": 1}})
    body = orjson.dumps({"account": "acc-8"}) if endpoint == "/cookie_sync" else None
    response = await client.request(
        method, path, data=body, headers={"Cookie": "uids=private-cookie", "X-Forwarded-For": "198.51.100.9"}
    )
    assert response.status == status
    [line] = [line for line in logs.lines() if '"hbserver.access"' in line]
    record = json.loads(line)
    expected = ACCESS_FIELDS | ({"account"} if account else set())
    assert expected <= set(record) and "bidders" not in record
    assert (record["method"], record["endpoint"], record["status"]) == (method, endpoint, status)
    assert record["request_id"] == response.headers["X-Request-Id"]
    assert 0 <= record["duration_ms"] < 5000
    assert record.get("account") == account
    for private in ("private", "198.51.100.9", "uids"):
        assert private not in line  # no query string, cookie or IP


async def test_an_auction_logs_its_account_and_bidders(make_client, bidders, logs):
    bidders.bids["alpha"] = [bid("imp-1", 1.5)]
    bidders.bids["beta"] = []
    client = await make_client(bidder_config(bidders, "alpha", "beta"), logging={"access": {"sample_rate": 1.0}})
    request = {
        "id": "r", "tmax": 500, "imp": [banner_imp(alpha={"p": 1}, beta={"p": 2})],
        "site": {"page": "https://news.example/a", "publisher": {"id": "pub-9"}},
    }
    response = await client.post("/openrtb2/auction", data=orjson.dumps(request))
    assert response.status == 200
    [record] = [r for r in logs.records("hbserver.access") if r["endpoint"] == "/openrtb2/auction"]
    assert record["account"] == "pub-9" and sorted(record["bidders"]) == ["alpha", "beta"]
    assert (record["method"], record["status"]) == ("POST", 200)


@pytest.mark.parametrize(("rate", "draws", "logged"), [(0.25, [0.1, 0.3, 0.24, 0.9], 2), (0.5, [0.6, 0.7], 0)])
async def test_a_fraction_is_sampled(make_client, logs, monkeypatch, rate, draws, logged):
    values = iter(draws)
    monkeypatch.setattr(endpoint_module, "_random", lambda: next(values))
    client = await make_client(logging={"access": {"sample_rate": rate}})
    for _ in draws:
        await client.get("/status")
    assert len(logs.records("hbserver.access")) == logged


async def test_access_lines_follow_the_text_format_and_ignore_the_level(make_client, restore_logging):
    capture = LogCapture()
    capture.setup(json_logs=False, level=logging.ERROR)
    client = await make_client(logging={"access": {"sample_rate": 1}})
    response = await client.get("/status")
    [line] = capture.lines()
    assert " INFO " in line and "hbserver.access: GET /status 204 " in line
    assert f"request_id={response.headers['X-Request-Id']}" in line and "status=204" in line


# ---------------------------------------------------------------- repeated lines


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _record(msg: str, args: tuple = (), level: int = logging.ERROR, name: str = "hbserver.x",
            exc: type[BaseException] | None = None) -> logging.LogRecord:
    exc_info = (exc, exc(), None) if exc else None
    return logging.LogRecord(name, level, "", 0, msg, args, exc_info)


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        # (seconds later, record) -> (passed?, suppressed count on it)
        (
            [(0, _record("backend %s failed", ("a",))), (1, _record("backend %s failed", ("b",))),
             (2, _record("backend %s failed", ("a",))), (10, _record("backend %s failed", ("c",)))],
            [(True, None), (False, None), (False, None), (True, 2)],
        ),
        (  # below WARNING: never limited
            [(0, _record("step", level=logging.INFO)), (0, _record("step", level=logging.INFO))],
            [(True, None), (True, None)],
        ),
        (  # another logger, level or exception type is another key
            [(0, _record("m")), (0, _record("m", name="hbserver.y")), (0, _record("m", level=logging.WARNING)),
             (0, _record("m", exc=ValueError)), (0, _record("m", exc=KeyError)), (0, _record("m", exc=KeyError))],
            [(True, None), (True, None), (True, None), (True, None), (True, None), (False, None)],
        ),
        (  # after a quiet interval: passes, nothing to report
            [(0, _record("m")), (11, _record("m")), (22, _record("m"))],
            [(True, None), (True, None), (True, None)],
        ),
    ],
)
def test_repeat_filter(steps, expected):
    clock = Clock()
    limiter = RepeatFilter(interval=10, clock=clock)
    results = []
    start = clock.now
    for later, record in steps:
        clock.now = start + later
        results.append((limiter.filter(record), getattr(record, "suppressed", None)))
    assert results == expected


def test_repeat_filter_memory_is_bounded():
    clock = Clock()
    limiter = RepeatFilter(interval=10, max_keys=100, clock=clock)
    for i in range(1000):
        assert limiter.filter(_record(f"distinct {i}"))
        assert len(limiter._seen) <= 100
    clock.now += 11  # all expired: room is made by dropping them, not the newest
    assert limiter.filter(_record("new one")) and len(limiter._seen) == 1


def test_repeated_errors_reach_the_log_once_with_the_count(logs):
    log = logging.getLogger("hbserver.flood")
    for i in range(50):
        log.error("store failed: %s", f"error {i}")
    log.warning("another template")
    records = logs.records("hbserver.flood")
    assert [r["msg"] for r in records] == ["store failed: error 0", "another template"]
    handler_filter = next(f for f in logging.getLogger().handlers[0].filters if isinstance(f, RepeatFilter))
    for entry in handler_filter._seen.values():
        entry[0] -= 60  # the interval is over
    log.error("store failed: %s", "again")
    last = logs.records("hbserver.flood")[-1]
    assert last["msg"] == "store failed: again" and last["suppressed"] == 49


def test_log_limiter_keys_are_not_merged_by_the_root_filter(logs):
    limiter = LogLimiter(logging.getLogger("hbserver.stores.x"))
    for _ in range(5):
        limiter.warning("backend-a", "stored data: %s: %s", "a", "timeout")
        limiter.warning("backend-b", "stored data: %s: %s", "b", "timeout")
    msgs = [r["msg"] for r in logs.records("hbserver.stores.x")]
    assert msgs == ["stored data: a: timeout", "stored data: b: timeout"]


def test_log_limiter_memory_is_bounded():
    limiter = LogLimiter(logging.getLogger("hbserver.stores.y"), max_keys=10)
    for i in range(100):
        limiter.warning(f"key-{i}", "x %s", i)
        assert len(limiter._last) <= 10
