"""``make bench`` / ``python -m bench.run``: hbserver against a hello-world, in alternating rounds.

Each round starts every server in turn on the server CPU (one at a time, so they never compete),
warms it up with a short wrk run, measures it with ``wrk -t1`` on the other CPU (reading the
server's CPU time and the machine's steal time around the measured run), and stops it.
Round order alternates (hello, scenarios... then the reverse) so slow drift hits all alike.

Knobs (environment):
  BENCH_DURATION     seconds per measured run (default 10)
  BENCH_WARMUP       seconds of warm-up before each measured run (default 2; 0 = none)
  BENCH_ROUNDS       rounds (default 3)
  BENCH_CONNECTIONS  wrk connections (default 64; a scenario with its own ``connections`` keeps it)
  BENCH_SCENARIOS    comma list of scenario names (default: all; hello-world always runs)
  BENCH_SOAK_PUTS    puts in the memory cache store soak after the rounds (default 1000000; 0 = skip)
  BENCH_LATENCY      comma list of scenarios to draw latency curves for after the rounds, with the
                     open-loop generator at 25/50/75/90 % of their wrk saturation (default:
                     amp_full,auction_full, or amp,auction where those do not exist; empty = skip)
  BENCH_LATENCY_DURATION  seconds per latency level (default 10)
  BENCH_OVERLOAD     comma list of scenarios offered twice their wrk saturation after the rounds, open
                     loop (bench.overload; default amp_varied,auction_varied; empty = skip)
  BENCH_OVERLOAD_DURATION  seconds of the overload run (default 10)
  BENCH_OVERLOAD_MAX_WAIT_MS  the servers' overload.max_wait_ms in the overload run (default: theirs;
                     0 = shedding off)
  BENCH_MEMORY       comma list of scenarios whose RSS is followed over a 60 s run after the rounds
                     (default: amp_varied,auction_varied; empty = skip; bench/memory.py)

Writes bench/results/latest.json, latest.png (and latency.png) and prints a summary. Exit status: 0, or 1 when
a scenario had failed responses or could not run (a missed target, ratio or p99, is only
reported); 2 on a bad knob or missing wrk.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from bench import latency, memory, procs
from bench import overload as overload_mod
from bench.machine import Pinning, detect_pinning, machine_info, process_cpu_seconds, steal_seconds
from bench.report import RunOutcome, build_report, format_table, write_chart, write_json
from bench.scenarios import BENCH_DIR, HELLO, Scenario, SetupContext, select
from bench.soak import format_soak, soak
from bench.wrk import WrkCommand, WrkError, run_wrk

RESULTS_DIR = BENCH_DIR / "results"


@dataclass(frozen=True)
class Settings:
    duration_s: int = 10
    warmup_s: int = 2
    rounds: int = 3
    connections: int = 64
    scenarios: str = ""
    latency: str | None = None  # BENCH_LATENCY as given; None = the default scenarios (bench.latency)
    latency_duration_s: int = 10
    overload: str | None = None  # BENCH_OVERLOAD as given; None = the default scenarios (bench.overload)
    overload_duration_s: int = overload_mod.DURATION_S
    overload_max_wait_ms: str = ""  # BENCH_OVERLOAD_MAX_WAIT_MS; "" = the server's default

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Settings:
        """The knobs from the environment; raises ValueError naming the bad one."""
        return cls(
            duration_s=_int(environ, "BENCH_DURATION", cls.duration_s, minimum=1),
            warmup_s=_int(environ, "BENCH_WARMUP", cls.warmup_s, minimum=0),
            rounds=_int(environ, "BENCH_ROUNDS", cls.rounds, minimum=1),
            connections=_int(environ, "BENCH_CONNECTIONS", cls.connections, minimum=1),
            scenarios=environ.get("BENCH_SCENARIOS", "").strip(),
            latency=environ.get("BENCH_LATENCY"),
            latency_duration_s=_int(environ, "BENCH_LATENCY_DURATION", cls.latency_duration_s, minimum=1),
            overload=environ.get("BENCH_OVERLOAD"),
            overload_duration_s=_int(environ, "BENCH_OVERLOAD_DURATION", cls.overload_duration_s, minimum=1),
            overload_max_wait_ms=_max_wait(environ),
        )


def _int(environ: Mapping[str, str], name: str, default: int, minimum: int) -> int:
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name} must be a whole number, got {raw!r}") from None
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def _max_wait(environ: Mapping[str, str]) -> str:
    raw = environ.get("BENCH_OVERLOAD_MAX_WAIT_MS", "").strip()
    if raw and not raw.isdigit():
        raise ValueError(f"BENCH_OVERLOAD_MAX_WAIT_MS must be a whole number of ms (0 = off), got {raw!r}")
    return raw


def server_argv(scenario: Scenario, port: int, config: Path | None) -> list[str]:
    if scenario.server == "baseline":
        return [sys.executable, str(BENCH_DIR / "baseline.py"), str(port)]
    if scenario.server == "limit":
        if config is None:
            raise ValueError(f"scenario {scenario.name}: the limit server needs a config")
        return [sys.executable, str(BENCH_DIR / "limit_server.py"), "--port", str(port), "--config", str(config)]
    argv = [sys.executable, "-m", "hbserver", "--host", "127.0.0.1", "--port", str(port),
            "--workers", str(scenario.workers)]  # fmt: skip
    if config is not None:
        argv += ["--config", str(config)]
    return argv


def server_env(scenario: Scenario) -> dict[str, str]:
    """The harness's environment without HBS_* settings (the scenario decides the config)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("HBS_")}
    env.update(scenario.env)
    return env


