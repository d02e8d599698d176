"""Instructions per request, for before/after comparisons of one change: ``python -m bench.instructions amp``.

Run on a shared machine, CPU time moves with whatever else runs; instruction counts do not. This
runs the real application in-process (aiohttp's test server and client, the bench's AMP stored
request or auction payload, the bench's mock bidder process on loopback) under
``valgrind --tool=callgrind`` twice, with ``--small`` and ``--large`` requests after a warm-up, and
prints the slope: instructions per request, start-up cancelled out. The in-process client is
counted too (it is the same in both trees), so a change's share of the server alone is larger
than its share here. ``--drive N`` is the inner mode valgrind runs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.scenarios import (
    AMP_CONFIG,
    AMP_PATH,
    AMP_STORED_REQUEST,
    AMP_TAG,
    AUCTION_BIDDERS,
    AUCTION_CONFIG,
    BENCH_DIR,
    substitute,
)

WARMUP_REQUESTS = 300
_COLLECTED = re.compile(r"Collected : (\d+)")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _drive(which: str, requests: int) -> None:
    import yaml
    from aiohttp.test_utils import TestClient, TestServer

    from hbserver.app import create_app
    from hbserver.config import load_config

    port = _free_port()
    hosts = [arg for n in range(1, len(AUCTION_BIDDERS) + 1) for arg in ("--host", f"127.0.0.{n}")]
    mock = subprocess.Popen([sys.executable, str(BENCH_DIR / "mocks" / "bidder.py"), str(port), *hosts])
    try:
        time.sleep(1.0)
        with tempfile.TemporaryDirectory() as scratch:
            root = Path(scratch)
            stored = root / "stored" / "stored_requests"
            stored.mkdir(parents=True)
            (stored / f"{AMP_TAG}.json").write_text(json.dumps(AMP_STORED_REQUEST))
            values = {f"{seat}_url": f"http://127.0.0.{n}:{port}/{seat}" for n, seat in enumerate(AUCTION_BIDDERS, 1)}
            values["stored_dir"] = str(root / "stored")
            config_path = root / "hbserver.yaml"
            config_path.write_text(yaml.safe_dump(substitute(dict(AMP_CONFIG if which == "amp" else AUCTION_CONFIG),
                                                             values)))
            client = TestClient(TestServer(create_app(load_config(str(config_path))), port=0))
            await client.start_server()
            body = (BENCH_DIR / "payloads" / "auction.json").read_bytes()

            async def one() -> None:
                if which == "amp":
                    response = await client.get(AMP_PATH)
                else:
                    response = await client.post("/openrtb2/auction", data=body, headers={"Content-Type": "text/plain"})
                text = await response.read()
                if response.status != 200:
                    raise SystemExit(f"{which}: status {response.status}: {text[:300]!r}")

            for _ in range(WARMUP_REQUESTS + requests):
                await one()
            await client.close()
    finally:
        mock.terminate()
        mock.wait()


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
    parser.add_argument("which", choices=("amp", "auction"))
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
