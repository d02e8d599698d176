"""The dashboard and the alerts against the real thing: Debian's Prometheus scrapes a two-worker
hbserver (``/metrics`` on its admin port) under a few seconds of every kind of request, with one
bidder answering 500 and one answering after the deadline. Every dashboard panel query and every
alert's signal (its expression without the final comparison) must return data through Prometheus's
HTTP API, the failing bidder's alert must fire and the 5xx alert must not.

A query without data here means a metric (or label) the dashboard or the alerts name is not
produced: fix the producer or the query, never the check.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.observability.stack import (
    COUNTED_PATHS,
    FAIL,
    GOOD,
    INSTALL_HINT,
    JOB,
    SLOW,
    LoadReport,
    Stack,
    alert_rules,
    alert_signal,
    dashboard_queries,
    drive_load,
    prometheus_missing,
    running_stack,
    substitute,
    wait_counted,
)
from tests.observability.test_dashboard import METRIC
from tests.services import require

QUERIES = dashboard_queries()
RULES = alert_rules()
RATE_INTERVAL = "30s"  # $__rate_interval: 30 s covers the whole load at a 1 s scrape interval
LOAD_SECONDS = 5.0
ALERT_WAIT_SECONDS = 20.0


@dataclass
class Live:
    stack: Stack
    report: LoadReport
    counted: dict[str, float]
    at: float  # the evaluation time of every query: just after the load was scraped


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    require(prometheus_missing() is None, str(prometheus_missing()), INSTALL_HINT)
    with running_stack(tmp_path_factory.mktemp("observability")) as stack:
        report = asyncio.run(drive_load(stack, LOAD_SECONDS))
        counted = wait_counted(stack, report)
        yield Live(stack, report, counted, time.time())


def described(result: list[dict[str, Any]]) -> str:
    return json.dumps([(series["metric"], series["value"][1]) for series in result][:6])


def test_the_load_was_answered_and_counted_once_across_both_workers(live):
    statuses = live.report.statuses
    assert live.report.total > 200
    assert {status for (_, status) in statuses} <= {200, 204, 400, 404}, statuses  # no 5xx
    assert all(status == 200 for (kind, status) in statuses if kind.startswith(("auction", "amp"))), statuses
    assert live.report.disconnects > 0
    for path in COUNTED_PATHS:
        assert live.counted.get(path) == live.report.by_path[path], (path, live.counted)
    workers = live.stack.prometheus.query(f'hbserver_workers{{job="{JOB}"}}', live.at)
    assert [float(series["value"][1]) for series in workers] == [2.0]


@pytest.mark.parametrize("query", QUERIES, ids=[q.id for q in QUERIES])
def test_dashboard_query_returns_data(live, query):
    expr = substitute(query.expr, RATE_INTERVAL)
    result = live.stack.prometheus.query(expr, live.at)
    assert result, f"no data for panel {query.panel!r}: {expr}"


@pytest.mark.parametrize("rule", RULES, ids=[rule.name for rule in RULES])
def test_alert_signal_returns_data(live, rule):
    signal = alert_signal(rule.expr)
    result = live.stack.prometheus.query(signal, live.at)
    assert result, f"no data for the signal of {rule.name}: {signal}"


def test_every_metric_the_dashboard_and_alerts_name_is_scraped(live):
    named = {name for query in QUERIES for name in METRIC.findall(query.expr)}
    named |= {name for rule in RULES for name in METRIC.findall(rule.expr)}
    assert named - live.stack.prometheus.metric_names() == set()


def test_the_bidders_signals_tell_them_apart(live):
    """Per adapter: the failing bidder errors on every request, the slow one times out on every
    request, the good one does neither (its bids are priced and counted)."""
    by_name = {rule.name: rule for rule in RULES}
    errors = live.stack.prometheus.query(alert_signal(by_name["HbserverAdapterErrorRatio"].expr), live.at)
    timeouts = live.stack.prometheus.query(alert_signal(by_name["HbserverAdapterTimeoutRatio"].expr), live.at)
    error_ratio = {series["metric"]["adapter"]: float(series["value"][1]) for series in errors}
    timeout_ratio = {series["metric"]["adapter"]: float(series["value"][1]) for series in timeouts}
    # rate() extrapolates each series from its own first sample: ratios of rates are close, not exact
    assert error_ratio == pytest.approx({FAIL: 1.0, GOOD: 0.0, SLOW: 0.0}, abs=0.1), described(errors)
    assert timeout_ratio == pytest.approx({FAIL: 0.0, GOOD: 0.0, SLOW: 1.0}, abs=0.1), described(timeouts)
    totals = {
        name: {series["metric"]["adapter"]: float(series["value"][1])
               for series in live.stack.prometheus.query(f'sum by (adapter) ({name}{{job="{JOB}"}})', live.at)}
        for name in ("hbserver_adapter_requests", "hbserver_adapter_errors", "hbserver_adapter_bids")
    }
    requests, errors_total, bids = (totals[name] for name in totals)
    assert requests[FAIL] > 0 and errors_total[FAIL] == requests[FAIL]
    assert requests[SLOW] > 0 and errors_total[SLOW] == requests[SLOW]
    assert errors_total.get(GOOD, 0) <= 0.1 * requests[GOOD]  # a stalled machine may time one out
    assert {adapter for adapter, n in bids.items() if n > 0} == {GOOD}


def firing(alerts: list[dict[str, Any]]) -> set[tuple[str, str]]:
    return {(a["labels"]["alertname"], a["labels"].get("adapter", "")) for a in alerts if a["state"] == "firing"}


def test_the_failing_bidders_alert_fires_and_the_5xx_alert_does_not(live):
    prometheus = live.stack.prometheus
    expected = {("HbserverAdapterErrorRatio", FAIL), ("HbserverAdapterTimeoutRatio", SLOW)}
    deadline = time.monotonic() + ALERT_WAIT_SECONDS
    while not expected <= firing(prometheus.alerts()) and time.monotonic() < deadline:
        time.sleep(0.5)
    alerts = prometheus.alerts()
    active = firing(alerts)
    assert ("HbserverAdapterErrorRatio", FAIL) in active, alerts
    assert ("HbserverAdapterTimeoutRatio", SLOW) in active, alerts
    assert ("HbserverAdapterErrorRatio", GOOD) not in active
    names = {a["labels"]["alertname"] for a in alerts}  # firing or pending
    quiet = {"HbserverHigh5xxRatio", "HbserverTargetDown", "HbserverWorkerRestarts", "HbserverAnalyticsDropping",
             "HbserverCacheStoreWriteErrors", "HbserverCacheStoreReadErrors", "HbserverAuctionCacheWriteFailures",
             "HbserverCurrencyRatesStale"}
    assert names & quiet == set(), alerts
    fired = next(a for a in alerts if a["labels"]["alertname"] == "HbserverAdapterErrorRatio")
    assert fired["labels"]["severity"] == "warning"
    assert fired["annotations"]["runbook_url"] == "deploy/RUNBOOK.md#hbserveradaptererrorratio"
    assert fired["annotations"]["summary"] == f"Bidder {FAIL} fails more than 25 % of its requests"


def test_the_server_logged_no_error(live):
    log = Path(live.stack.hbserver.log.name).read_text(errors="replace")  # its own offset: the server writes on
    errors = [line for line in log.splitlines()
              if '"level":"error"' in line or '"level":"critical"' in line or "Traceback" in line]
    assert errors == []
