"""Instructions per request, for before/after comparisons of one change: ``python -m bench.instructions amp``.

Run on a shared machine, CPU time moves with whatever else runs; instruction counts do not. This
runs the real application in-process (aiohttp's test server and client) on one of the bench's
one-worker scenarios, with that scenario's config, setup (mock bidders, currency server, stored
requests) and request under
``valgrind --tool=callgrind`` twice, with ``--small`` and ``--large`` requests after a warm-up, and
prints the slope: instructions per request, start-up cancelled out. The in-process client is
counted too (it is the same in both trees), so a change's share of the server alone is larger
than its share here. ``--drive N`` is the inner mode valgrind runs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.scenarios import BENCH_DIR, SCENARIOS, Scenario, SetupContext, substitute

WARMUP_REQUESTS = 300
_COLLECTED = re.compile(r"Collected : (\d+)")


async def _drive(which: str, requests: int) -> None:
    from aiohttp.test_utils import TestClient, TestServer

    from hbserver.app import create_app
    from hbserver.config import load_config

    scenario = _scenario(which)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        ctx = SetupContext(root, client_cpu=None)
        try:
            values = {"workdir": str(root), **(scenario.setup(ctx) if scenario.setup is not None else {})}
            config_path = scenario.write_config(root, values)
            config = load_config(str(config_path) if config_path is not None else None)
            client = TestClient(TestServer(create_app(config), port=0))
            await client.start_server()
            path = substitute(scenario.path, values)
            body = (BENCH_DIR / scenario.body_file).read_bytes() if scenario.body_file is not None else None
            headers = dict(item.split(": ", 1) for item in scenario.wrk_headers())

            async def one() -> None:
                response = await client.request(scenario.method, path, data=body, headers=headers)
                text = await response.read()
                if response.status >= 400:
                    raise SystemExit(f"{which}: status {response.status}: {text[:300]!r}")

            await _ready(client, scenario)
            for _ in range(WARMUP_REQUESTS + requests):
                await one()
            await client.close()
        finally:
            ctx.close()


def _scenario(name: str) -> Scenario:
    for scenario in SCENARIOS:
        if scenario.name == name and scenario.server == "hbserver" and scenario.workers == 1:
            return scenario
    raise SystemExit(f"no one-worker hbserver scenario named {name!r}")


async def _ready(client: Any, scenario: Scenario) -> None:
    """Poll the scenario's ready path (as ``make bench`` does) until it answers 2xx."""
    for _ in range(100):
        response = await client.get(scenario.ready_path)
        await response.read()
        if response.status < 300:
            return
        await asyncio.sleep(0.1)
    raise SystemExit(f"{scenario.name}: {scenario.ready_path} never answered 2xx")


def _count(which: str, requests: int) -> int:
    with tempfile.TemporaryDirectory() as scratch:
        argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={scratch}/out", sys.executable, "-m",
                "bench.instructions", which, "--drive", str(requests)]
        done = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"},
                              cwd=BENCH_DIR.parent, check=False)
    found = _COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"valgrind failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.instructions", description=__doc__.split("\n\n")[0])
    parser.add_argument("which", help="a one-worker hbserver scenario of bench/scenarios.py (amp, amp_full, "
                        "auction, auction_full, event, setuid, cookie_sync, ...)")
    parser.add_argument("--small", type=int, default=200)
    parser.add_argument("--large", type=int, default=1200)
    parser.add_argument("--drive", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.drive is not None:
        import uvloop

        uvloop.run(_drive(args.which, args.drive))
        return 0
    if args.large <= args.small:
        parser.error("--large must be above --small")
    small, large = _count(args.which, args.small), _count(args.which, args.large)
    per_request = (large - small) / (args.large - args.small)
    sys.stdout.write(f"{args.which}: {per_request / 1e6:.3f} M instructions per request "
                     f"(client and server; {small} at {args.small}, {large} at {args.large})\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
