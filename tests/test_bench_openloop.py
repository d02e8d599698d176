"""bench.openloop (the open-loop generator) and bench.latency (levels, curves table, chart).

The generator runs in the test's event loop against servers on 127.0.0.1: aiohttp ones, and raw
asyncio ones that answer with canned bytes split across TCP segments.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from bench import openloop
from bench.latency import (
    default_names,
    format_curves,
    levels,
    openloop_argv,
    resolve_names,
    saturation,
    write_latency_chart,
)
from bench.openloop import Histogram, OpenLoop, Target, judge, run_openloop
from bench.procs import free_port
from bench.report import RunOutcome
from bench.run import Settings
from bench.scenarios import BENCH_DIR, SCENARIOS, Scenario
from bench.varied import Template
from bench.wrk import WrkResult

ServerFactory = Callable[[web.Application], Awaitable[Any]]


async def _ok(request: web.Request) -> web.Response:
    return web.Response(text="ok")


def _app(**routes: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.Application:
    app = web.Application()
    for name, handler in routes.items():
        app.router.add_route("*", f"/{name}", handler)
    return app


async def _target(aiohttp_server: ServerFactory, app: web.Application, path: str, **kwargs: Any) -> Target:
    server = await aiohttp_server(app)
    return Target.build(f"http://127.0.0.1:{server.port}{path}", **kwargs)


# --- rate and coordinated omission --------------------------------------------------------


async def test_achieved_rate_matches_a_modest_offered_rate(aiohttp_server: ServerFactory) -> None:
    target = await _target(aiohttp_server, _app(hello=_ok), "/hello")
    result = await run_openloop(target, rate=500, duration_s=1.0)
    assert result.scheduled == 500
    assert result.status_2xx == 500 and result.error_count == 0
    assert result.achieved_rate == pytest.approx(500, rel=0.03)
    # lag is ~1 ms (timer granularity) on an idle machine; the bound leaves room for a busy one
    assert result.lag_ms["p99"] is not None and result.lag_ms["p99"] < 4 * openloop.LAG_P99_LIMIT_MS
    assert not [flag for flag in result.flags if "lag" not in flag]
    assert result.connections_opened < 50  # keep-alive connections are reused


def _one_at_a_time(service_s: float) -> web.Application:
    """A server with a fixed service time that serves one request at a time."""
    lock = asyncio.Lock()

    async def slow(request: web.Request) -> web.Response:
        async with lock:
            await asyncio.sleep(service_s)
        return web.Response(text="ok")

    return _app(slow=slow)


@pytest.mark.parametrize(
    ("rate", "p99_above_ms", "p99_below_ms", "short_of_rate"),
    [
        (100.0, 300.0, None, True),  # twice the capacity: the queue grows as long as the run
        (25.0, None, 60.0, False),  # half the capacity: no queueing, about the service time
    ],
)
async def test_queueing_is_not_hidden(
    aiohttp_server: ServerFactory, rate: float, p99_above_ms: float | None, p99_below_ms: float | None,
    short_of_rate: bool,
) -> None:
    target = await _target(aiohttp_server, _one_at_a_time(0.020), "/slow")
    result = await run_openloop(target, rate=rate, duration_s=0.6)
    assert result.status_2xx == result.scheduled and result.error_count == 0
    p99 = result.latency_ms["p99"]
    assert p99 is not None
    if p99_above_ms is not None:
        # A closed-loop client would report ~20 ms per request here: it waits and sends less.
        assert p99 > p99_above_ms
        assert result.latency_ms["p50"] is not None and result.latency_ms["p50"] > 100
        assert result.achieved_rate < 0.97 * rate
    if p99_below_ms is not None:
        assert 19.0 <= p99 < p99_below_ms
    assert any("achieved" in flag for flag in result.flags) is short_of_rate


# --- errors -------------------------------------------------------------------------------


async def test_non_2xx_answers_are_counted(aiohttp_server: ServerFactory) -> None:
    counter = iter(range(10**6))

    async def every_other(request: web.Request) -> web.Response:
        return web.Response(status=503 if next(counter) % 2 else 200)

    target = await _target(aiohttp_server, _app(flaky=every_other), "/flaky")
    result = await run_openloop(target, rate=100, duration_s=0.2)
    assert (result.status_2xx, result.non_2xx, result.errors.total) == (10, 10, 0)
    assert result.error_count == 10
    assert any("failed" in flag for flag in result.flags)


async def test_refused_connections_are_counted() -> None:
    target = Target.build(f"http://127.0.0.1:{free_port()}/nothing")
    result = await run_openloop(target, rate=50, duration_s=0.2, timeout_s=2)
    assert result.errors.connect == 10 and result.answered == 0
    assert result.latency_ms["p99"] is None


async def _raw_server(pieces: Sequence[bytes], close: bool = False) -> AsyncIterator[int]:
    """A server writing ``pieces`` (1 ms apart, so they arrive as separate segments) per request."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                await reader.readuntil(b"\r\n\r\n")
                for piece in pieces:
                    writer.write(piece)
                    await writer.drain()
                    await asyncio.sleep(0.001)
                if close:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        await server.wait_closed()


