"""deploy/prometheus/alerts.yml: promtool accepts the rules and passes their unit tests
(alerts_test.yml, a firing and a quiet case per alert), and every alert has its labels, annotations
and a RUNBOOK.md section that its runbook_url names."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.observability.stack import (
    ALERTS,
    ALERTS_TEST,
    INSTALL_HINT,
    JOB,
    PROMTOOL,
    ROOT,
    RULE_HOLD,
    RUNBOOK,
    alert_rules,
    alert_signal,
    prometheus_missing,
    write_live_rules,
)
from tests.services import require

RULES = alert_rules()
NAMES = [rule.name for rule in RULES]
ANNOTATIONS = ("summary", "description", "runbook_url")
SEVERITIES = ("critical", "warning")
# What issue 17 asks alerts for, each the metric its rule must watch.
REQUIRED = {
    "HbserverHigh5xxRatio": "hbserver_http_requests",
    "HbserverAdapterErrorRatio": "hbserver_adapter_errors",
    "HbserverAdapterTimeoutRatio": "hbserver_adapter_errors",
    "HbserverAuctionP99NearTmax": "hbserver_request_time_seconds_bucket",
    "HbserverAnalyticsDropping": "hbserver_analytics_dropped_events",
    "HbserverCacheStoreWriteErrors": "hbserver_cache_puts",
    "HbserverCacheStoreReadErrors": "hbserver_cache_gets",
    "HbserverAuctionCacheWriteFailures": "hbserver_prebidcache_write_time_seconds_count",
    "HbserverWorkerRestarts": "hbserver_worker_restarts",
    "HbserverCurrencyRatesStale": "hbserver_currency_rates_age_seconds",
    "HbserverTargetDown": "up",
}


def promtool(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    require(prometheus_missing() is None, str(prometheus_missing()), INSTALL_HINT)
    return subprocess.run([str(PROMTOOL), *args], cwd=cwd, capture_output=True, text=True, timeout=60)


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def runbook_sections() -> dict[str, str]:
    """Anchor -> the text of each ``##`` section of RUNBOOK.md."""
    sections: dict[str, str] = {}
    current = None
    for line in RUNBOOK.read_text().splitlines():
        if line.startswith("## "):
            current = github_anchor(line[3:])
            sections[current] = ""
        elif current is not None:
            sections[current] += line + "\n"
    return sections


def test_promtool_check_rules():
    done = promtool("check", "rules", str(ALERTS))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(RULES)} rules found" in done.stdout


