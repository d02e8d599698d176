"""Analytics: fan-out, the bounded buffer and its dropped counter, the JSON Lines file module."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import pytest

from hbserver.analytics import Analytics
from hbserver.analytics.file import FileModule
from hbserver.analytics.records import rfc3339_utc
from hbserver.metrics import Metrics


def sample(metrics: Metrics, name: str, **labels: str) -> float:
    metrics.flush()
    value = metrics.registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


def record(i: int) -> dict[str, Any]:
    return {"event": "notification", "ts": rfc3339_utc(1_700_000_000 + i), "bidid": f"b{i}"}


@pytest.mark.parametrize(
    ("epoch", "text"),
    [
        (0, "1970-01-01T00:00:00.000Z"),
        (1_700_000_000.5, "2023-11-14T22:13:20.500Z"),
        (1_700_000_000.999, "2023-11-14T22:13:20.999Z"),
        (1_700_000_001.001, "2023-11-14T22:13:21.001Z"),
    ],
)
def test_rfc3339(epoch, text):
    assert rfc3339_utc(epoch) == text


async def test_file_module_writes_every_record_in_order(tmp_path):
    metrics = Metrics()
    path = tmp_path / "a.jsonl"
    module = FileModule(str(path), metrics)
    await module.start()
    for i in range(250):
        module.log(record(i))
        if i % 50 == 0:
            await asyncio.sleep(0.01)  # let the writer run between bursts
    await module.close()
    lines = path.read_text().splitlines()
    assert [json.loads(line)["bidid"] for line in lines] == [f"b{i}" for i in range(250)]
    assert sample(metrics, "hbserver_analytics_events_total", module="file", event="notification") == 250
    assert sample(metrics, "hbserver_analytics_dropped_events_total", module="file") == 0


async def test_full_buffer_drops_and_counts(tmp_path):
    metrics = Metrics()
    path = tmp_path / "a.jsonl"
    module = FileModule(str(path), metrics, capacity=3)
    await module.start()
    for i in range(5):  # no await in between: the writer cannot drain
        module.log(record(i))
    await module.close()
    assert [json.loads(line)["bidid"] for line in path.read_text().splitlines()] == ["b0", "b1", "b2"]
    assert sample(metrics, "hbserver_analytics_dropped_events_total", module="file") == 2
    module.log(record(9))  # after close nothing is accepted
    assert sample(metrics, "hbserver_analytics_dropped_events_total", module="file") == 3


async def test_write_failure_counts_the_batch_as_dropped():
    if not os.path.exists("/dev/full"):
        pytest.skip("/dev/full is not available")
    metrics = Metrics()
    module = FileModule("/dev/full", metrics)
    await module.start()
    for i in range(4):
        module.log(record(i))
    await module.close()
    assert sample(metrics, "hbserver_analytics_dropped_events_total", module="file") == 4


async def test_fan_out_to_every_module(tmp_path):
    metrics = Metrics()
    first, second = FileModule(str(tmp_path / "1.jsonl"), metrics), FileModule(str(tmp_path / "2.jsonl"), metrics)
    analytics = Analytics([first, second])
    assert analytics.enabled and not Analytics([]).enabled
    await analytics.start()
    analytics.log(record(1))
    await analytics.close()
    for name in ("1.jsonl", "2.jsonl"):
        assert json.loads((tmp_path / name).read_text())["bidid"] == "b1"


async def test_two_writers_on_one_file_never_interleave(tmp_path):
    """Workers share the file: each batch is one O_APPEND write, so lines stay whole."""
    path = tmp_path / "shared.jsonl"
    modules = [FileModule(str(path), Metrics()) for _ in range(2)]
    for module in modules:
        await module.start()
    big = "x" * 5000
    for i in range(400):
        modules[i % 2].log({"event": "notification", "n": i, "pad": big})
        if i % 40 == 0:
            await asyncio.sleep(0)
    for module in modules:
        await module.close()
    numbers = sorted(json.loads(line)["n"] for line in path.read_text().splitlines())
    assert numbers == list(range(400))


async def test_a_moved_file_is_replaced_by_a_new_one(tmp_path):
    path = tmp_path / "a.jsonl"
    module = FileModule(str(path), Metrics())
    await module.start()
    module.log(record(1))
    for _ in range(200):  # wait for the first batch to be written
        if path.stat().st_size:
            break
        await asyncio.sleep(0.01)
    path.rename(tmp_path / "a.jsonl.1")  # what logrotate does
    module.log(record(2))
    await module.close()
    assert json.loads((tmp_path / "a.jsonl.1").read_text())["bidid"] == "b1"
    assert json.loads(path.read_text())["bidid"] == "b2"
