"""Results: the JSON report, the PNG chart and the summary table."""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.scenarios import HELLO, Scenario
from bench.wrk import WrkResult

STATUS_COLOURS = {
    "BASELINE": "#7f7f7f",
    "PASS": "#2ca02c",
    "FAIL": "#d62728",
    "INFO": "#1f77b4",
    "N/A": "#bcbd22",
    "ERROR": "#ff7f0e",
}


@dataclass(frozen=True)
class RunOutcome:
    """One measured run of one scenario: the wrk result, or why there is none."""

    round: int
    result: WrkResult | None
    error: str | None = None
    # Steal-proof view of the same run: the server's own CPU time, and the machine's steal time
    # (what the hypervisor gave to other guests), both over the measured run.
    server_cpu_s: float | None = None
    steal_s: float | None = None
    cpus: int = 1

    @property
    def ok(self) -> bool:
        return self.error is None and self.result is not None and self.result.ok

    @property
    def cpu_us_per_request(self) -> float | None:
        """The server's CPU time per completed request, in µs (None without a measurement)."""
        if self.server_cpu_s is None or self.result is None or self.result.requests <= 0:
            return None
        return self.server_cpu_s * 1e6 / self.result.requests

    @property
    def steal_percent(self) -> float | None:
        """The machine's steal time during the run, as a share of all its CPUs' time."""
        if self.steal_s is None or self.result is None or self.result.duration_ms <= 0:
            return None
        return 100 * self.steal_s / (self.result.duration_ms / 1000 * max(self.cpus, 1))

    def to_dict(self) -> dict[str, Any]:
        error = self.error
        if error is None and self.result is not None and not self.result.ok:
            error = _describe_failures(self.result)
        measured = self.result.to_dict() if self.result is not None else {}
        return {
            "round": self.round,
            **measured,
            "server_cpu_us_per_request": self.cpu_us_per_request,
            "steal_percent": self.steal_percent,
            "ok": self.ok,
            "error": error,
        }


def _cpu_ratio(outcome: RunOutcome, reference: RunOutcome) -> float | None:
    """Hello-world's CPU time per request over the scenario's, in the same round."""
    mine, theirs = outcome.cpu_us_per_request, reference.cpu_us_per_request
    if not mine or not theirs:
        return None
    return round(theirs / mine, 4)


def _describe_failures(result: WrkResult) -> str:
    if result.requests == 0:
        return "no requests completed"
    parts = []
    if result.non_2xx_3xx:
        parts.append(f"{result.non_2xx_3xx} non-2xx/3xx responses")
    sockets = result.socket_errors
    if sockets.total:
        parts.append(
            f"socket errors: connect {sockets.connect}, read {sockets.read}, "
            f"write {sockets.write}, timeout {sockets.timeout}"
        )
    return "; ".join(parts)


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def median_cpu_us(outcomes: Sequence[RunOutcome]) -> float | None:
    """The median over rounds of the server's CPU time per request (µs), of the rounds that have one."""
    return _median([cpu for o in outcomes if (cpu := o.cpu_us_per_request) is not None])


def within(value: float | None, reference: float | None, tolerance: float) -> bool | None:
    """``value`` within ``tolerance`` (a fraction) of ``reference``, either way; None without both."""
    if value is None or not reference:
        return None
    return abs(value - reference) <= tolerance * reference


def at_most(value: float | None, reference: float | None, factor: float) -> bool | None:
    """``value`` at most ``factor`` times ``reference``; None without both."""
    if value is None or not reference:
        return None
    return value <= factor * reference


