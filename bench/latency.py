"""Latency under constant load: p50/p99 against offered load, from the open-loop generator.

wrk is closed-loop: each connection waits for its answer before sending again, so when the server
stalls, wrk stops offering load and the queueing a real client population would see is never
measured (coordinated omission). After the wrk rounds, this stage takes each named scenario's
median saturation (its wrk req/s), starts the server again as the rounds do, warms it up, and
offers :data:`LEVELS` of that rate with :mod:`bench.openloop` (a separate process on the client
CPU), reading the server's CPU time around each level. The curves go into the JSON report
(``latency_curves``), a table and ``bench/results/latency.png``.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

from bench import procs
from bench.machine import Pinning, process_cpu_seconds
from bench.report import RunOutcome
from bench.scenarios import BENCH_DIR, SCENARIOS, Scenario

LEVELS = (0.25, 0.5, 0.75, 0.9)  # shares of the measured saturation
DEFAULT_NAMES = (("amp_full", "auction_full"), ("amp", "auction"))  # the first pair that exists
DRAIN_S = 10.0  # how long the generator waits for answers after the last request was due
SETTLE_S = 1.0  # pause before each level, so a backlog the previous one left is not measured
OPENLOOP = BENCH_DIR / "openloop.py"


class Served(Protocol):
    """A started scenario server (what ``bench.run.serving`` yields)."""

    @property
    def server(self) -> procs.ManagedProcess: ...

    @property
    def port(self) -> int: ...

    @property
    def values(self) -> Mapping[str, str]: ...


ServeFn = Callable[[Scenario, Path], AbstractContextManager[Served]]


class LatencyError(Exception):
    """The generator could not run or printed no result."""


def default_names(scenarios: Sequence[Scenario] = SCENARIOS) -> list[str]:
    """``amp_full,auction_full`` when both exist, else ``amp,auction`` (whichever of them exist)."""
    known = {scenario.name for scenario in scenarios}
    for names in DEFAULT_NAMES:
        present = [name for name in names if name in known]
        if present:
            return present
    return []


def resolve_names(raw: str | None, scenarios: Sequence[Scenario] = SCENARIOS) -> list[str]:
    """BENCH_LATENCY as a list: None = the default, '' = none; ValueError on an unknown name."""
    if raw is None:
        return default_names(scenarios)
    wanted = [name.strip() for name in raw.split(",") if name.strip()]
    known = [scenario.name for scenario in scenarios]
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise ValueError(f"BENCH_LATENCY: unknown scenario(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return wanted


def levels(saturation_rps: float, shares: Sequence[float] = LEVELS) -> list[float]:
    """The offered rates: ``shares`` of ``saturation_rps``, to 0.1 req/s (at least 1 req/s)."""
    if saturation_rps <= 0:
        raise ValueError("saturation must be > 0")
    return [max(1.0, round(saturation_rps * share, 1)) for share in shares]


def saturation(outcomes: Sequence[RunOutcome]) -> float | None:
    """The median req/s of a scenario's successful wrk rounds; None without one."""
    rates = [o.result.requests_per_sec for o in outcomes if o.ok and o.result is not None]
    return statistics.median(rates) if rates else None


def openloop_argv(
    scenario: Scenario,
    url: str,
    rate: float,
    duration_s: float,
    cpu: int | None,
    drain_s: float = DRAIN_S,
    bid_marker: str | None = None,
) -> list[str]:
    """The generator's command line for ``scenario`` at ``url`` (a varied one rendered per request,
    ``--vary``); ValueError for a Lua-scripted one."""
    if scenario.lua_script is not None:
        raise ValueError(f"scenario {scenario.name} uses its own wrk Lua script, which the open-loop "
                         "generator cannot replay")
    argv = [sys.executable, str(OPENLOOP), url, "--rate", f"{rate:g}", "--duration", f"{duration_s:g}",
            "--method", scenario.method, "--timeout", f"{drain_s:g}"]
    if scenario.varied:
        argv.append("--vary")
    if bid_marker is not None:
        argv += ["--bid-marker", bid_marker]
    if scenario.body_file is not None:
        body = Path(scenario.body_file)
        argv += ["--body-file", str(body if body.is_absolute() else BENCH_DIR / body)]
    for header in scenario.wrk_headers():
        argv += ["--header", header]
    return ["taskset", "-c", str(cpu), *argv] if cpu is not None else argv


