"""bench/memory.py: the RSS of a varied run, judged flat over its second half."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from bench import memory
from bench.scenarios import select

MIB = 1024 * 1024


@pytest.mark.parametrize(
    ("samples", "flat"),
    [
        ([(0, 50 * MIB), (30, 80 * MIB), (60, 80 * MIB)], True),  # grew while warming up, then flat
        ([(0, 50 * MIB), (30, 80 * MIB), (60, 87 * MIB)], True),  # within 8 MiB
        ([(0, 50 * MIB), (30, 80 * MIB), (60, 90 * MIB)], False),
        ([(0, 50 * MIB), (30, 400 * MIB), (60, 419 * MIB)], True),  # within 5 % of a large RSS
        ([(0, 50 * MIB), (30, 400 * MIB), (60, 421 * MIB)], False),
        ([(0, 50 * MIB), (5, 60 * MIB)], None),  # too few samples to judge
    ],
)
def test_judge(samples, flat):
    assert memory.judge(samples)["flat"] is flat


def test_the_cache_store_is_bounded_for_the_run_and_nothing_else_changes():
    scenario = select("amp_varied")[0]
    small = memory.with_small_cache(scenario)
    assert small.config is not None and small.config["cache"]["memory"]["max_bytes"] == memory.CACHE_MAX_BYTES
    assert {k: v for k, v in small.config.items() if k != "cache"} == dict(scenario.config or {})
    assert (small.path, small.setup) == (scenario.path, scenario.setup)


@pytest.mark.parametrize(("raw", "names"), [(None, list(memory.DEFAULT_NAMES)), ("", []), ("amp_mixed", ["amp_mixed"])])
def test_resolve_names(raw, names):
    assert memory.resolve_names(raw) == names


def test_resolve_names_refuses_an_unknown_scenario():
    with pytest.raises(ValueError, match="nope"):
        memory.resolve_names("nope")


def test_rss_counts_the_children_too():
    child = "x = bytearray(64 << 20); import time; time.sleep(30)"
    code = f"import subprocess, sys, time; c = subprocess.Popen([sys.executable, '-c', {child!r}]); time.sleep(30)"
    parent = subprocess.Popen([sys.executable, "-c", code])
    try:
        for _ in range(100):
            rss = memory.rss_bytes(parent.pid)
            if rss is not None and rss > 64 * MIB:
                break
            time.sleep(0.05)
        alone = memory.rss_bytes(parent.pid) or 0
        assert alone > 64 * MIB  # the child's 64 MiB bytearray is counted
    finally:
        for child in memory._children(parent.pid):
            os.kill(child, 9)
        parent.kill()
        parent.wait()
    assert memory.rss_bytes(parent.pid) is None