def summarize(
    scenario: Scenario,
    outcomes: Sequence[RunOutcome],
    hello: Mapping[int, RunOutcome] | None,
    peers_cpu_us: Mapping[str, float | None] | None = None,
) -> dict[str, Any]:
    """A scenario's entry in the report. ``hello`` maps rounds to hello-world runs (None for hello);
    ``peers_cpu_us`` the other scenarios' median CPU µs per request (for ``cpu_within``)."""
    results = [o.result for o in outcomes if o.result is not None]
    median_rps = _median([r.requests_per_sec for r in results])
    median_p99 = _median([r.p99_ms for r in results])
    hello_rps = _median([o.result.requests_per_sec for o in (hello or {}).values() if o.result is not None])
    rounds = _round_entries(scenario, outcomes, hello)
    ok = bool(outcomes) and all(o.ok for o in outcomes)
    ratio = _ratio(median_rps, median_rps if hello is None else hello_rps)
    cpu_ratios = [r["cpu_ratio"] for r in rounds if r.get("cpu_ratio") is not None]
    cpu_ratio = 1.0 if hello is None and any(o.cpu_us_per_request for o in outcomes) else _median(cpu_ratios)
    cpu_us = median_cpu_us(outcomes)
    ratio_met = None if scenario.target_ratio is None or ratio is None else ratio >= scenario.target_ratio
    cpu_target = scenario.target_cpu_ratio
    cpu_ratio_met = None if cpu_target is None or cpu_ratio is None else cpu_ratio >= cpu_target
    p99_met = None if scenario.p99_max_ms is None or median_p99 is None else median_p99 <= scenario.p99_max_ms
    reference_cpu_us, cpu_within_met, at_most_reference_us, cpu_at_most_met = _against_peers(
        scenario, cpu_us, peers_cpu_us or {}
    )
    target_met = _target_met(scenario, ratio_met, cpu_ratio_met, p99_met, cpu_within_met, cpu_at_most_met)
    return {
        **_described(scenario),
        "rounds": rounds,
        "median": {
            "requests_per_sec": median_rps,
            "p50_ms": _median([r.p50_ms for r in results]),
            "p99_ms": median_p99,
            "server_cpu_us_per_request": cpu_us,
        },
        "ratio": ratio,
        # requests per CPU-second relative to hello-world's (median of the rounds); unlike req/s it
        # does not move with time stolen by the hypervisor (judged when target_cpu_ratio is set)
        "cpu_ratio": cpu_ratio,
        "ratio_met": ratio_met,
        "cpu_ratio_met": cpu_ratio_met,
        "p99_met": p99_met,
        # the cpu_within scenario's median CPU µs per request, and whether this one is within it
        "cpu_within_reference_us": reference_cpu_us,
        "cpu_within_met": cpu_within_met,
        # cpu_at_most: (scenario, factor); that scenario's median CPU µs per request, and whether this one is
        # at most the factor times it
        "cpu_at_most": list(scenario.cpu_at_most) if scenario.cpu_at_most is not None else None,
        "cpu_at_most_reference_us": at_most_reference_us,
        "cpu_at_most_met": cpu_at_most_met,
        "target_met": target_met,
        "errors": sum(r.errors for r in results),
        "failed_rounds": sum(1 for o in outcomes if not o.ok),
        "ok": ok,
        "status": _status(scenario, ok, hello is None, target_met),
    }


def _target_met(
    scenario: Scenario, ratio_met: bool | None, cpu_ratio_met: bool | None, p99_met: bool | None,
    cpu_within_met: bool | None, cpu_at_most_met: bool | None,
) -> bool | None:
    """:func:`combine_criteria` over the criteria the scenario sets."""
    checks = [
        met
        for met, criterion in ((ratio_met, scenario.target_ratio), (cpu_ratio_met, scenario.target_cpu_ratio),
                               (p99_met, scenario.p99_max_ms), (cpu_within_met, scenario.cpu_within),
                               (cpu_at_most_met, scenario.cpu_at_most))
        if criterion is not None
    ]  # fmt: skip
    return combine_criteria(checks)


def _against_peers(
    scenario: Scenario, cpu_us: float | None, peers_cpu_us: Mapping[str, float | None]
) -> tuple[float | None, bool | None, float | None, bool | None]:
    """The ``cpu_within`` peer's median CPU µs and whether this one is within it; the same for
    ``cpu_at_most`` (Nones for a criterion the scenario does not set)."""
    within_us = within_met = at_most_us = at_most_met = None
    if scenario.cpu_within is not None:
        within_us = peers_cpu_us.get(scenario.cpu_within[0])
        within_met = within(cpu_us, within_us, scenario.cpu_within[1])
    if scenario.cpu_at_most is not None:
        at_most_us = peers_cpu_us.get(scenario.cpu_at_most[0])
        at_most_met = at_most(cpu_us, at_most_us, scenario.cpu_at_most[1])
    return within_us, within_met, at_most_us, at_most_met