def _delta(before: float | None, after: float | None) -> float | None:
    return None if before is None or after is None else after - before


@dataclass(frozen=True)
class Serving:
    """A scenario's server, started and ready: the process, its port and the placeholder values."""

    server: procs.ManagedProcess
    port: int
    values: Mapping[str, str]


@contextmanager
def serving(scenario: Scenario, workdir: Path, pinning: Pinning) -> Iterator[Serving]:
    """Start the scenario's helpers and server (on the server CPU) in a new ``workdir``; stop them after."""
    workdir.mkdir()
    context = SetupContext(workdir, pinning.client_cpu)
    server: procs.ManagedProcess | None = None
    try:
        values = {"workdir": str(workdir)}
        if scenario.setup is not None:
            values.update(scenario.setup(context))
        port = procs.free_port()
        values["port"] = str(port)
        argv = server_argv(scenario, port, scenario.write_config(workdir, values))
        server = procs.start(
            scenario.name,
            argv,
            cwd=workdir,
            log_path=workdir / "server.log",
            env=server_env(scenario),
            cpu=pinning.server_cpu,
        )
        procs.wait_http_ready(f"http://127.0.0.1:{port}{scenario.ready_path}", server)
        yield Serving(server, port, values)
    finally:
        try:
            if server is not None:
                server.stop()
        finally:
            context.close()


def run_once(
    scenario: Scenario, round_no: int, settings: Settings, pinning: Pinning, scratch: Path
) -> RunOutcome:
    """Start the scenario's server (and helpers), warm it up, measure it, stop everything."""
    workdir = scratch / f"{scenario.name}-round{round_no}"
    try:
        with serving(scenario, workdir, pinning) as served:
            server, port, values = served.server, served.port, served.values
            command = WrkCommand(
                url=scenario.url(port, values),
                connections=scenario.wrk_connections(settings.connections),
                script=scenario.wrk_script(workdir),
                headers=scenario.wrk_headers(),
                cpu=pinning.client_cpu,
            )
            if settings.warmup_s:
                run_wrk(command, settings.warmup_s)
            cpu_before, steal_before = process_cpu_seconds(server.pid), steal_seconds()
            result, _ = run_wrk(command, settings.duration_s)
            cpu_after, steal_after = process_cpu_seconds(server.pid), steal_seconds()
            if not server.alive():
                return RunOutcome(round_no, result, f"server exited during the run:\n{server.log_tail()}")
            return RunOutcome(
                round_no,
                result,
                server_cpu_s=_delta(cpu_before, cpu_after),
                steal_s=_delta(steal_before, steal_after),
                cpus=os.cpu_count() or 1,
            )
    except (procs.ProcessError, WrkError, OSError, ValueError) as exc:
        return RunOutcome(round_no, None, f"{type(exc).__name__}: {exc}")


