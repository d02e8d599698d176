"""Memory under varied traffic: the server's RSS over a 60 s run whose requests all differ.

Every memo keyed on request text (prepared AMP requests, call plans, floors, consent strings, cookie_sync
bodies, the seen-before gates) must stay bounded: on traffic whose keys never repeat, a memo without a
bound grows with every request. After the wrk rounds this stage starts each named varied scenario's server
as the rounds do, with one change: the memory cache store (which holds every cached bid, on purpose, up to
``cache.memory.max_bytes``) gets a small bound, so that it is full within seconds and whatever grows
after that is something else. wrk drives it for :data:`DURATION_S` while the server's RSS is sampled
every :data:`SAMPLE_EVERY_S`; the run is flat when the RSS at the end is within :data:`GROWTH_MAX_SHARE`
(or :data:`GROWTH_MAX_BYTES`, whichever is larger) of the RSS at the half-way mark.
"""

from __future__ import annotations

import dataclasses
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from bench import procs
from bench.latency import Served
from bench.machine import Pinning
from bench.scenarios import SCENARIOS, Scenario
from bench.wrk import WrkCommand

DURATION_S = 60
SAMPLE_EVERY_S = 5
CACHE_MAX_BYTES = 16 * 1024 * 1024  # the memory cache store's bound for this run (full within seconds)
GROWTH_MAX_SHARE = 0.05
GROWTH_MAX_BYTES = 8 * 1024 * 1024
DEFAULT_NAMES = ("amp_varied", "auction_varied")

ServeFn = Callable[[Scenario, Path], AbstractContextManager[Served]]


def rss_bytes(pid: int) -> int | None:
    """The resident set of process ``pid`` and its children (workers), from /proc; None when gone."""
    total = 0
    pids = [pid, *_children(pid)]
    for one in pids:
        try:
            with open(f"/proc/{one}/status") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
                        break
        except OSError:
            if one == pid:
                return None
    return total


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as children:
            return [int(child) for child in children.read().split()]
    except OSError:
        return []


def with_small_cache(scenario: Scenario) -> Scenario:
    """``scenario`` with the memory cache store bounded to :data:`CACHE_MAX_BYTES`."""
    config = dict(scenario.config or {})
    cache = dict(config.get("cache") or {})
    cache["memory"] = {**dict(cache.get("memory") or {}), "max_bytes": CACHE_MAX_BYTES}
    config["cache"] = cache
    return dataclasses.replace(scenario, config=config)


def judge(samples: Sequence[tuple[float, int]]) -> dict[str, Any]:
    """Whether RSS stayed flat over the second half of the run: ``samples`` are (seconds, bytes)."""
    if len(samples) < 3:
        return {"flat": None, "reason": "fewer than 3 samples"}
    end_s, end = samples[-1]
    half = min(samples, key=lambda sample: abs(sample[0] - end_s / 2))
    allowed = max(GROWTH_MAX_BYTES, GROWTH_MAX_SHARE * half[1])
    growth = end - half[1]
    return {"flat": growth <= allowed, "growth_bytes": growth, "allowed_bytes": round(allowed),
            "half_rss_bytes": half[1], "end_rss_bytes": end}


def measure(scenario: Scenario, connections: int, pinning: Pinning, workdir: Path, serve: ServeFn,
            duration_s: int = DURATION_S) -> dict[str, Any]:
    """Run ``scenario`` (small cache) under wrk for ``duration_s``, sampling the server's RSS."""
    scenario = with_small_cache(scenario)
    with serve(scenario, workdir) as served:
        command = WrkCommand(
            url=scenario.url(served.port, served.values), connections=scenario.wrk_connections(connections),
            script=scenario.wrk_script(workdir), headers=scenario.wrk_headers(), cpu=pinning.client_cpu,
        )
        wrk = subprocess.Popen(command.argv(duration_s), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        samples: list[tuple[float, int]] = []
        start = time.monotonic()
        try:
            while wrk.poll() is None:
                rss = rss_bytes(served.server.pid)
                if rss is None:
                    raise procs.ProcessError(f"server exited during the run:\n{served.server.log_tail()}")
                samples.append((round(time.monotonic() - start, 1), rss))
                time.sleep(SAMPLE_EVERY_S)
        finally:
            if wrk.poll() is None:
                wrk.kill()
            wrk.wait()
    return {"duration_s": duration_s, "cache_max_bytes": CACHE_MAX_BYTES, "samples": samples, **judge(samples)}


def measure_all(names: Sequence[str], connections: int, pinning: Pinning, scratch: Path, serve: ServeFn,
                scenarios: Sequence[Scenario] = SCENARIOS) -> dict[str, dict[str, Any]]:
    by_name = {scenario.name: scenario for scenario in scenarios}
    results: dict[str, dict[str, Any]] = {}
    for name in names:
        try:
            results[name] = measure(by_name[name], connections, pinning, scratch / f"{name}-memory", serve)
        except (procs.ProcessError, OSError, ValueError) as exc:
            results[name] = {"flat": False, "error": f"{type(exc).__name__}: {exc}"}
        print(f"[memory] {name}: {format_result(results[name])}", flush=True)
    return results


def resolve_names(raw: str | None, scenarios: Sequence[Scenario] = SCENARIOS) -> list[str]:
    """BENCH_MEMORY as a list: None = :data:`DEFAULT_NAMES`, '' = none; ValueError on an unknown name."""
    if raw is None:
        return list(DEFAULT_NAMES)
    wanted = [name.strip() for name in raw.split(",") if name.strip()]
    known = {scenario.name for scenario in scenarios}
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise ValueError(f"BENCH_MEMORY: unknown scenario(s) {', '.join(unknown)}")
    return wanted


def format_result(result: Mapping[str, Any]) -> str:
    if "error" in result:
        return f"ERROR {result['error']}"
    if result.get("flat") is None:
        return f"not judged ({result.get('reason')})"
    mib = 1024 * 1024
    series = " ".join(f"{rss / mib:.0f}" for _, rss in result["samples"])
    verdict = "flat" if result["flat"] else "NOT FLAT"
    return (f"RSS MiB every {SAMPLE_EVERY_S}s: {series}; second half {result['growth_bytes'] / mib:+.1f} MiB "
            f"(allowed {result['allowed_bytes'] / mib:.1f}): {verdict}")


def format_all(results: Mapping[str, Mapping[str, Any]]) -> str:
    lines = [f"memory over a {DURATION_S} s varied run (cache store bounded to {CACHE_MAX_BYTES // 1024 // 1024} MiB):"]
    lines += [f"  {name}: {format_result(result)}" for name, result in results.items()]
    return "\n".join(lines)