def _round_entries(
    scenario: Scenario, outcomes: Sequence[RunOutcome], hello: Mapping[int, RunOutcome] | None
) -> list[dict[str, Any]]:
    """Each round's entry, with its ratios to the same round's hello-world and its p99 judged."""
    rounds = []
    for outcome in outcomes:
        entry = outcome.to_dict()
        reference = (hello or {}).get(outcome.round)
        if hello is not None and outcome.result and reference and reference.result:
            entry["ratio"] = _ratio(outcome.result.requests_per_sec, reference.result.requests_per_sec)
            entry["cpu_ratio"] = _cpu_ratio(outcome, reference)
        if scenario.p99_max_ms is not None and outcome.result is not None:
            entry["p99_met"] = outcome.result.p99_ms <= scenario.p99_max_ms
        rounds.append(entry)
    return rounds


def _status(scenario: Scenario, ok: bool, baseline: bool, target_met: bool | None) -> str:
    if not ok:
        return "ERROR"
    if baseline:
        return "BASELINE"
    if not scenario.judged:
        return "INFO"
    if target_met is None:
        return "N/A"
    return "PASS" if target_met else "FAIL"


def _described(scenario: Scenario) -> dict[str, Any]:
    """What the report says of the scenario itself (before its rounds)."""
    return {
        "name": scenario.name,
        "description": scenario.description,
        "server": scenario.server,
        "method": scenario.method,
        "path": scenario.path,
        "body_file": scenario.body_file,
        "lua_script": scenario.lua_script,
        "config": dict(scenario.config) if scenario.config is not None else None,
        "connections": scenario.connections,
        "target_ratio": scenario.target_ratio,
        "target_cpu_ratio": scenario.target_cpu_ratio,
        "p99_max_ms": scenario.p99_max_ms,
        "cpu_within": list(scenario.cpu_within) if scenario.cpu_within is not None else None,
        "workers": scenario.workers,
        "limit_of": list(scenario.limit_of),
    }


def combine_criteria(checks: Sequence[bool | None]) -> bool | None:
    """All criteria met: False if any failed, None if none apply or one could not be judged."""
    if False in checks:
        return False
    if not checks or None in checks:
        return None
    return True


def _ratio(value: float | None, reference: float | None) -> float | None:
    if value is None or not reference:
        return None
    return round(value / reference, 4)


def build_report(
    settings: Mapping[str, Any],
    machine: Mapping[str, Any],
    scenarios: Sequence[Scenario],
    outcomes: Mapping[str, Sequence[RunOutcome]],
) -> dict[str, Any]:
    """The whole report; ``scenarios`` excludes hello-world, which is always first in the output."""
    hello_runs = {o.round: o for o in outcomes.get(HELLO.name, [])}
    peers = {s.name: median_cpu_us(outcomes.get(s.name, [])) for s in scenarios}
    entries = [summarize(HELLO, outcomes.get(HELLO.name, []), None)]
    entries += [summarize(s, outcomes.get(s.name, []), hello_runs, peers) for s in scenarios]
    _add_ceilings(entries)
    ok = all(entry["ok"] for entry in entries)
    targeted = [entry for entry in entries if any(entry[key] is not None for key in _CRITERIA)]
    return {
        "schema": 1,
        "baseline": HELLO.name,
        "settings": dict(settings),
        "machine": dict(machine),
        "scenarios": entries,
        "targets": _limits(targeted, "target_ratio"),
        "cpu_targets": _limits(targeted, "target_cpu_ratio"),
        "latency_targets": _limits(targeted, "p99_max_ms"),
        "cpu_within": _limits(targeted, "cpu_within"),
        "cpu_at_most": _limits(targeted, "cpu_at_most"),
        "summary": {
            "ok": ok,
            "targets_met": all(entry["target_met"] for entry in targeted),
            "failed": [entry["name"] for entry in entries if not entry["ok"]],
            "below_target": [entry["name"] for entry in targeted if entry["target_met"] is False],
            "exit_status": 0 if ok else 1,
        },
    }