def run_rounds(
    scenarios: list[Scenario], settings: Settings, pinning: Pinning, scratch: Path
) -> dict[str, list[RunOutcome]]:
    outcomes: dict[str, list[RunOutcome]] = {s.name: [] for s in [HELLO, *scenarios]}
    for round_no in range(1, settings.rounds + 1):
        order = [HELLO, *scenarios]
        if round_no % 2 == 0:
            order.reverse()
        for scenario in order:
            outcome = run_once(scenario, round_no, settings, pinning, scratch)
            outcomes[scenario.name].append(outcome)
            print(f"[round {round_no}/{settings.rounds}] {_progress_line(scenario.name, outcome)}", flush=True)
    return outcomes


def _progress_line(name: str, outcome: RunOutcome) -> str:
    result = outcome.result
    if result is None:
        return f"{name}: ERROR " + (outcome.error or "").replace("\n", "\n    ")
    line = f"{name}: {result.requests_per_sec:.1f} req/s, p50 {result.p50_ms:.2f} ms, p99 {result.p99_ms:.2f} ms"
    if not outcome.ok:
        line += f" — NOT ALL SUCCESSFUL ({result.errors} errors)"
    return line


def _terminate(signum: int, frame: FrameType | None) -> None:
    print(f"bench: {signal.Signals(signum).name}; stopping all child processes", file=sys.stderr)
    raise SystemExit(128 + signum)  # unwinds through the finally blocks that stop the children


def main() -> int:
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGHUP, _terminate)
    try:
        settings = Settings.from_env(os.environ)
        scenarios = select(settings.scenarios)
        stages = Stages(
            latency.resolve_names(settings.latency),
            overload_mod.resolve_names(settings.overload),
            memory.resolve_names(os.environ.get("BENCH_MEMORY")),
        )
    except ValueError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    if shutil.which("wrk") is None:
        print("bench: wrk is not installed (apt-get install wrk)", file=sys.stderr)
        return 2
    pinning = detect_pinning()
    machine = machine_info()
    _announce(settings, scenarios, pinning, machine)
    try:
        measured = _measure(scenarios, settings, stages, pinning)
    except KeyboardInterrupt:
        print("bench: interrupted; all child processes stopped", file=sys.stderr)
        return 130
    report = _report(settings, machine, scenarios, pinning, measured)
    return _print_report(report, pinning)


@dataclass(frozen=True)
class Stages:
    """The scenarios each stage after the rounds runs (latency curves, overload, memory)."""

    latency: list[str]
    overload: list[str]
    memory: list[str]


@dataclass
class Measured:
    """What the rounds and the stages after them measured."""

    outcomes: dict[str, list[RunOutcome]]
    curves: Any
    memories: Any
    overloads: Any


def _announce(settings: Settings, scenarios: list[Scenario], pinning: Pinning, machine: Mapping[str, Any]) -> None:
    names = ", ".join(s.name for s in [HELLO, *scenarios])
    overrides = "".join(f", {s.name} -c{s.connections}" for s in scenarios if s.connections is not None)
    print(
        f"bench: {names}; {settings.rounds} round(s) x {settings.duration_s}s "
        f"(+{settings.warmup_s}s warm-up), wrk -t1 -c{settings.connections}{overrides}\n"
        f"bench: {pinning.note}; {machine['cpu_model']}, nproc {machine['nproc']}",
        flush=True,
    )


