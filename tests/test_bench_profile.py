"""bench/profile.py: py-spy's collapsed stacks read, each sample given to one stage, the tables written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.profile import (
    EVENT_LOOP,
    GC_SITECUSTOMIZE,
    STAGES,
    _read_gc,
    classify,
    parse_collapsed,
    summarise,
    to_markdown,
)

ROOT = "Runner.run (asyncio/runners.py:118)"
HANDLER = "wrap.<locals>.endpoint_handler (hbserver/web/endpoint.py:80)"
CORE = "AuctionService._auction (hbserver/auction/core.py:400)"


@pytest.mark.parametrize(
    ("frames", "stage"),
    [
        ([ROOT], EVENT_LOOP),
        ([], EVENT_LOOP),
        ([ROOT, "RequestHandler.start (aiohttp/web_protocol.py:686)"], "inbound HTTP (aiohttp, handlers' wrapper)"),
        ([ROOT, HANDLER], "inbound HTTP (aiohttp, handlers' wrapper)"),
        ([ROOT, HANDLER, CORE], "fan-out glue (exchange, core)"),
        # the innermost frame that matches decides: validation called from core is validation
        ([ROOT, HANDLER, CORE, "validate_request (hbserver/auction/request/validate.py:74)"],
         "validation (types, rules, native)"),
        ([ROOT, CORE, "split_request (hbserver/auction/exchange/split.py:40)",
          "deepcopy (/usr/lib/python3.11/copy.py:128)"],
         "copies (deepcopy, merge)"),
        ([ROOT, CORE, "split_request (hbserver/auction/exchange/split.py:40)", "dumps (json/encoder.py:1)"],
         "split / first-party data"),
        ([CORE, "BidderClient.start (hbserver/web/bidclient.py:427)"], "bidder client (outbound HTTP)"),
        ([CORE, "GenericAdapter.make_bids (hbserver/adapters/generic.py:56)"], "adapters (bidder requests and bids)"),
        ([CORE, "MemoryStore.put_many_now (hbserver/stores/cache/memory.py:54)"], "cache writes"),
        ([CORE, "price_bucket (hbserver/auction/response/pricegranularity.py:10)"], "targeting / price buckets"),
        ([CORE, "enforce_floors (hbserver/floors/enforce.py:1)"], "floors / currency"),
        ([CORE, "read_privacy (hbserver/auction/exchange/privacy.py:202)"],
         "privacy (GDPR/TCF, CCPA, GPP, activities)"),
        ([CORE, "PendingCounter.inc (hbserver/metrics/pending.py:23)"], "metrics / analytics"),
        (["AmpEndpoint._auction (hbserver/endpoints/amp.py:134)"], "response build"),
        (["amp_request (hbserver/auction/request/amp.py:186)"], "AMP request build"),
        ([CORE, "HookExecutor.run (hbserver/hooks/executor.py:81)"], "hooks and modules"),
        (["something (hbserver/usersync/cookie.py:1)"], "other hbserver"),
    ],
)
def test_classify(frames, stage):
    assert classify(frames) == stage


def test_every_stage_is_named_once():
    names = [name for name, _, _ in STAGES]
    assert len(names) == len(set(names)) and EVENT_LOOP not in names


def test_collapsed_stacks_and_tables():
    lines = [
        f"{ROOT};{HANDLER};{CORE} 6",
        f"{ROOT} 3",
        "",
        f"{ROOT};{HANDLER} 1",
    ]
    stacks = parse_collapsed(lines)
    assert stacks == [([ROOT, HANDLER, CORE], 6), ([ROOT], 3), ([ROOT, HANDLER], 1)]
    profile = summarise("amp", stacks, requests=100, server_cpu_s=0.05, gc=(0.005, 7))
    assert profile.samples == 10
    assert profile.by_stage == {
        "fan-out glue (exchange, core)": 6,
        EVENT_LOOP: 3,
        "inbound HTTP (aiohttp, handlers' wrapper)": 1,
    }
    assert profile.cpu_us_per_request() == pytest.approx(500)
    text = to_markdown(profile)
    assert "| fan-out glue (exchange, core) | 60.0 % |" in text
    assert text.index("fan-out glue") < text.index("event loop") < text.index("inbound HTTP")
    assert "server CPU 500 µs per request" in text
    assert "7 collections, 10.0 % of the server's CPU" in text
    assert "| `AuctionService._auction (hbserver/auction/core.py:400)` | 60.0 % |" in text


@pytest.mark.parametrize("which", ["amp", "auction", "amp_full", "auction_full", "setuid", "cookie_sync"])
def test_the_instructions_driver_runs_the_real_app(which):
    """bench/instructions.py's inner mode (what valgrind runs): real app, mock bidder, every answer a 200
    (a non-200 ends it with the status)."""
    import subprocess
    import sys
    from pathlib import Path

    done = subprocess.run(
        [sys.executable, "-m", "bench.instructions", which, "--drive", "3"],
        cwd=Path(__file__).resolve().parent.parent, capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_gc_timer_counts_each_generation_and_is_read_back(tmp_path: Path) -> None:
    """The server's sitecustomize times collections per generation; _read_gc sums its processes' files."""
    (tmp_path / "sitecustomize.py").write_text(GC_SITECUSTOMIZE)
    prefix = tmp_path / "gc"
    code = "import gc\nfor _ in range(3): gc.collect(0)\ngc.collect(2)\n"
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "BENCH_GC_FILE": str(prefix)}
    for _ in range(2):  # two processes, as with workers: 2
        subprocess.run([sys.executable, "-c", code], env=env, check=True)
    generations = _read_gc(prefix)
    assert len(generations) == 3
    assert generations[0][1] >= 6 and generations[2][1] >= 2  # at least what the scripts asked for
    assert all(spent >= 0 for spent, _ in generations)
    profile = summarise("amp", [], requests=1, server_cpu_s=1.0, gc=(0.1, 9), gc_generations=generations)
    assert "By generation: 0: " in to_markdown(profile)
    assert _read_gc(tmp_path / "none") == []
