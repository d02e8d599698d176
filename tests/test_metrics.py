"""Metrics: PBS-Go's exposition (counters without ``_total``, namespace and subsystem prefixes),
hot-path counts reaching Prometheus exactly as direct observations would, and scrapes that never
lose a count the loop adds meanwhile."""

from __future__ import annotations

import asyncio
import re

import pytest
from prometheus_client import CollectorRegistry, Histogram
from prometheus_client.exposition import generate_latest

from hbserver.metrics import HTTP_TIME_BUCKETS, Metrics, metric_prefix

DURATIONS = [0.0001, 0.0005, 0.0005, 0.003, 0.02, 0.7, 7.0, 99.0, 0.0]


def exposition_lines(text: str, prefix: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(prefix)]


def test_pending_histogram_equals_direct_observations():
    metrics = Metrics()
    for seconds in DURATIONS:
        metrics.observe_request("/event", 200, seconds)
    metrics.flush()
    metrics.observe_request("/event", 200, 0.004)  # a second flush adds to the first
    text = metrics.render()[0].decode()

    reference = CollectorRegistry()
    direct = Histogram(
        "http_request_time_seconds", "x", ["endpoint"], namespace="hbserver", registry=reference,
        buckets=HTTP_TIME_BUCKETS,
    )
    for seconds in [*DURATIONS, 0.004]:
        direct.labels("/event").observe(seconds)
    expected = exposition_lines(generate_latest(reference).decode(), "hbserver_http_request_time_seconds")
    ours = exposition_lines(text, "hbserver_http_request_time_seconds")
    assert ours == expected
    assert 'hbserver_http_request_time_seconds_count{endpoint="/event"} 10.0' in ours


def test_counts_wait_for_flush_and_render_flushes():
    metrics = Metrics()
    metrics.observe_request("/status", 204, 0.001)
    events = metrics.counter(metrics.event_notifications, "win")
    events.inc()
    events.inc(2)
    assert metrics.counter(metrics.event_notifications, "win") is events  # one handle per label set
    assert metrics.registry.get_sample_value("hbserver_event_notifications_total", {"type": "win"}) == 0
    text = metrics.render()[0].decode()
    assert 'hbserver_http_requests{endpoint="/status",status="204"} 1.0' in text
    assert 'hbserver_event_notifications{type="win"} 3.0' in text
    metrics.flush()  # nothing pending: nothing added twice
    assert metrics.registry.get_sample_value("hbserver_event_notifications_total", {"type": "win"}) == 3


@pytest.mark.parametrize(
    ("namespace", "subsystem", "prefix"),
    [
        ("hbserver", "", "hbserver_"),
        ("prebid_server", "", "prebid_server_"),
        ("pbs", "auction", "pbs_auction_"),
        ("", "", ""),
        ("", "edge", "edge_"),
    ],
)
def test_names_are_prefixed_as_pbs_go_and_counters_have_no_total(namespace, subsystem, prefix):
    assert metric_prefix(namespace, subsystem) == prefix
    metrics = Metrics(namespace, subsystem)
    metrics.counter(metrics.requests, "openrtb2-web", "ok").inc()
    metrics.histogram(metrics.request_time, "openrtb2-web").observe(0.12)
    text, content_type = metrics.render()
    body = text.decode()
    assert f'{prefix}requests{{request_status="ok",request_type="openrtb2-web"}} 1.0' in body
    assert f"# TYPE {prefix}requests counter" in body
    assert f'{prefix}request_time_seconds_bucket{{le="0.15",request_type="openrtb2-web"}} 1.0' in body
    assert f'{prefix}request_time_seconds_bucket{{le="0.1",request_type="openrtb2-web"}} 0.0' in body
    assert not re.search(r"_(total|created)[{ ]", body.replace("adapter_connection_created", "acc"))
    assert content_type.startswith("text/plain; version=0.0.4")


# PBS-Go's buckets (metrics/prometheus/prometheus.go), family by family.
PBS_BUCKETS = {
    "request_time_seconds": (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1),
    "adapter_request_time_seconds": (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1),
    "adapter_connection_wait": (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1),
    "stored_request_fetch_time_seconds": (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1),
    "prebidcache_write_time_seconds": (0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 1),
    "adapter_prices": (250, 500, 750, 1000, 1500, 2000, 2500, 3000, 3500, 4000),
    "request_size_bytes": (100, 500, 750, 1000, 2000, 4000, 7000, 10000, 15000, 20000, 50000, 75000),
}


@pytest.mark.parametrize(("family", "buckets"), PBS_BUCKETS.items())
def test_pbs_buckets(family, buckets):
    metrics = Metrics()
    histogram = next(m for m in metrics.registry._collector_to_names if getattr(m, "_name", "") == f"hbserver_{family}")
    assert tuple(histogram._upper_bounds[:-1]) == tuple(float(b) for b in buckets)


def test_account_labels_are_bounded(monkeypatch):
    monkeypatch.setattr("hbserver.metrics.MAX_ACCOUNT_LABELS", 2)
    metrics = Metrics()
    assert [metrics.account_label(a) for a in ("a", "b", "c", "a", "", "unknown")] == ["a", "b", None, "a", None, None]


async def test_metrics_endpoint_lists_every_family(make_client):
    client = await make_client()
    await client.get("/event?t=win&b=1&a=a")
    text = await (await client.get("/metrics")).text()
    for name, kind, _labels in Metrics().describe():
        assert f"# TYPE {name} {kind}" in text, name
    assert "hbserver_workers 1.0" in text
    assert 'hbserver_http_requests{endpoint="/event",status="200"} 1.0' in text


async def test_scrapes_lose_no_count_the_loop_adds_meanwhile(make_client):
    """Requests and scrapes interleave on the loop; every request is counted exactly once."""
    client = await make_client()
    total = 400

    async def hit(n: int) -> None:
        for _ in range(n):
            assert (await client.get("/status")).status == 204

    async def scrape(n: int) -> None:
        for _ in range(n):
            assert (await client.get("/metrics")).status == 200

    await asyncio.gather(*(hit(total // 8) for _ in range(8)), *(scrape(10) for _ in range(4)))
    text = await (await client.get("/metrics")).text()
    assert f'hbserver_http_requests{{endpoint="/status",status="204"}} {float(total)}' in text


def test_readme_metrics_table_is_generated_from_the_code():
    from pathlib import Path

    from hbserver.metrics.catalogue import END, START, table

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    documented = readme.partition(START)[2].partition(END)[0].strip()
    assert documented == table(), "run: python -m hbserver.metrics.catalogue README.md"
    assert table().count("\n") - 1 == len(Metrics().describe())  # one row per family