def test_promtool_test_rules():
    done = promtool("test", "rules", ALERTS_TEST.name, cwd=ALERTS_TEST.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


@pytest.mark.parametrize(("change", "old", "new"), [
    ("a looser 5xx threshold", "> 0.01\n", "> 0.2\n"),
    ("timeouts counted as adapter errors", 'adapter_error!~"timeout|tmaxtimeout"', 'adapter_error!=""'),
    ("a misspelt metric", "hbserver_currency_rates_age_seconds", "hbserver_currency_rate_age_seconds"),
    ("a longer hold for target down", "== 0\n        for: 2m", "== 0\n        for: 10m"),
])
def test_the_unit_tests_catch_a_changed_rule(tmp_path, change, old, new):
    text = ALERTS.read_text()
    assert text.count(old) >= 1, change
    (tmp_path / "alerts.yml").write_text(text.replace(old, new))
    shutil.copy(ALERTS_TEST, tmp_path / ALERTS_TEST.name)
    done = promtool("test", "rules", ALERTS_TEST.name, cwd=tmp_path)
    assert done.returncode != 0, f"{change}: promtool test rules still passes\n{done.stdout}"


def test_every_alert_has_a_firing_and_a_quiet_case():
    """A firing case: a test expecting the alert. A quiet case: a test group in which the alert is
    evaluated and never expected (not just an evaluation before its `for:` has passed)."""
    tests = yaml.safe_load(ALERTS_TEST.read_text())["tests"]
    fires: set[str] = set()
    quiet: set[str] = set()
    for group in tests:
        expected: dict[str, bool] = {}
        for case in group.get("alert_rule_test", []):
            expected[case["alertname"]] = expected.get(case["alertname"], False) or bool(case.get("exp_alerts"))
        fires |= {name for name, fired in expected.items() if fired}
        quiet |= {name for name, fired in expected.items() if not fired}
    assert set(NAMES) - fires == set(), "alerts without a firing case"
    assert set(NAMES) - quiet == set(), "alerts without a quiet case"
    assert (fires | quiet) - set(NAMES) == set(), "cases for alerts that do not exist"


def test_the_alerts_issue_17_asks_for_exist_and_watch_their_metric():
    by_name = {rule.name: rule for rule in RULES}
    assert set(REQUIRED) - set(by_name) == set()
    for name, metric in REQUIRED.items():
        assert re.search(rf"\b{metric}\b", by_name[name].expr), (name, metric)
    assert len(NAMES) == len(set(NAMES)), "duplicate alert names"


@pytest.mark.parametrize("rule", RULES, ids=NAMES)
def test_alert_has_for_severity_annotations_and_a_signal(rule):
    assert re.fullmatch(r"\d+[smh]", rule.hold), f"{rule.name}: `for:` missing or malformed"
    assert rule.labels.get("severity") in SEVERITIES
    assert set(ANNOTATIONS) <= set(rule.annotations)
    assert alert_signal(rule.expr)  # ends in a comparison with a number


def test_every_alert_has_a_runbook_section_its_url_names():
    sections = runbook_sections()
    for rule in RULES:
        url = rule.annotations["runbook_url"]
        path, _, anchor = url.partition("#")
        assert path == "deploy/RUNBOOK.md", url
        assert (ROOT / path).is_file()
        assert anchor == github_anchor(rule.name), (rule.name, url)
        assert anchor in sections, f"{rule.name}: RUNBOOK.md has no section #{anchor}"
        text = sections[anchor]
        for part in ("**Meaning.**", "**First checks.**", "**Likely causes.**", "**Remedies.**"):
            assert part in text, f"{rule.name}: its runbook section lacks {part}"
        assert "hbserver_" in text or "up{" in text, f"{rule.name}: its first checks name no metric"
    alert_sections = {anchor for anchor in sections if anchor.startswith("hbserver")}
    assert alert_sections == {github_anchor(name) for name in NAMES}, "runbook sections for alerts that do not exist"


@pytest.mark.parametrize(("expr", "signal"), [
    ("up == 0", "up"),
    ("rate(x[5m]) > 0.25", "rate(x[5m])"),
    ("(a or b * 0)\n/ c\n> 0.05\n", "(a or b * 0)\n/ c"),
    ("max(x) >= 86400", "max(x)"),
    ("x > bool 1e3", "x"),
    ("x < -1", "x"),
])
def test_alert_signal_strips_the_final_comparison(expr, signal):
    assert alert_signal(expr) == signal


@pytest.mark.parametrize("expr", ["rate(x[5m])", "a > b", "x > 1 and y"])
def test_alert_signal_refuses_an_expression_without_a_final_comparison(expr):
    with pytest.raises(ValueError):
        alert_signal(expr)


def test_the_live_copy_only_shortens_for(tmp_path):
    live = write_live_rules(tmp_path / "alerts-live.yml")
    rules = alert_rules(live)
    assert [rule.hold for rule in rules] == [RULE_HOLD] * len(RULES)
    assert [(r.name, r.expr, r.labels, r.annotations) for r in rules] == [
        (r.name, r.expr, r.labels, r.annotations) for r in RULES
    ]
    done = promtool("check", "rules", str(live))
    assert done.returncode == 0, done.stdout + done.stderr


def test_compose_prometheus_loads_these_rules_and_scrapes_the_admin_port():
    config_path = ROOT / "deploy" / "prometheus.yml"
    done = promtool("check", "config", str(config_path))
    assert done.returncode == 0, done.stdout + done.stderr
    config = yaml.safe_load(config_path.read_text())
    compose = yaml.safe_load((ROOT / "deploy" / "docker-compose.yml").read_text())["services"]
    admin_port = compose["hbserver"]["environment"]["HBS_ADMIN__PORT"]
    [job] = config["scrape_configs"]
    assert job["job_name"] == JOB  # HbserverTargetDown's matcher
    assert job["static_configs"] == [{"targets": [f"hbserver:{admin_port}"]}]
    # rule_files are relative to the config file, here and where compose mounts both
    mounts = dict(volume.rsplit(":", 1)[0].split(":") for volume in compose["prometheus"]["volumes"])
    assert mounts["./prometheus.yml"] == "/etc/prometheus/prometheus.yml"
    for rule_file in config["rule_files"]:
        assert (config_path.parent / rule_file).resolve() == ALERTS
        source = next(src for src, dst in mounts.items() if f"/etc/prometheus/{rule_file}".startswith(dst + "/"))
        assert (config_path.parent / source).resolve() == ALERTS.parent