def run_generator(argv: Sequence[str], duration_s: float, drain_s: float = DRAIN_S) -> dict[str, Any]:
    """Run the generator process; its JSON result (the last line of its output)."""
    status, output = procs.run_captured(argv, timeout_s=duration_s + drain_s + 30)
    lines = [line for line in output.splitlines() if line.startswith("{")]
    if status != 0 or not lines:
        raise LatencyError(f"open-loop generator exited with status {status}: {output.strip()[-500:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def level_entry(share: float, result: Mapping[str, Any], server_cpu_s: float | None) -> dict[str, Any]:
    """One point of a curve, from the generator's result and the server's CPU time over it."""
    latency, answered = result["latency_ms"], result["answered"]
    cpu_us = None if server_cpu_s is None or not answered else round(server_cpu_s * 1e6 / answered, 1)
    return {
        "share": share,
        "offered": result["offered_rate"],
        "achieved": result["achieved_rate"],
        "p50_ms": latency["p50"],
        "p90_ms": latency["p90"],
        "p99_ms": latency["p99"],
        "max_ms": latency["max"],
        "errors": result["error_count"],
        "lag_p99_ms": result["lag_ms"]["p99"],
        "server_cpu_us_per_request": cpu_us,
        "generator_cpu_us_per_request": round(result["cpu_s"] * 1e6 / max(result["scheduled"], 1), 1),
        "connections": result["connections_opened"],
        "flags": list(result["flags"]),
    }


def measure_curve(
    scenario: Scenario,
    saturation_rps: float,
    *,
    duration_s: float,
    warmup_s: float,
    pinning: Pinning,
    workdir: Path,
    serve: ServeFn,
) -> dict[str, Any]:
    """Start the scenario's server, warm it up at half load, then offer each level in turn."""
    rates = levels(saturation_rps)
    entry: dict[str, Any] = {"saturation_rps": round(saturation_rps, 1), "duration_s": duration_s, "levels": []}
    with serve(scenario, workdir) as served:
        url = scenario.url(served.port, served.values)
        if warmup_s > 0:
            run_generator(openloop_argv(scenario, url, rates[1], warmup_s, pinning.client_cpu), warmup_s)
        for share, rate in zip(LEVELS, rates, strict=True):
            argv = openloop_argv(scenario, url, rate, duration_s, pinning.client_cpu)
            time.sleep(SETTLE_S)
            before = process_cpu_seconds(served.server.pid)
            result = run_generator(argv, duration_s)
            after = process_cpu_seconds(served.server.pid)
            cpu = None if before is None or after is None else after - before
            point = level_entry(share, result, cpu)
            entry["levels"].append(point)
            print(f"[latency] {scenario.name} {share:.0%}: {format_point(point)}", flush=True)
            if not served.server.alive():
                raise procs.ProcessError(f"server exited during the run:\n{served.server.log_tail()}")
    return entry


def format_point(point: Mapping[str, Any]) -> str:
    text = (
        f"offered {point['offered']:.0f} req/s, achieved {point['achieved']:.0f}, "
        f"p50 {_ms(point['p50_ms'])} ms, p99 {_ms(point['p99_ms'])} ms"
    )
    if point["flags"]:
        text += " — FLAGGED: " + "; ".join(point["flags"])
    return text


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def measure_curves(
    names: Sequence[str],
    outcomes: Mapping[str, Sequence[RunOutcome]],
    *,
    duration_s: float,
    warmup_s: float,
    pinning: Pinning,
    scratch: Path,
    serve: ServeFn,
    scenarios: Sequence[Scenario] = SCENARIOS,
) -> dict[str, dict[str, Any]]:
    """The curve of every named scenario; one that did not run in the rounds (or fails) says why."""
    by_name = {scenario.name: scenario for scenario in scenarios}
    curves: dict[str, dict[str, Any]] = {}
    for name in names:
        scenario = by_name[name]
        rate = saturation(outcomes.get(name, []))
        if name not in outcomes:
            reason = "did not run in the rounds (add it to BENCH_SCENARIOS)"
        elif rate is None:
            reason = "no successful round to take the saturation from"
        elif scenario.lua_script is not None:
            reason = "uses its own wrk Lua script, which the open-loop generator cannot replay"
        else:
            reason = ""
        if reason or rate is None:
            print(f"[latency] {name}: skipped, {reason}", flush=True)
            curves[name] = {"skipped": reason}
            continue
        try:
            curves[name] = measure_curve(
                scenario, rate, duration_s=duration_s, warmup_s=warmup_s, pinning=pinning,
                workdir=scratch / f"{name}-latency", serve=serve,
            )
        except (procs.ProcessError, LatencyError, OSError, ValueError) as exc:
            print(f"[latency] {name}: ERROR {type(exc).__name__}: {exc}", flush=True)
            curves[name] = {"error": f"{type(exc).__name__}: {exc}"}
    return curves


# --- the table and the chart --------------------------------------------------------------


def format_curves(curves: Mapping[str, Mapping[str, Any]]) -> str:
    """The curves as a table: one line per level."""
    header = (
        f"{'scenario':<16} {'load':>5} {'offered':>8} {'achieved':>8} {'p50 ms':>8} {'p90 ms':>8} "
        f"{'p99 ms':>8} {'max ms':>8} {'errors':>6} {'lag p99':>7} {'cpu us':>7}  flags"
    )
    lines = [
        "latency under constant load (open-loop generator; latency counted from each request's scheduled "
        "time; load = share of the wrk saturation; cpu us = server CPU per request):",
        header,
        "-" * len(header),
    ]
    for name, curve in curves.items():
        if "levels" not in curve:
            lines.append(f"{name:<16} {curve.get('skipped') or curve.get('error')}")
            continue
        for point in curve["levels"]:
            cpu = point["server_cpu_us_per_request"]
            lines.append(
                f"{name:<16} {point['share']:>5.0%} {point['offered']:>8.1f} {point['achieved']:>8.1f} "
                f"{_cell(point['p50_ms'])} {_cell(point['p90_ms'])} {_cell(point['p99_ms'])} "
                f"{_cell(point['max_ms'])} {point['errors']:>6} {_cell(point['lag_p99_ms'], 7)} "
                f"{'-' if cpu is None else format(cpu, '.0f'):>7}  {'; '.join(point['flags']) or '-'}"
            )
    return "\n".join(lines)


def _cell(value: float | None, width: int = 8) -> str:
    return "-".rjust(width) if value is None else format(value, f"{width}.2f")


CURVE_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2")


def write_latency_chart(curves: Mapping[str, Mapping[str, Any]], path: Path, title: str = "") -> None:
    """p50 (dashed) and p99 (solid) against offered load (% of saturation), log latency axis.

    Flagged levels (generator lag, rate short of the offered, failed requests) are circled in red.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # Agg: no display needed
    from matplotlib.figure import Figure

    figure = Figure(figsize=(9, 5.5), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots()
    drawn = [(name, curve) for name, curve in curves.items() if curve.get("levels")]
    flagged_label = "flagged level"
    for index, (name, curve) in enumerate(drawn):
        colour = CURVE_COLOURS[index % len(CURVE_COLOURS)]
        points = curve["levels"]
        x = [100 * point["share"] for point in points]
        label = f"{name} (saturation {curve['saturation_rps']:.0f} req/s)"
        for key, style, text in (("p99_ms", "-", "p99"), ("p50_ms", "--", "p50")):
            y = [point[key] if point[key] else float("nan") for point in points]
            axes.plot(x, y, style, color=colour, marker="o", label=f"{label} {text}")
        for point, px in zip(points, x, strict=True):
            axes.annotate(f"{point['offered']:.0f}/s", (px, point["p99_ms"] or 1e-3), textcoords="offset points",
                          xytext=(0, 6), ha="center", fontsize=7, color=colour)
            if point["flags"]:
                for key in ("p50_ms", "p99_ms"):
                    if point[key]:
                        axes.scatter([px], [point[key]], s=160, facecolors="none", edgecolors="#d62728",
                                     linewidths=1.5, zorder=4, label=flagged_label)
                        flagged_label = "_nolegend_"
    if not drawn:
        axes.text(0.5, 0.5, "no latency curve measured", ha="center", va="center", transform=axes.transAxes)
    else:
        axes.set_yscale("log")
        axes.legend(fontsize=8)
    axes.set_xlim(0, 100)
    axes.set_xlabel("offered load, % of the wrk saturation (labels: offered req/s)")
    axes.set_ylabel("latency from the scheduled send time, ms (log)")
    axes.set_title(title or "Latency under constant load (open loop)", fontsize=10)
    axes.grid(alpha=0.3, which="both")
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