def _measure(scenarios: list[Scenario], settings: Settings, stages: Stages, pinning: Pinning) -> Measured:
    """The rounds, then the latency curves, memory and overload stages; every child process stopped after."""
    with tempfile.TemporaryDirectory(prefix="hbserver-bench-") as scratch:
        try:
            def serve(scenario: Scenario, workdir: Path) -> Any:
                return serving(scenario, workdir, pinning)

            outcomes = run_rounds(scenarios, settings, pinning, Path(scratch))
            curves = latency.measure_curves(
                stages.latency, outcomes, duration_s=settings.latency_duration_s, warmup_s=settings.warmup_s,
                pinning=pinning, scratch=Path(scratch), serve=serve,
            )
            memories = memory.measure_all(stages.memory, settings.connections, pinning, Path(scratch), serve=serve)
            overloads = overload_mod.measure_all(
                stages.overload, outcomes, duration_s=settings.overload_duration_s, warmup_s=settings.warmup_s,
                max_wait_ms=settings.overload_max_wait_ms, pinning=pinning, scratch=Path(scratch), serve=serve,
            )
        finally:
            procs.stop_all()
    return Measured(outcomes, curves, memories, overloads)


def _report(
    settings: Settings, machine: dict[str, Any], scenarios: list[Scenario], pinning: Pinning, measured: Measured
) -> dict[str, Any]:
    """The report (with the soak's figures when BENCH_SOAK_PUTS is above 0), written to RESULTS_DIR."""
    report_settings: dict[str, Any] = {**asdict(settings), "threads": 1, "pinning": pinning.to_dict()}
    report = build_report(report_settings, machine, scenarios, measured.outcomes)
    if measured.curves:
        report["latency_curves"] = measured.curves
    if measured.overloads:
        report["overload"] = measured.overloads
        overload_mod.add_to_summary(report["summary"], measured.overloads)
    if measured.memories:
        report["memory"] = measured.memories
        if any(result.get("flat") is False for result in measured.memories.values()):
            report["summary"]["memory_flat"] = False
    soak_puts = int(os.environ.get("BENCH_SOAK_PUTS", "1000000"))
    if soak_puts > 0:
        report["soak"] = asyncio.run(soak(soak_puts))
        if not report["soak"]["within_bound"]:
            report["summary"]["exit_status"] = 1
    return report


def _print_report(report: dict[str, Any], pinning: Pinning) -> int:
    """Write the report's JSON and chart, print its tables; the exit status."""
    json_path, png_path = RESULTS_DIR / "latest.json", RESULTS_DIR / "latest.png"
    write_json(report, json_path)
    try:
        write_chart(report, png_path)
        chart = str(png_path)
    except ImportError as exc:
        chart = f"not drawn ({exc}; pip install matplotlib)"
    print()
    print(format_table(report))
    print()
    if not pinning.pinned:
        print(f"NOTE: {pinning.note}; figures are less stable than pinned ones")
    if "soak" in report:
        print(format_soak(report["soak"]))
    if "memory" in report:
        print(memory.format_all(report["memory"]))
    if "latency_curves" in report:
        print(latency.format_curves(report["latency_curves"]))
        print(f"latency chart: {_latency_chart(report)}")
    if "overload" in report:
        print(overload_mod.format_results(report["overload"]))
    if report["summary"].get("below_target"):
        print("below target: " + ", ".join(report["summary"]["below_target"]))
    print(f"results: {json_path}\nchart:   {chart}")
    return int(report["summary"]["exit_status"])


def _latency_chart(report: Mapping[str, Any]) -> str:
    """Draw bench/results/latency.png; its path, or why it was not drawn."""
    path, machine = RESULTS_DIR / "latency.png", report["machine"]
    title = (
        f"hbserver latency under constant load, {machine['date']}: "
        f"{report['settings']['latency_duration_s']}s per level, open-loop generator on the client CPU\n"
        f"{machine['cpu_model']}, nproc {machine['nproc']}; {report['settings']['pinning']['note']}"
    )
    try:
        latency.write_latency_chart(report["latency_curves"], path, title)
    except ImportError as exc:
        return f"not drawn ({exc}; pip install matplotlib)"
    return str(path)


if __name__ == "__main__":
    sys.exit(main())
