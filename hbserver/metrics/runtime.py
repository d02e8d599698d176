"""Runtime metrics every worker samples for itself; summed over live workers in multiprocess mode
(prometheus-client's process collector does not work there): resident memory, CPU time, open
file descriptors, garbage collections by generation, in-flight requests, and the event loop's lag
(how late a short timer fires: the time a request waits behind other work on the loop).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
from collections.abc import Callable

from hbserver.metrics import Metrics

log = logging.getLogger("hbserver.metrics")

LAG_INTERVAL_SECONDS = 0.25
SAMPLE_EVERY_TICKS = 8  # process figures every 2 s
_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_bytes() -> int:
    """This process's resident set size (Linux /proc; 0 elsewhere)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE_SIZE
    except (OSError, ValueError, IndexError):
        return 0


def open_fds() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return 0


def cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system


class RuntimeSampler:
    """Samples the runtime figures; :meth:`run` is the worker's background task."""

    def __init__(self, metrics: Metrics, rates_age: Callable[[], float | None] | None = None) -> None:
        self.metrics = metrics
        self.rates_age = rates_age
        self._lag = metrics.histogram(metrics.event_loop_lag)
        self._cpu = metrics.counter(metrics.process_cpu)
        self._gc = [metrics.counter(metrics.gc_collections, str(generation)) for generation in range(3)]
        self._cpu_seen = 0.0  # the first sample counts everything since the process started
        self._gc_seen = [0, 0, 0]
        self._started = 0.0

    def sample(self, now: float) -> None:
        """Process figures, applied as gauges (memory, fds, rates age) and counters (CPU, collections)."""
        metrics = self.metrics
        metrics.process_rss.set(resident_bytes())
        metrics.process_open_fds.set(open_fds())
        cpu = cpu_seconds()
        self._cpu.inc(max(0.0, cpu - self._cpu_seen))
        self._cpu_seen = cpu
        for generation, stats in enumerate(gc.get_stats()):
            collections = stats["collections"]
            self._gc[generation].inc(max(0, collections - self._gc_seen[generation]))
            self._gc_seen[generation] = collections
        if self.rates_age is not None:
            age = self.rates_age()
            # rates never fetched are as stale as the time since start
            metrics.currency_rates_age.set(age if age is not None else now - self._started)

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        self._started = loop.time()
        self.sample(self._started)
        ticks = 0
        while True:
            before = loop.time()
            await asyncio.sleep(LAG_INTERVAL_SECONDS)
            now = loop.time()
            self._lag.observe(max(0.0, now - before - LAG_INTERVAL_SECONDS))
            ticks += 1
            if ticks % SAMPLE_EVERY_TICKS == 0:
                try:
                    self.sample(now)
                except Exception:  # a runtime figure must never stop the sampling
                    log.exception("runtime metrics: sampling failed")
