"""Instructions per request, for before/after comparisons of one change: ``python -m bench.instructions amp``.

Run on a shared machine, CPU time moves with whatever else runs; instruction counts do not. This
runs the real application in-process (aiohttp's test server and client) on one of the bench's
one-worker scenarios, with that scenario's config, setup (mock bidders, currency server, stored
requests) and request under
``valgrind --tool=callgrind`` twice, with ``--small`` and ``--large`` requests after a warm-up, and
prints the slope: instructions per request, start-up cancelled out. The in-process client is
counted too (it is the same in both trees), so a change's share of the server alone is larger
than its share here. ``--drive N`` is the inner mode valgrind runs.

A varied scenario (``{{token}}``s in its path or body, :mod:`bench.varied`) gets request *n*'s
rendering for its *n*-th request (warm-up included), as wrk sends them. ``hello`` is the bench's
hello-world (:mod:`bench.baseline`'s application) in-process: the reference the CPU targets are
ratios of. ``--client raw`` sends the requests as wrk writes them over one kept-alive connection
through a minimal protocol, so the count is nearly the server's alone (the aiohttp client costs more
than a small endpoint).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench.scenarios import BENCH_DIR, HELLO, SCENARIOS, Scenario, SetupContext, substitute
from bench.varied import Template

WARMUP_REQUESTS = 300
_COLLECTED = re.compile(r"Collected : (\d+)")
_CONTENT_LENGTH = re.compile(r"(?i)\r\ncontent-length: *(\d+)")


async def _drive(which: str, requests: int, client_kind: str = "aiohttp") -> None:
    scenario = _scenario(which)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        ctx = SetupContext(root, client_cpu=None)
        try:
            values = {"workdir": str(root), **(scenario.setup(ctx) if scenario.setup is not None else {})}
            app, runner = _application(scenario, root, values)
            server = _server_class()(app, runner, port=0)
            await server.start_server()
            if scenario.server == "hbserver":
                from hbserver.server import tune_gc

                tune_gc()  # as a worker does once listening
            path = Template.of(substitute(scenario.path, values))
            body = Template.of(scenario.body_text()) if scenario.body_file is not None else None
            headers = dict(item.split(": ", 1) for item in scenario.wrk_headers())
            send, close = await (_raw_sender if client_kind == "raw" else _aiohttp_sender)(server, headers)
            await _ready(send, scenario)
            for n in range(1, WARMUP_REQUESTS + requests + 1):
                data = body.render(n).encode() if body is not None else None
                status, text = await send(scenario.method, path.render(n), data)
                if status >= 400:
                    raise SystemExit(f"{which}: status {status}: {text[:300]!r}")
            await close()
            await server.close()
        finally:
            ctx.close()


def _application(scenario: Scenario, root: Path, values: dict[str, str]) -> tuple[Any, Callable[..., Any]]:
    """The application and how to make its runner, as the scenario's server runs them."""
    from aiohttp import web

    if scenario.server == "baseline":
        from bench.baseline import hello

        app = web.Application()
        app.router.add_get("/hello", hello)
        return app, lambda app, **kwargs: web.AppRunner(app, **{**kwargs, "access_log": None})
    from hbserver.app import create_app
    from hbserver.config import load_config
    from hbserver.web.connection import ConnectionLimits, ConnectionRunner

    config_path = scenario.write_config(root, values)
    config = load_config(str(config_path) if config_path is not None else None)
    limits = ConnectionLimits.from_config(config.http_timeouts)
    return create_app(config), lambda app, **kwargs: ConnectionRunner(
        app, limits, **{**kwargs, "access_log": None, "handle_signals": False}
    )


def _server_class() -> type:
    from aiohttp.test_utils import TestServer

    class Server(TestServer):
        """aiohttp's test server with the runner the real server uses (hbserver.server: Connection
        protocols, no access logger; the baseline: no access logger)."""

        def __init__(self, app: Any, make_runner: Callable[..., Any], **kwargs: Any) -> None:
            super().__init__(app, **kwargs)
            self._runner_of = make_runner

        async def _make_runner(self, **kwargs: Any) -> Any:
            return self._runner_of(self.app, **kwargs)

    return Server


Sender = Callable[[str, str, bytes | None], Awaitable[tuple[int, bytes]]]
Closer = Callable[[], Awaitable[None]]


