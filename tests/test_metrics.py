"""Metrics: hot-path counts reach Prometheus exactly as direct observations would."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, Histogram
from prometheus_client.exposition import generate_latest

from hbserver.metrics import REQUEST_TIME_BUCKETS, Metrics

DURATIONS = [0.0001, 0.0005, 0.0005, 0.003, 0.02, 0.7, 7.0, 99.0, 0.0]


def exposition_lines(registry: CollectorRegistry, prefix: str) -> list[str]:
    return [line for line in generate_latest(registry).decode().splitlines() if line.startswith(prefix)]


def test_pending_histogram_equals_direct_observations():
    metrics = Metrics()
    for seconds in DURATIONS:
        metrics.observe_request("/event", 200, seconds)
    metrics.flush()
    metrics.observe_request("/event", 200, 0.004)  # a second flush adds to the first
    metrics.flush()

    reference = CollectorRegistry()
    direct = Histogram(
        "request_time_seconds", "x", ["endpoint"], namespace="hbserver", registry=reference,
        buckets=REQUEST_TIME_BUCKETS,
    )
    for seconds in [*DURATIONS, 0.004]:
        direct.labels("/event").observe(seconds)
    ours = exposition_lines(metrics.registry, "hbserver_request_time_seconds")
    assert ours == exposition_lines(reference, "hbserver_request_time_seconds")
    assert 'hbserver_request_time_seconds_count{endpoint="/event"} 10.0' in ours


def test_counts_wait_for_flush_and_render_flushes():
    metrics = Metrics()
    metrics.observe_request("/status", 204, 0.001)
    events = metrics.counter(metrics.event_notifications, "win")
    events.inc()
    events.inc(2)
    assert metrics.counter(metrics.event_notifications, "win") is events  # one handle per label set
    assert metrics.registry.get_sample_value("hbserver_event_notifications_total", {"type": "win"}) == 0
    text = metrics.render()[0].decode()
    assert 'hbserver_requests_total{endpoint="/status",status="204"} 1.0' in text
    assert 'hbserver_event_notifications_total{type="win"} 3.0' in text
    metrics.flush()  # nothing pending: nothing added twice
    assert metrics.registry.get_sample_value("hbserver_event_notifications_total", {"type": "win"}) == 3


@pytest.mark.parametrize("namespace", ["hbserver", "prebid_server"])
def test_namespace(namespace):
    metrics = Metrics(namespace)
    metrics.observe_request("/event", 200, 0.001)
    text, content_type = metrics.render()
    assert f'{namespace}_requests_total{{endpoint="/event",status="200"}} 1.0' in text.decode()
    assert content_type.startswith("text/plain")
    assert b"_created" not in text


async def test_metrics_endpoint_lists_every_family(make_client):
    client = await make_client()
    await client.get("/event?t=win&b=1&a=a")
    text = await (await client.get("/metrics")).text()
    for family in (
        "hbserver_requests_total", "hbserver_request_time_seconds", "hbserver_internal_errors_total",
        "hbserver_event_notifications_total", "hbserver_account_cache_performance_total",
        "hbserver_account_fetch_errors_total", "hbserver_analytics_events_total",
        "hbserver_analytics_dropped_events_total", "hbserver_workers",
    ):
        assert f"# TYPE {family} " in text, family
    assert "hbserver_workers 1.0" in text
