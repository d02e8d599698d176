"""bench.overload: scenario names, each scenario's tmax and bid marker, the verdicts, the summary and
the table (the server runs themselves are bench.run's)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from bench import overload
from bench.machine import Pinning
from bench.overload import (
    add_to_summary,
    bid_marker,
    entry_of,
    format_results,
    judge,
    measure_all,
    resolve_names,
    shed_count,
    tmax_ms,
    with_max_wait,
)
from bench.report import RunOutcome
from bench.run import Settings
from bench.scenarios import SCENARIOS, Scenario
from bench.wrk import WrkResult

BY_NAME = {scenario.name: scenario for scenario in SCENARIOS}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, ["amp_varied", "auction_varied"]),
        ("", []),
        ("amp_varied", ["amp_varied"]),
        (" auction_varied , amp ", ["auction_varied", "amp"]),
    ],
)
def test_overload_scenario_names(raw: str | None, expected: list[str]) -> None:
    assert resolve_names(raw) == expected


def test_unknown_overload_scenario_is_refused() -> None:
    with pytest.raises(ValueError, match="BENCH_OVERLOAD"):
        resolve_names("nope")


@pytest.mark.parametrize(
    ("name", "tmax", "marker"),
    [
        ("amp_varied", 500, "hb_pb"),  # timeout=500 in the query
        ("amp_mixed", 500, "hb_pb"),
        ("auction_varied", 1000, '"seatbid":[{'),  # tmax 1000 in the body
        ("event_varied", None, None),
    ],
)
def test_tmax_and_bid_marker_of_the_scenarios(name: str, tmax: int | None, marker: str | None) -> None:
    assert tmax_ms(BY_NAME[name]) == tmax
    assert bid_marker(BY_NAME[name]) == marker


@pytest.mark.parametrize(
    ("path", "tmax"),
    [("/openrtb2/amp?tag_id=t", 1000), ("/openrtb2/amp?tag_id=t&timeout=0", 1000), ("/openrtb2/amp?timeout=300", 300)],
)
def test_amp_tmax_defaults(path: str, tmax: int) -> None:
    assert tmax_ms(Scenario(name="a", path=path)) == tmax


@pytest.mark.parametrize(
    ("p99_ms", "errors", "tmax", "p99_met", "errors_met"),
    [
        (400.0, 0, 500, True, True),
        (550.0, 0, 500, True, True),  # tmax + 50: still in time
        (550.1, 0, 500, False, True),
        (563.0, 0, 500, False, True),  # issue 37's figure before shedding
        (900.0, 3, 1000, True, False),
        (None, 0, 500, False, True),  # nothing answered
    ],
)
def test_judge(p99_ms: float | None, errors: int, tmax: int, p99_met: bool, errors_met: bool) -> None:
    verdict = judge(p99_ms, errors, tmax)
    assert (verdict["p99_met"], verdict["errors_met"]) == (p99_met, errors_met)
    assert verdict["target_met"] == (p99_met and errors_met)
    assert verdict["p99_max_ms"] == tmax + overload.SLACK_MS


def _result(p99: float, with_marker: int | None = 600, errors: int = 0) -> dict[str, Any]:
    return {
        "offered_rate": 2000.0, "achieved_rate": 1990.0, "duration_s": 10.0, "scheduled": 20000,
        "answered": 20000 - errors, "latency_ms": {"p50": 50.0, "p90": 300.0, "p99": p99, "max": 700.0},
        "with_marker": with_marker, "error_count": errors, "non_2xx": 0,
        "errors": {"connect": 0, "read": 0, "parse": 0, "timeout": errors, "total": errors}, "flags": [],
    }


def test_entry_of_a_run() -> None:
    entry = entry_of(_result(480.0, with_marker=12000), 1000.0, 500, 8000.0, 10.0)
    assert entry["bid_share"] == 0.6
    assert entry["shed"] == 8000.0
    assert entry["server_cpu_us_per_request"] == 500.0
    assert entry["target_met"] is True
    assert entry_of(_result(480.0, with_marker=None), 1000.0, 500, None, None)["bid_share"] is None


def test_missed_targets_are_in_the_summary() -> None:
    summary: dict[str, Any] = {"targets_met": True, "below_target": ["amp_full"]}
    results = {
        "amp_varied": entry_of(_result(700.0), 1000.0, 500, 0.0, None),  # late
        "auction_varied": entry_of(_result(900.0), 1000.0, 1000, 0.0, None),  # in time
        "amp_mixed": {"skipped": "did not run in the rounds"},
        "broken": {"error": "ProcessError: x", "target_met": False},
    }
    add_to_summary(summary, results)
    assert summary == {"targets_met": False, "below_target": ["amp_full", "overload:amp_varied", "overload:broken"]}
    met: dict[str, Any] = {"targets_met": True, "below_target": []}
    add_to_summary(met, {"auction_varied": results["auction_varied"]})
    assert met == {"targets_met": True, "below_target": []}


def test_results_table() -> None:
    text = format_results({
        "amp_varied": entry_of(_result(480.0, with_marker=12000), 1000.0, 500, 8000.0, None),
        "auction_varied": entry_of(_result(1200.0, errors=2), 800.0, 1000, 100.0, None),
        "amp_mixed": {"skipped": "did not run in the rounds"},
    })
    lines = text.splitlines()
    assert "2x" in lines[0] and "tmax + 50" in lines[0]
    assert "p99 480.0 ms" in lines[1] and "with bids 60.0 %" in lines[1] and lines[1].endswith(": met")
    assert "errors 2: NOT MET" in lines[2]
    assert "did not run" in lines[3]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (b"", 0.0),
        (b'hbserver_overload_shed_requests{reason="queue",request_type="amp"} 12.0\n'
         b'hbserver_overload_shed_requests{reason="deadline",request_type="amp"} 3.0\n'
         b"hbserver_requests_total 99.0\n", 15.0),
        (b'pbs_x_overload_shed_requests_total{reason="queue",request_type="amp"} 2.0\n', 2.0),
    ],
)
def test_shed_count_from_the_exposition(text: bytes, expected: float) -> None:
    assert shed_count(text) == expected


@pytest.mark.parametrize(("max_wait", "env"), [("", None), ("0", "0"), ("250", "250")])
def test_the_max_wait_reaches_the_server_environment(max_wait: str, env: str | None) -> None:
    scenario = with_max_wait(BY_NAME["amp_varied"], max_wait)
    assert scenario.env.get(overload.MAX_WAIT_ENV) == env


@pytest.mark.parametrize(
    ("environ", "names", "duration", "max_wait"),
    [
        ({}, None, 10, ""),
        ({"BENCH_OVERLOAD": "", "BENCH_OVERLOAD_DURATION": "3", "BENCH_OVERLOAD_MAX_WAIT_MS": "0"}, "", 3, "0"),
    ],
)
def test_overload_knobs(environ: dict[str, str], names: str | None, duration: int, max_wait: str) -> None:
    settings = Settings.from_env(environ)
    assert settings.overload == names
    assert (settings.overload_duration_s, settings.overload_max_wait_ms) == (duration, max_wait)


@pytest.mark.parametrize("raw", ["-1", "fast", "1.5"])
def test_a_bad_max_wait_knob_is_refused(raw: str) -> None:
    with pytest.raises(ValueError, match="BENCH_OVERLOAD_MAX_WAIT_MS"):
        Settings.from_env({"BENCH_OVERLOAD_MAX_WAIT_MS": raw})


def _outcome(rps: float | None) -> RunOutcome:
    if rps is None:
        return RunOutcome(1, None, "failed")
    result = WrkResult(requests_per_sec=rps, requests=int(rps * 10), duration_ms=10_000, latency_avg_ms=1,
                       latency_max_ms=2, percentiles_ms={"50": 1, "75": 1, "90": 2, "99": 2})
    return RunOutcome(1, result)


def test_scenarios_without_a_saturation_are_skipped(tmp_path: Path) -> None:
    @contextmanager
    def serve(scenario: Scenario, workdir: Path) -> Iterator[Any]:
        raise AssertionError("no server should start")
        yield  # pragma: no cover

    results = measure_all(
        ["amp_varied", "auction_varied", "event_varied"],
        {"auction_varied": [_outcome(None)], "event_varied": [_outcome(9000.0)]},
        duration_s=1, warmup_s=0, max_wait_ms="", pinning=Pinning(None, None, "none"), scratch=tmp_path,
        serve=serve,
    )
    assert "did not run" in results["amp_varied"]["skipped"]
    assert "no successful round" in results["auction_varied"]["skipped"]
    assert "not an auction or AMP" in results["event_varied"]["skipped"]
