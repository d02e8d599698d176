"""The memory cache store under a long stream of puts: it must never hold more than ``max_bytes``.

``python -m bench.soak`` (also run by ``make bench`` unless ``BENCH_SOAK_PUTS=0``) writes
``BENCH_SOAK_PUTS`` items (default 1,000,000) of about 1 KB into a store bounded at 64 MiB,
checks the accounted size after every put, and reports the process's resident memory before and
after, so the accounting can be compared with what the process really holds.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import Any

from hbserver.stores.cache.base import CacheItem
from hbserver.stores.cache.memory import MemoryStore

MAX_BYTES = 64 * 1024 * 1024
VALUE = b"<VAST version=\"3.0\"><Ad><InLine>" + b"x" * 960 + b"</InLine></Ad></VAST>"


def rss_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


async def soak(puts: int, max_bytes: int = MAX_BYTES) -> dict[str, Any]:
    store = MemoryStore(max_bytes)
    rss_before = rss_bytes()
    peak = 0
    started = time.perf_counter()
    for i in range(puts):
        await store.put_many([CacheItem("xml", VALUE + str(i).encode(), 300)])
        if store.bytes > peak:
            peak = store.bytes
    elapsed = time.perf_counter() - started
    rss_after = rss_bytes()
    return {
        "puts": puts,
        "max_bytes": max_bytes,
        "peak_accounted_bytes": peak,
        "items_held": len(store),
        "rss_growth_bytes": rss_after - rss_before,
        "puts_per_second": round(puts / elapsed),
        "within_bound": peak <= max_bytes,
    }


def format_soak(result: dict[str, Any]) -> str:
    mib = 1024 * 1024
    verdict = "PASS" if result["within_bound"] else "FAIL"
    return (
        f"soak: {result['puts']:,} puts into a {result['max_bytes'] / mib:.0f} MiB memory store: peak "
        f"{result['peak_accounted_bytes'] / mib:.1f} MiB accounted ({verdict}), {result['items_held']:,} items held, "
        f"RSS +{result['rss_growth_bytes'] / mib:.1f} MiB, {result['puts_per_second']:,} puts/s"
    )


def main() -> int:
    puts = int(os.environ.get("BENCH_SOAK_PUTS", "1000000"))
    result = asyncio.run(soak(puts))
    sys.stdout.write(format_soak(result) + "\n")
    return 0 if result["within_bound"] else 1


if __name__ == "__main__":
    sys.exit(main())
