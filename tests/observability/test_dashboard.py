"""deploy/grafana/hbserver-dashboard.json: importable Grafana JSON on a `datasource` variable, with a
panel for each family issue 17 names. test_prometheus_live.py evaluates every query against a real
Prometheus; these checks need none."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from tests.observability.stack import DASHBOARD, dashboard_panels, dashboard_queries, substitute

DOCUMENT = json.loads(DASHBOARD.read_text())
PANELS = dashboard_panels()
QUERIES = dashboard_queries()
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
# Issue 17's dashboard areas, each with the metrics its panels must show.
AREAS = {
    "traffic": ["hbserver_http_requests", "hbserver_in_flight_requests", "hbserver_connections_opened",
                "hbserver_connections_closed", "hbserver_connections_error", "hbserver_request_size_bytes_bucket"],
    "errors": ["hbserver_internal_errors", "hbserver_client_disconnects"],
    "latency": ["hbserver_http_request_time_seconds_bucket", "hbserver_request_time_seconds_bucket"],
    "auctions": ["hbserver_requests", "hbserver_impressions_requests", "hbserver_requests_without_cookie",
                 "hbserver_tmax_timeout", "hbserver_account_requests"],
    "adapters": ["hbserver_adapter_requests", "hbserver_adapter_bids", "hbserver_adapter_errors",
                 "hbserver_adapter_request_time_seconds_bucket", "hbserver_adapter_prices_bucket",
                 "hbserver_adapter_connection_created", "hbserver_adapter_connection_reused",
                 "hbserver_adapter_connection_wait_bucket", "hbserver_adapter_panics"],
    "cache": ["hbserver_prebidcache_write_time_seconds_bucket", "hbserver_prebidcache_write_time_seconds_count",
              "hbserver_cache_puts", "hbserver_cache_gets"],
    "syncs": ["hbserver_cookie_sync_requests", "hbserver_syncer_requests", "hbserver_setuid_requests",
              "hbserver_syncer_sets", "hbserver_uids_cookie_size_bytes_bucket"],
    "privacy": ["hbserver_privacy_tcf", "hbserver_privacy_ccpa", "hbserver_privacy_coppa", "hbserver_privacy_lmt",
                "hbserver_adapter_gdpr_requests_blocked", "hbserver_adapter_buyeruids_scrubbed"],
    "runtime": ["hbserver_workers", "hbserver_worker_restarts", "hbserver_process_resident_memory_bytes",
                "hbserver_process_cpu_seconds", "hbserver_process_open_fds", "hbserver_gc_collections",
                "hbserver_event_loop_lag_seconds_bucket"],
    "analytics and currency": ["hbserver_analytics_events", "hbserver_analytics_dropped_events",
                               "hbserver_currency_rates_age_seconds", "hbserver_currency_fetch_errors"],
}
METRIC = re.compile(r"\b(hbserver_[a-z0-9_]+)\b")


def metrics_shown() -> set[str]:
    return {name for query in QUERIES for name in METRIC.findall(query.expr)}


def test_the_dashboard_is_grafana_json_on_a_datasource_variable():
    assert DOCUMENT["uid"] and DOCUMENT["title"] and isinstance(DOCUMENT["schemaVersion"], int)
    variables = {v["name"]: v for v in DOCUMENT["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    assert variables["instance"]["allValue"] == ".*"
    ids = [panel["id"] for panel in DOCUMENT["panels"]]
    assert len(ids) == len(set(ids)), "duplicate panel ids"
    for panel in PANELS:
        assert panel["datasource"] == DATASOURCE, panel["title"]
        assert panel["targets"], panel["title"]
        ref_ids = [target["refId"] for target in panel["targets"]]
        assert len(ref_ids) == len(set(ref_ids)), panel["title"]
        for target in panel["targets"]:
            assert target["datasource"] == DATASOURCE, panel["title"]
    titles = [panel["title"] for panel in PANELS]
    assert len(titles) == len(set(titles)), "duplicate panel titles"


def test_panels_fit_the_grid_without_overlapping():
    taken: set[tuple[int, int]] = set()
    for panel in DOCUMENT["panels"]:
        grid = panel["gridPos"]
        assert 0 <= grid["x"] and grid["x"] + grid["w"] <= 24, panel["title"]
        cells = {(x, y) for x in range(grid["x"], grid["x"] + grid["w"])
                 for y in range(grid["y"], grid["y"] + grid["h"])}
        assert not cells & taken, f"{panel['title']} overlaps another panel"
        taken |= cells


@pytest.mark.parametrize("area", AREAS)
def test_each_area_of_the_issue_has_its_metrics_on_the_dashboard(area):
    assert set(AREAS[area]) - metrics_shown() == set()


@pytest.mark.parametrize("query", QUERIES, ids=[q.id for q in QUERIES])
def test_every_query_uses_the_default_prefix_and_the_instance_filter(query):
    names = METRIC.findall(query.expr)
    assert names, "a query without an hbserver_ metric"
    selectors = re.findall(r"\bhbserver_[a-z0-9_]+(\{[^}]*\})?", query.expr)
    assert all('instance=~"$instance"' in selector for selector in selectors), query.expr
    assert "$" not in substitute(query.expr), "a variable the tests do not substitute"


def test_compose_grafana_provisions_this_dashboard_on_the_compose_prometheus():
    deploy = DASHBOARD.parents[1]
    services = yaml.safe_load((deploy / "docker-compose.yml").read_text())["services"]
    mounts = dict(volume.rsplit(":", 1)[0].split(":") for volume in services["grafana"]["volumes"])
    assert (deploy / "grafana" / "provisioning").is_dir()
    assert mounts["./grafana/provisioning"] == "/etc/grafana/provisioning"
    dashboard_target = mounts["./grafana/" + DASHBOARD.name]
    providers = yaml.safe_load((deploy / "grafana/provisioning/dashboards/hbserver.yml").read_text())["providers"]
    assert [p["options"]["path"] for p in providers] == [dashboard_target.rsplit("/", 1)[0]]
    [source] = yaml.safe_load((deploy / "grafana/provisioning/datasources/prometheus.yml").read_text())["datasources"]
    assert source["type"] == "prometheus" and source["isDefault"] is True
    prometheus_port = services["prometheus"]["ports"][0].split(":")[1]
    assert source["url"] == f"http://prometheus:{prometheus_port}"
