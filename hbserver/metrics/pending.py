"""Hot-path handles on Prometheus children: plain additions, applied to the child on flush.

A labelled ``inc()`` in prometheus-client costs microseconds (and in multiprocess mode writes a
memory-mapped file); these cost an integer addition. Only the event loop's thread may call
``flush`` (it reads and resets the pending values the loop writes): see :meth:`Metrics.flush`.
"""

from __future__ import annotations

from bisect import bisect_left

from prometheus_client import Counter, Histogram


class PendingCounter:
    __slots__ = ("child", "pending")

    def __init__(self, child: Counter) -> None:
        self.child = child
        self.pending = 0

    def inc(self, amount: float = 1) -> None:
        self.pending += amount

    def flush(self) -> None:
        if self.pending:
            amount, self.pending = self.pending, 0
            self.child.inc(amount)


class PendingHistogram:
    """Bucket counts kept as plain ints between flushes.

    prometheus-client keeps one (non-cumulative) value per bucket plus the sum; a flush adds the
    pending counts to those values directly, which is what ``observe()`` does one at a time.
    """

    __slots__ = ("bounds", "child", "counts", "total")

    def __init__(self, child: Histogram) -> None:
        self.child = child
        self.bounds = list(child._upper_bounds)
        self.counts = [0] * len(self.bounds)
        self.total = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.bounds, value)] += 1
        self.total += value

    def flush(self) -> None:
        counts = self.counts
        if not any(counts):
            return
        buckets = self.child._buckets
        for index, n in enumerate(counts):
            if n:
                buckets[index].inc(n)
                counts[index] = 0
        self.child._sum.inc(self.total)
        self.total = 0.0
