"""Prints the conformance summary table (bidder, fixtures, passed, excepted, failed, skipped)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest

_RESULTS: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    props = dict(report.user_properties)
    bidder = props.get("conformance_bidder")
    if bidder is None:
        return
    counts = _RESULTS[bidder]
    if report.when == "call":
        counts["fixtures"] += 1
        if report.passed:
            counts["passed"] += 1
            counts["excepted"] += bool(props.get("conformance_excepted"))
        elif report.failed:
            counts["failed"] += 1
        else:
            counts["skipped"] += 1
    elif report.when == "setup" and report.skipped:
        counts["fixtures"] += 1
        counts["skipped"] += 1


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _RESULTS:
        return
    columns = ("fixtures", "passed", "excepted", "failed", "skipped")
    terminalreporter.section("PBS adapter conformance")
    terminalreporter.write_line(f"{'bidder':<16}" + "".join(f"{name:>10}" for name in columns))
    totals: dict[str, int] = defaultdict(int)
    for bidder in sorted(_RESULTS):
        counts = _RESULTS[bidder]
        terminalreporter.write_line(f"{bidder:<16}" + "".join(f"{counts[name]:>10}" for name in columns))
        for name in columns:
            totals[name] += counts[name]
    terminalreporter.write_line(f"{'total':<16}" + "".join(f"{totals[name]:>10}" for name in columns))