async def _aiohttp_sender(server: Any, headers: dict[str, str]) -> tuple[Sender, Closer]:
    from aiohttp.test_utils import TestClient

    client = TestClient(server)
    await client.start_server()

    async def send(verb: str, path: str, body: bytes | None) -> tuple[int, bytes]:
        response = await client.request(verb, path, data=body, headers=headers)
        return response.status, await response.read()

    return send, client.close


class _RawClient(asyncio.Protocol):
    """One kept-alive connection; ``send`` writes a request and waits for its whole answer."""

    def __init__(self) -> None:
        self.buffer = b""
        self.done: asyncio.Future[tuple[int, bytes]] | None = None
        self.transport: Any = None

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        head_end = self.buffer.find(b"\r\n\r\n")
        if head_end < 0 or self.done is None:
            return
        head = self.buffer[:head_end].decode("latin-1")
        found = _CONTENT_LENGTH.search(head)
        length = int(found.group(1)) if found is not None else 0
        if len(self.buffer) < head_end + 4 + length:
            return
        body, self.buffer = self.buffer[head_end + 4 : head_end + 4 + length], self.buffer[head_end + 4 + length :]
        self.done.set_result((int(head[9:12]), body))


async def _raw_sender(server: Any, headers: dict[str, str]) -> tuple[Sender, Closer]:
    """wrk's requests (its Host header, the scenario's headers, Content-Length with a body)."""
    loop = asyncio.get_running_loop()
    _, client = await loop.create_connection(_RawClient, "127.0.0.1", server.port)
    fixed = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    host = f"Host: 127.0.0.1:{server.port}\r\n"

    async def send(verb: str, path: str, body: bytes | None) -> tuple[int, bytes]:
        length = f"Content-Length: {len(body)}\r\n" if body is not None else ""
        head = f"{verb} {path} HTTP/1.1\r\n{host}{fixed}{length}\r\n".encode()
        client.done = loop.create_future()
        client.transport.write(head + body if body is not None else head)
        return await client.done

    async def close() -> None:
        client.transport.close()

    return send, close


def _scenario(name: str) -> Scenario:
    for scenario in (HELLO, *SCENARIOS):
        if scenario.name == name and scenario.server in ("hbserver", "baseline") and scenario.workers == 1:
            return scenario
    raise SystemExit(f"no one-worker hbserver scenario named {name!r} (nor hello)")


async def _ready(send: Sender, scenario: Scenario) -> None:
    """Poll the scenario's ready path (as ``make bench`` does) until it answers 2xx."""
    for _ in range(100):
        status, _ = await send("GET", scenario.ready_path, None)
        if status < 300:
            return
        await asyncio.sleep(0.1)
    raise SystemExit(f"{scenario.name}: {scenario.ready_path} never answered 2xx")


def _count(which: str, requests: int, client_kind: str) -> int:
    with tempfile.TemporaryDirectory() as scratch:
        argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={scratch}/out", sys.executable, "-m",
                "bench.instructions", which, "--drive", str(requests), "--client", client_kind]
        done = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"},
                              cwd=BENCH_DIR.parent, check=False)
    found = _COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"valgrind failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.instructions", description=__doc__.split("\n\n")[0])
    parser.add_argument("which", nargs="+", help="one-worker hbserver scenarios of bench/scenarios.py (amp, "
                        "amp_full, auction, auction_full, event, setuid_varied, cookie_sync_varied, ...) or hello")
    parser.add_argument("--small", type=int, default=200)
    parser.add_argument("--large", type=int, default=1200)
    parser.add_argument("--client", choices=("aiohttp", "raw"), default="aiohttp",
                        help="aiohttp's test client (the default), or raw: wrk's requests, nearly the server alone")
    parser.add_argument("--jobs", type=int, default=2, help="valgrind runs at once")
    parser.add_argument("--drive", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.drive is not None:
        import uvloop

        for which in args.which:
            uvloop.run(_drive(which, args.drive, args.client))
        return 0
    if args.large <= args.small:
        parser.error("--large must be above --small")
    runs = [(which, n) for which in args.which for n in (args.small, args.large)]
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        counts = list(pool.map(lambda run: _count(run[0], run[1], args.client), runs))
    whose = "client and server" if args.client == "aiohttp" else "raw client and server"
    for index, which in enumerate(args.which):
        small, large = counts[2 * index], counts[2 * index + 1]
        per_request = (large - small) / (args.large - args.small)
        sys.stdout.write(f"{which}: {per_request / 1e6:.3f} M instructions per request "
                         f"({whose}; {small} at {args.small}, {large} at {args.large})\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