async def _run_raw(
    pieces: Sequence[bytes], close: bool = False, requests: int = 5, timeout_s: float = 2.0
) -> openloop.OpenLoopResult:
    servers = _raw_server(pieces, close)
    port = await anext(servers)
    try:
        target = Target.build(f"http://127.0.0.1:{port}/x")
        return await run_openloop(target, rate=50, duration_s=requests / 50, timeout_s=timeout_s)
    finally:
        await servers.aclose()


@pytest.mark.parametrize(
    ("pieces", "close", "read", "parse"),
    [
        ([b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort"], True, 5, 0),  # body cut short
        ([], True, 5, 0),  # closed without a byte
        ([b"FOO/1.1 200 OK\r\n\r\n"], False, 0, 5),  # not HTTP
        ([b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"], False, 0, 5),  # bad chunk size
    ],
)
async def test_broken_answers_are_socket_errors(
    pieces: list[bytes], close: bool, read: int, parse: int
) -> None:
    result = await _run_raw(pieces, close)
    assert (result.errors.read, result.errors.parse, result.answered) == (read, parse, 0)
    assert result.error_count == 5


async def test_unanswered_requests_time_out_and_count_in_latency() -> None:
    result = await _run_raw([b"HTTP/1.1 200 OK\r\n"], requests=3, timeout_s=0.5)  # the head never ends
    assert result.errors.timeout == 3 and result.answered == 0
    assert result.latency_ms["max"] is not None and result.latency_ms["max"] >= 500


# --- framing ------------------------------------------------------------------------------

CHUNKED = [
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n",
    b"5\r\nhel",
    b"lo\r\n6;ext=1\r\n world\r\n",
    b"0\r\n",
    b"X-Trailer: 1\r\n\r\n",
]


@pytest.mark.parametrize(
    ("pieces", "close", "status"),
    [
        ([b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"], False, 200),
        ([b"HTTP/1.1 200 OK\r\ncontent-length:5\r\n", b"\r\nhe", b"llo"], False, 200),  # split head and body
        (CHUNKED, False, 200),
        ([b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"], False, 404),
        ([b"HTTP/1.1 204 No Content\r\n\r\n"], False, 204),
        ([b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"], False, 200),
        ([b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok"], True, 200),
        ([b"HTTP/1.1 200 OK\r\n\r\nuntil the ", b"connection closes"], True, 200),  # no framing: until close
    ],
)
async def test_answers_parse(pieces: list[bytes], close: bool, status: int) -> None:
    result = await _run_raw(pieces, close)
    assert result.errors.total == 0
    assert result.answered == 5
    assert (result.status_2xx, result.non_2xx) == ((5, 0) if status < 300 else (0, 5))


async def test_post_body_and_headers_reach_the_server(aiohttp_server: ServerFactory) -> None:
    body = json.dumps({"id": "r1", "imp": [{"id": "1"}]}).encode()

    async def check(request: web.Request) -> web.Response:
        good = (
            request.method == "POST"
            and await request.read() == body
            and request.content_type == "text/plain"
            and request.headers.get("X-Bench") == "1"
            and request.query.get("a") == "b"
        )
        return web.Response(status=200 if good else 400)

    target = await _target(
        aiohttp_server, _app(post=check), "/post?a=b", method="POST", body=body,
        headers=["Content-Type: text/plain", "X-Bench: 1"],
    )
    result = await run_openloop(target, rate=100, duration_s=0.1)
    assert (result.status_2xx, result.error_count) == (10, 0)


async def test_varied_requests_are_rendered_per_request(aiohttp_server: ServerFactory) -> None:
    """--vary: request n gets path and body rendered for n (bench.varied), each with its own Content-Length."""
    seen: list[tuple[str, bytes]] = []

    async def record(request: web.Request) -> web.Response:
        seen.append((request.path_qs, await request.read()))
        return web.Response(text="ok")

    template = b'{"id":"r-{{n}}","device":{"ip":"{{ip}}"}}'
    target = await _target(aiohttp_server, _app(post=record), "/post?n={{n}}", method="POST", body=template,
                           headers=["Content-Type: text/plain"], vary=True)
    result = await run_openloop(target, rate=100, duration_s=0.1)
    assert (result.status_2xx, result.error_count) == (10, 0)
    expected = [(f"/post?n={n}", Template.of(template.decode()).render(n).encode()) for n in range(1, 11)]
    assert sorted(seen) == sorted(expected)


@pytest.mark.parametrize(
    ("pieces", "marker", "with_marker"),
    [
        ([b"HTTP/1.1 200 OK\r\nContent-Length: 16\r\n\r\n{\"targeting\":{}}"], b"hb_pb", 0),
        ([b"HTTP/1.1 200 OK\r\nContent-Length: 24\r\n\r\n{\"targeting\":{\"hb_pb\":1}}"], b"hb_pb", 5),
        ([b"HTTP/1.1 200 OK\r\nContent-Length: 24\r\n\r\n{\"targeting\":{\"hb_p", b"b\":1}}"], b"hb_pb", 5),  # split
        (CHUNKED, b"world", 5),
        (CHUNKED, b"nowhere", 0),
        ([b"HTTP/1.1 200 OK\r\n\r\nuntil close, hb_pb"], b"hb_pb", 5),
        ([b"HTTP/1.1 404 Not Found\r\nContent-Length: 5\r\n\r\nhb_pb"], b"hb_pb", 0),  # 2xx only
        ([b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhb_pb"], None, None),  # no marker asked
    ],
)
async def test_answers_with_the_bid_marker_are_counted(
    pieces: list[bytes], marker: bytes | None, with_marker: int | None
) -> None:
    close = b"until close" in pieces[0]
    servers = _raw_server(pieces, close)
    port = await anext(servers)
    try:
        target = Target.build(f"http://127.0.0.1:{port}/x")
        result = await run_openloop(target, rate=50, duration_s=0.1, timeout_s=2.0, marker=marker)
    finally:
        await servers.aclose()
    assert result.answered == 5 and result.errors.total == 0
    assert result.with_marker == with_marker
    assert result.to_dict()["with_marker"] == with_marker


async def test_the_command_line_prints_json(aiohttp_server: ServerFactory) -> None:
    server = await aiohttp_server(_app(hello=_ok))
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(BENCH_DIR / "openloop.py"), f"http://127.0.0.1:{server.port}/hello",
        "--rate", "40", "--duration", "0.5", "--header", "X-A: 1",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode == 0, stderr.decode()
    result = json.loads(stdout)
    assert (result["scheduled"], result["status_2xx"], result["error_count"]) == (20, 20, 0)
    assert set(result["latency_ms"]) >= {"p50", "p90", "p99", "max"}


async def test_the_command_line_varies_and_counts_markers(aiohttp_server: ServerFactory) -> None:
    async def echo(request: web.Request) -> web.Response:
        return web.Response(text=f"bid {request.query['n']}" if int(request.query["n"]) % 2 else "none")

    server = await aiohttp_server(_app(echo=echo))
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(BENCH_DIR / "openloop.py"), f"http://127.0.0.1:{server.port}/echo?n={{{{n}}}}",
        "--rate", "40", "--duration", "0.5", "--vary", "--bid-marker", "bid",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode == 0, stderr.decode()
    result = json.loads(stdout)
    assert (result["status_2xx"], result["with_marker"], result["error_count"]) == (20, 10, 0)


# --- pieces -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values_ms", "expected"),
    [
        ([0.05] * 99 + [3.0], {"p50": 0.05, "p99": 0.05, "max": 3.0}),
        ([float(v) for v in range(1, 101)], {"p50": 50.0, "p90": 90.0, "p99": 99.0, "max": 100.0}),
        ([1000.0 * v for v in range(1, 11)], {"p50": 5000.0, "p90": 9000.0, "max": 10000.0}),
    ],
)
def test_histogram_percentiles_within_one_percent(values_ms: list[float], expected: dict[str, float]) -> None:
    histogram = Histogram()
    for value in values_ms:
        histogram.record(value / 1000)
    summary = histogram.summary()
    for key, value in expected.items():
        assert summary[key] == pytest.approx(value, rel=0.01), key


def test_empty_histogram_has_no_percentiles() -> None:
    assert Histogram().summary() == {"p50": None, "p90": None, "p99": None, "max": None, "mean": None}


@pytest.mark.parametrize(
    ("offered", "achieved", "lag", "errors", "flags"),
    [
        (1000, 999, 1.0, 0, []),
        (1000, 999, 6.0, 0, ["generator lag"]),
        (1000, 900, 1.0, 0, ["achieved"]),
        (1000, 1000, None, 3, ["failed"]),
    ],
)
def test_judge_flags(offered: float, achieved: float, lag: float | None, errors: int, flags: list[str]) -> None:
    found = judge(offered, achieved, lag, errors)
    assert len(found) == len(flags)
    assert all(word in flag for word, flag in zip(flags, found, strict=True))


@pytest.mark.parametrize(
    ("url", "kwargs", "expected"),
    [
        ("http://127.0.0.1:8000/a?b=1", {}, b"GET /a?b=1 HTTP/1.1\r\nHost: 127.0.0.1:8000\r\n\r\n"),
        ("http://localhost/", {"method": "POST", "body": b"xy", "headers": ["Content-Type: a/b"]},
         b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: a/b\r\nContent-Length: 2\r\n\r\nxy"),
    ],
)
def test_target_encodes_the_request(url: str, kwargs: dict[str, Any], expected: bytes) -> None:
    assert Target.build(url, **kwargs).request == expected


@pytest.mark.parametrize("url", ["https://127.0.0.1/", "127.0.0.1:80/"])
def test_target_refuses_other_urls(url: str) -> None:
    with pytest.raises(ValueError):
        Target.build(url)


def test_generator_refuses_a_zero_rate() -> None:
    with pytest.raises(ValueError):
        OpenLoop(Target.build("http://127.0.0.1:1/"), rate=0, duration_s=1)


# --- the latency stage --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("saturation_rps", "expected"),
    [(1000.0, [250.0, 500.0, 750.0, 900.0]), (1234.5, [308.6, 617.2, 925.9, 1111.0]), (2.0, [1.0, 1.0, 1.5, 1.8])],
)
def test_levels_are_shares_of_the_saturation(saturation_rps: float, expected: list[float]) -> None:
    assert levels(saturation_rps) == expected


def test_saturation_is_the_median_of_successful_rounds() -> None:
    def outcome(rps: float, errors: int = 0) -> RunOutcome:
        result = WrkResult(rps, int(rps), 1000.0, 1.0, 2.0, {"50": 1.0, "99": 2.0}, non_2xx_3xx=errors)
        return RunOutcome(1, result)

    assert saturation([outcome(100), outcome(300), outcome(200), outcome(900, errors=1)]) == 200
    assert saturation([RunOutcome(1, None, "failed")]) is None


@pytest.mark.parametrize(
    ("names", "raw", "expected"),
    [
        (["amp", "auction", "amp_full", "auction_full"], None, ["amp_full", "auction_full"]),
        (["amp", "auction", "event"], None, ["amp", "auction"]),
        (["amp", "event"], None, ["amp"]),
        (["amp", "auction"], "", []),
        (["amp", "auction"], " auction , amp", ["auction", "amp"]),
    ],
)
def test_latency_scenario_names(names: list[str], raw: str | None, expected: list[str]) -> None:
    scenarios = [Scenario(name=name, path="/") for name in names]
    assert resolve_names(raw, scenarios) == expected
    if raw is None:
        assert default_names(scenarios) == expected


def test_unknown_latency_scenario_is_refused() -> None:
    with pytest.raises(ValueError, match="BENCH_LATENCY"):
        resolve_names("nope", [Scenario(name="amp", path="/")])


def test_generator_command_replays_the_scenario_request() -> None:
    scenario = Scenario(name="post", path="/p", method="POST", body_file="payloads/auction.json",
                        content_type="text/plain", headers={"X-A": "1"})
    argv = openloop_argv(scenario, "http://127.0.0.1:1/p", 250.0, 10, cpu=1)
    assert argv[:3] == ["taskset", "-c", "1"]
    assert argv[argv.index("--rate") + 1] == "250" and argv[argv.index("--method") + 1] == "POST"
    assert Path(argv[argv.index("--body-file") + 1]) == BENCH_DIR / "payloads" / "auction.json"
    headers = [argv[i + 1] for i, arg in enumerate(argv) if arg == "--header"]
    assert headers == ["X-A: 1", "Content-Type: text/plain"]
    with pytest.raises(ValueError, match="Lua"):
        openloop_argv(Scenario(name="lua", path="/", lua_script="x.lua"), "http://127.0.0.1:1/", 1, 1, None)
    assert "--vary" not in argv and "--bid-marker" not in argv


@pytest.mark.parametrize("name", ["amp_varied", "auction_varied", "event_varied"])
def test_generator_command_renders_varied_scenarios(name: str) -> None:
    scenario = next(s for s in SCENARIOS if s.name == name)
    assert scenario.varied and scenario.lua_script is None
    argv = openloop_argv(scenario, "http://127.0.0.1:1/x", 10.0, 1, None, bid_marker="hb_pb")
    assert "--vary" in argv
    assert argv[argv.index("--bid-marker") + 1] == "hb_pb"


def test_a_varied_target_refuses_a_fixed_content_length() -> None:
    with pytest.raises(ValueError, match="Content-Length"):
        Target.build("http://127.0.0.1:1/x", "POST", b"{}", ["Content-Length: 2"], vary=True)


def test_a_varied_target_renders_request_n() -> None:
    target = Target.build("http://h:1/p?n={{n}}", "POST", b'{"id":"{{n}}"}', ["X-A: 1"], vary=True)
    assert target.render is not None
    assert target.render(12) == (b"POST /p?n=12 HTTP/1.1\r\nHost: h:1\r\nX-A: 1\r\nContent-Length: 11\r\n\r\n"
                                 b'{"id":"12"}')
    assert target.request == target.render(1)
    get = Target.build("http://h:1/p?n={{n}}", vary=True)
    assert get.render is not None and get.render(3) == b"GET /p?n=3 HTTP/1.1\r\nHost: h:1\r\n\r\n"


def _curves() -> dict[str, dict[str, Any]]:
    def point(share: float, p50: float, p99: float, flags: list[str]) -> dict[str, Any]:
        return {"share": share, "offered": 1000 * share, "achieved": 1000 * share, "p50_ms": p50, "p90_ms": p99,
                "p99_ms": p99, "max_ms": p99 * 2, "errors": 0, "lag_p99_ms": 1.0,
                "server_cpu_us_per_request": 700.0, "connections": 10, "flags": flags}

    return {
        "amp": {"saturation_rps": 1000.0, "duration_s": 10, "levels": [
            point(0.25, 2.0, 5.0, []), point(0.5, 2.5, 7.0, []), point(0.75, 3.0, 15.0, []),
            point(0.9, 6.0, 120.0, ["generator lag p99 6.0 ms > 5 ms"]),
        ]},
        "auction": {"skipped": "did not run in the rounds (add it to BENCH_SCENARIOS)"},
    }


def test_latency_chart_is_a_png(tmp_path: Path) -> None:
    path = tmp_path / "results" / "latency.png"
    write_latency_chart(_curves(), path, "test")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    empty = tmp_path / "empty.png"
    write_latency_chart({"amp": {"skipped": "x"}}, empty)
    assert empty.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_curves_table() -> None:
    lines = format_curves(_curves()).splitlines()
    rows = [line for line in lines if line.startswith(("amp ", "auction "))]
    assert len(rows) == 5
    assert rows[0].split()[:7] == ["amp", "25%", "250.0", "250.0", "2.00", "5.00", "5.00"]
    assert "generator lag" in rows[3]
    assert "did not run in the rounds" in rows[4]


@pytest.mark.parametrize(
    ("environ", "latency", "duration"),
    [
        ({}, None, 10),
        ({"BENCH_LATENCY": "", "BENCH_LATENCY_DURATION": "3"}, "", 3),
        ({"BENCH_LATENCY": "amp"}, "amp", 10),
    ],
)
def test_latency_knobs(environ: dict[str, str], latency: str | None, duration: int) -> None:
    settings = Settings.from_env(environ)
    assert (settings.latency, settings.latency_duration_s) == (latency, duration)


def test_latency_duration_must_be_positive() -> None:
    with pytest.raises(ValueError, match="BENCH_LATENCY_DURATION"):
        Settings.from_env({"BENCH_LATENCY_DURATION": "0"})