_CRITERIA = ("target_ratio", "target_cpu_ratio", "p99_max_ms", "cpu_within", "cpu_at_most")


def _limits(entries: Sequence[Mapping[str, Any]], key: str) -> dict[str, Any]:
    return {entry["name"]: entry[key] for entry in entries if entry[key] is not None}


def _add_ceilings(entries: Sequence[dict[str, Any]]) -> None:
    """Give each scenario a limit server bounds its ``ceiling``: that server's CPU ratio, and the
    share of it the scenario reaches (its own CPU ratio over the ceiling)."""
    by_name = {entry["name"]: entry for entry in entries}
    for limit in entries:
        for name in limit.get("limit_of") or ():
            bounded = by_name.get(name)
            if bounded is None:
                continue
            own, ceiling = bounded["cpu_ratio"], limit["cpu_ratio"]
            share = round(own / ceiling, 4) if own is not None and ceiling else None
            bounded["ceiling"] = {"scenario": limit["name"], "cpu_ratio": ceiling, "share": share}


def write_json(report: Mapping[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n")


# --- the table ----------------------------------------------------------------------------


def _fmt(value: float | None, spec: str) -> str:
    """``value`` formatted with ``spec`` ("10.1f"), or a dash padded to the same width."""
    return format(value, spec) if value is not None else "-".rjust(int(spec.split(".")[0] or 0))


def format_table(report: Mapping[str, Any]) -> str:
    """The summary: one line per scenario (``target``: the req/s ratio's, ``cpu min``: the CPU ratio's),
    the ceilings and CPU comparisons, then the per-round req/s and any errors."""
    default_connections = report["settings"]["connections"]
    header = (
        f"{'scenario':<20} {'conns':>5} {'req/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'ratio':>6} "
        f"{'target':>6} {'p99 max':>8} {'result':>8} {'errors':>7} {'cpu':>6} {'cpu min':>7}"
    )
    lines = [header, "-" * len(header)]
    for entry in report["scenarios"]:
        median = entry["median"]
        connections = entry.get("connections") or default_connections
        lines.append(
            f"{entry['name']:<20} {connections:>5} {_fmt(median['requests_per_sec'], '10.1f')} "
            f"{_fmt(median['p50_ms'], '8.2f')} {_fmt(median['p99_ms'], '8.2f')} "
            f"{_fmt(entry['ratio'], '6.2f')} {_fmt(entry['target_ratio'], '6.2f')} "
            f"{_fmt(entry.get('p99_max_ms'), '8.1f')} {entry['status']:>8} {entry['errors']:>7} "
            f"{_fmt(entry.get('cpu_ratio'), '6.2f')} {_fmt(entry.get('target_cpu_ratio'), '7.2f')}"
        )
    comparisons = _comparison_lines(report["scenarios"])
    if comparisons:
        lines.append("")
        lines.extend(comparisons)
    lines.append("")
    lines.append(
        "per round req/s (ratio to hello-world in the same round; p99 where there is a p99 limit; cpu: the "
        "ratio of CPU time per request, which steal does not move; steal: the machine's, during the run):"
    )
    for entry in report["scenarios"]:
        cells = []
        for run in entry["rounds"]:
            rps = run.get("requests_per_sec")
            cell = "error" if rps is None else f"{rps:.1f}"
            if "ratio" in run and run["ratio"] is not None:
                cell += f" ({run['ratio']:.2f})"
            if "p99_met" in run:
                cell += f" p99 {run['p99_ms']:.1f} ms"
            if run.get("cpu_ratio") is not None:
                cell += f" cpu {run['cpu_ratio']:.2f}"
            if run.get("steal_percent") is not None:
                cell += f" steal {run['steal_percent']:.0f}%"
            cells.append(cell)
        lines.append(f"  {entry['name']:<18} " + "  ".join(cells))
    problems = [(e["name"], r) for e in report["scenarios"] for r in e["rounds"] if r.get("error")]
    if problems:
        lines.append("")
        lines.append("errors:")
        for name, run in problems:
            first, *rest = str(run["error"]).splitlines() or [""]
            lines.append(f"  {name} round {run['round']}: {first}")
            lines.extend(f"      {line}" for line in rest)
    return "\n".join(lines)


# the criteria comparing a scenario's CPU per request with another's: the key, and (own, theirs, bound) ->
# (the comparison, the criterion) as the table says them
_PEER_CRITERIA: tuple[tuple[str, Callable[[Any, Any, float], tuple[str, str]]], ...] = (
    ("cpu_within", lambda own, theirs, x: (
        f"{100 * (own / theirs - 1):+.1f} %" if own and theirs else "", f"within ±{100 * x:g} %")),
    ("cpu_at_most", lambda own, theirs, x: (f"{own / theirs:.2f}x" if own and theirs else "", f"at most {x:g}x")),
)


def _comparison_lines(entries: Sequence[Mapping[str, Any]]) -> list[str]:
    """A line per scenario with a ceiling (limit server) or a ``cpu_within`` criterion."""
    lines = []
    for entry in entries:
        ceiling = entry.get("ceiling")
        if ceiling is not None:
            share = "-" if ceiling["share"] is None else f"{100 * ceiling['share']:.0f} %"
            lines.append(
                f"{entry['name']} cpu {_fmt(entry['cpu_ratio'], '.2f')} of a ceiling "
                f"{_fmt(ceiling['cpu_ratio'], '.2f')} ({ceiling['scenario']}): {share}"
            )
    for key, describe in _PEER_CRITERIA:
        for entry in entries:
            if entry.get(key) is None:
                continue
            reference, bound = entry[key]
            own, theirs = entry["median"].get("server_cpu_us_per_request"), entry.get(f"{key}_reference_us")
            change, criterion = describe(own, theirs, bound)
            verdict = {True: "met", False: "NOT MET", None: "not judged"}[entry.get(f"{key}_met")]
            lines.append(
                f"{entry['name']} server CPU {_fmt(own, '.1f')} µs/request vs {reference} {_fmt(theirs, '.1f')}: "
                f"{'-' if own is None or not theirs else change} ({criterion}: {verdict})"
            )
    return lines


# --- the chart ----------------------------------------------------------------------------


def write_chart(report: Mapping[str, Any], path: Path) -> None:
    """Median req/s per scenario with the ratio on each bar, and p50/p99 latency beside it."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # Agg: no display needed
    from matplotlib.figure import Figure

    entries = report["scenarios"]
    names = [entry["name"] for entry in entries]
    positions = list(range(len(entries)))
    figure = Figure(figsize=(12, 5.8), layout="constrained")
    FigureCanvasAgg(figure)
    throughput, latency = figure.subplots(1, 2, gridspec_kw={"width_ratios": [1.25, 1]})

    medians = [entry["median"]["requests_per_sec"] or 0.0 for entry in entries]
    colours = [STATUS_COLOURS.get(entry["status"], "#1f77b4") for entry in entries]
    throughput.bar(positions, medians, color=colours, width=0.6)
    hello_rps = medians[0] if entries and entries[0]["name"] == HELLO.name else 0.0
    tops = []
    for x, entry, height in zip(positions, entries, medians, strict=True):
        per_round = [r["requests_per_sec"] for r in entry["rounds"] if r.get("requests_per_sec") is not None]
        throughput.scatter([x] * len(per_round), per_round, color="black", s=12, zorder=3)
        tops.append(max([height, *per_round]))
        if entry["target_ratio"] is not None and hello_rps:
            goal = entry["target_ratio"] * hello_rps
            throughput.hlines(goal, x - 0.36, x + 0.36, colors="black", linestyles="dashed", linewidth=1)
            tops[-1] = max(tops[-1], goal)
    top = max([*tops, 1.0])
    for x, entry, height in zip(positions, entries, tops, strict=True):
        throughput.text(x, height + top * 0.02, _bar_label(entry), ha="center", va="bottom", fontsize=9)
    throughput.set_ylim(0, top * 1.3)
    throughput.set_xticks(positions, names, rotation=15)
    throughput.set_ylabel("requests/s (median; dots: rounds; dashes: target)")
    throughput.set_title("Throughput, ratio to hello-world")
    throughput.grid(axis="y", alpha=0.3)

    _draw_latency(latency, entries, positions)

    settings, machine = report["settings"], report["machine"]
    versions = machine["versions"]
    overrides = "".join(f", {e['name']} -c{e['connections']}" for e in entries if e.get("connections"))
    workers = "".join(f", {e['name']} {e['workers']}" for e in entries if (e.get("workers") or 1) > 1)
    figure.suptitle(
        f"hbserver benchmark {machine['date']}: {settings['rounds']} round(s) x {settings['duration_s']}s, "
        f"wrk -t1 -c{settings['connections']}{overrides}, hbserver 1 worker{workers}\n"
        f"{machine['cpu_model']}, nproc {machine['nproc']}; {settings['pinning']['note']}; "
        f"Python {machine['python']}, aiohttp {versions.get('aiohttp')}, uvloop {versions.get('uvloop')}",
        fontsize=10,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)


def _draw_latency(axes: Any, entries: Sequence[Mapping[str, Any]], positions: Sequence[int]) -> None:
    """p50 and p99 bars per scenario, dashes at p99 limits; a log scale when they span decades."""
    width = 0.38
    p50 = [entry["median"]["p50_ms"] or 0.0 for entry in entries]
    p99 = [entry["median"]["p99_ms"] or 0.0 for entry in entries]
    bars50 = axes.bar([x - width / 2 for x in positions], p50, width, label="p50", color="#9ecae1")
    bars99 = axes.bar([x + width / 2 for x in positions], p99, width, label="p99", color="#3182bd")
    axes.bar_label(bars50, fmt="%.2f", fontsize=8)
    axes.bar_label(bars99, fmt="%.2f", fontsize=8)
    limits = [(x, entry["p99_max_ms"]) for x, entry in zip(positions, entries, strict=True) if entry.get("p99_max_ms")]
    for x, limit in limits:
        axes.hlines(limit, x, x + width, colors="#d62728", linestyles="dashed", linewidth=1.5)
    top = max([*p99, *p50, *(limit for _, limit in limits), 0.1])
    bottom = min([value for value in [*p50, *p99] if value > 0], default=top)
    if top / bottom > 50:
        axes.set_yscale("log")
        axes.set_ylim(bottom / 2, top * 3)
    else:
        axes.set_ylim(0, top * 1.15)
    axes.set_xticks(positions, [entry["name"] for entry in entries], rotation=15)
    axes.set_ylabel("latency, ms (median over rounds; dashes: p99 limit)")
    axes.set_title("Latency")
    axes.legend()
    axes.grid(axis="y", alpha=0.3)


def _bar_label(entry: Mapping[str, Any]) -> str:
    ratio = entry["ratio"]
    if entry["name"] == HELLO.name:
        text = "1.00x\nreference"
    else:
        text = "-" if ratio is None else f"{ratio:.2f}x"
        if entry["target_ratio"] is not None:
            text += f"\ntarget {entry['target_ratio']:.2f}"
        if entry.get("target_cpu_ratio") is not None:
            cpu = "-" if entry.get("cpu_ratio") is None else f"{entry['cpu_ratio']:.2f}"
            text += f"\ncpu {cpu} (min {entry['target_cpu_ratio']:.2f})"
        if entry.get("p99_max_ms") is not None:
            text += f"\np99 <= {entry['p99_max_ms']:g} ms"
    if entry["status"] not in ("BASELINE", "INFO"):
        text += f"\n{entry['status']}"
    return text
