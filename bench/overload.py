"""Overload: twice the saturation, offered open-loop; are the answers still in time, and with bids?

Issue 37 item 4: under saturation a server that queues answers after Prebid.js or the AMP runtime has
given up; hbserver sheds instead (``overload.max_wait_ms``). After the wrk rounds (and the latency
curves) this stage takes each named scenario's median saturation (its wrk req/s), starts the server
again as the rounds do, warms it up at half that rate, and offers :data:`FACTOR` times it with
:mod:`bench.openloop` (``--vary`` for a varied scenario) for ``duration_s``. It reports the p99 of the
answers, the share answered with bids (answers whose body holds the scenario's bid marker: ``hb_pb``
in AMP targeting, a non-empty ``seatbid`` in an auction), the errors, and the requests the server
shed (its ``overload_shed_requests``). Judged: p99 at most the scenario's tmax plus :data:`SLACK_MS`,
and no errors.

Knobs (environment, read by ``bench.run``): ``BENCH_OVERLOAD`` (comma list of scenarios; default
amp_varied,auction_varied; empty = skip), ``BENCH_OVERLOAD_DURATION`` (seconds, default 10) and
``BENCH_OVERLOAD_MAX_WAIT_MS`` (the servers' ``overload.max_wait_ms``; empty = their default, 0 =
shedding off: the "before" figure).
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
import urllib.request
from collections.abc import Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any

from bench import procs
from bench.latency import LatencyError, ServeFn, openloop_argv, run_generator, saturation
from bench.machine import Pinning, process_cpu_seconds
from bench.report import RunOutcome
from bench.scenarios import SCENARIOS, Scenario

FACTOR = 2.0  # the offered rate, as a multiple of the wrk saturation
SLACK_MS = 50  # p99 may exceed tmax by this much
DEFAULT_NAMES = ("amp_varied", "auction_varied")
DURATION_S = 10
WARMUP_SHARE = 0.5
DRAIN_S = 5.0  # answers later than tmax + this are errors anyway
AMP_MARKER = "hb_pb"  # in AMP targeting only when a bid won
AUCTION_MARKER = '"seatbid":[{'  # a non-empty seatbid (orjson writes no spaces)
AUCTION_DEFAULT_TMAX_MS = 1000  # auction_timeouts_ms.default
AMP_DEFAULT_TIMEOUT_MS = 1000  # amp.default_timeout_ms
MAX_WAIT_ENV = "HBS_OVERLOAD__MAX_WAIT_MS"
_TIMEOUT = re.compile(r"[?&]timeout=(\d+)")
_SHED_LINE = re.compile(rb"^\w*overload_shed_requests(?:_total)?\{[^}]*\} ([0-9.e+]+)$", re.M)


def resolve_names(raw: str | None, scenarios: Sequence[Scenario] = SCENARIOS) -> list[str]:
    """BENCH_OVERLOAD as a list: None = the default (those of it that exist), '' = none; ValueError on
    an unknown name."""
    known = [scenario.name for scenario in scenarios]
    if raw is None:
        return [name for name in DEFAULT_NAMES if name in known]
    wanted = [name.strip() for name in raw.split(",") if name.strip()]
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise ValueError(f"BENCH_OVERLOAD: unknown scenario(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return wanted


def tmax_ms(scenario: Scenario) -> int | None:
    """The answer's deadline the scenario's requests ask for: AMP its ``timeout`` (or the default), an
    auction its body's ``tmax`` (or the default); None for other endpoints."""
    path = scenario.path.split("?", 1)[0]
    if path == "/openrtb2/amp":
        found = _TIMEOUT.search(scenario.path)
        return int(found.group(1)) if found and int(found.group(1)) > 0 else AMP_DEFAULT_TIMEOUT_MS
    if path == "/openrtb2/auction" and scenario.body_file is not None:
        body = json.loads(scenario.body_text())  # the {{tokens}} sit inside strings: still JSON
        tmax = body.get("tmax") if isinstance(body, dict) else None
        return tmax if isinstance(tmax, int) and tmax > 0 else AUCTION_DEFAULT_TMAX_MS
    return None


def bid_marker(scenario: Scenario) -> str | None:
    """What an answer with bids holds: AMP ``hb_pb``, an auction a non-empty seatbid; None otherwise."""
    path = scenario.path.split("?", 1)[0]
    return {"/openrtb2/amp": AMP_MARKER, "/openrtb2/auction": AUCTION_MARKER}.get(path)


def with_max_wait(scenario: Scenario, max_wait_ms: str) -> Scenario:
    """The scenario with its server's ``overload.max_wait_ms`` set (by environment); '' = unchanged."""
    if not max_wait_ms:
        return scenario
    return dataclasses.replace(scenario, env={**scenario.env, MAX_WAIT_ENV: max_wait_ms})


def judge(p99_ms: float | None, errors: int, tmax: int) -> dict[str, Any]:
    """The verdicts: p99 within tmax + :data:`SLACK_MS`, no errors; ``target_met`` both."""
    p99_met = p99_ms is not None and p99_ms <= tmax + SLACK_MS
    errors_met = errors == 0
    return {"p99_max_ms": tmax + SLACK_MS, "p99_met": p99_met, "errors_met": errors_met,
            "target_met": p99_met and errors_met}


def entry_of(result: Mapping[str, Any], saturation_rps: float, tmax: int, shed: float | None,
             server_cpu_s: float | None) -> dict[str, Any]:
    """One scenario's overload figures, from the generator's result."""
    latency, answered = result["latency_ms"], result["answered"]
    with_bids, scheduled = result.get("with_marker"), result["scheduled"]
    return {
        "saturation_rps": round(saturation_rps, 1),
        "offered": result["offered_rate"],
        "achieved": result["achieved_rate"],
        "duration_s": result["duration_s"],
        "scheduled": scheduled,
        "answered": answered,
        "tmax_ms": tmax,
        "p50_ms": latency["p50"],
        "p99_ms": latency["p99"],
        "max_ms": latency["max"],
        "with_bids": with_bids,
        "bid_share": None if with_bids is None or not scheduled else round(with_bids / scheduled, 4),
        "shed": shed,
        "errors": result["error_count"],
        "errors_detail": result["errors"],
        "non_2xx": result["non_2xx"],
        "server_cpu_us_per_request": None if server_cpu_s is None or not answered
        else round(server_cpu_s * 1e6 / answered, 1),
        "generator_flags": list(result["flags"]),
        **judge(latency["p99"], result["error_count"], tmax),
    }


def shed_count(metrics_text: bytes) -> float:
    """The sum of ``overload_shed_requests`` in a /metrics exposition (0 when absent)."""
    return sum(float(value) for value in _SHED_LINE.findall(metrics_text))


def scrape_shed(port: int) -> float | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
            return shed_count(answer.read())
    except OSError:
        return None


def measure(
    scenario: Scenario,
    saturation_rps: float,
    *,
    duration_s: float,
    warmup_s: float,
    pinning: Pinning,
    workdir: Path,
    serve: ServeFn,
) -> dict[str, Any]:
    """Start the scenario's server, warm it up at half its saturation, offer :data:`FACTOR` times it."""
    tmax = tmax_ms(scenario)
    if tmax is None:
        raise ValueError(f"scenario {scenario.name} is not an auction or AMP scenario")
    marker = bid_marker(scenario)
    with serve(scenario, workdir) as served:
        url = scenario.url(served.port, served.values)
        if warmup_s > 0:
            warm = max(1.0, round(saturation_rps * WARMUP_SHARE, 1))
            run_generator(openloop_argv(scenario, url, warm, warmup_s, pinning.client_cpu, DRAIN_S), warmup_s, DRAIN_S)
        time.sleep(1.0)
        shed_before = scrape_shed(served.port)
        rate = round(saturation_rps * FACTOR, 1)
        argv = openloop_argv(scenario, url, rate, duration_s, pinning.client_cpu, DRAIN_S, marker)
        cpu_before = process_cpu_seconds(served.server.pid)
        result = run_generator(argv, duration_s, DRAIN_S)
        cpu_after = process_cpu_seconds(served.server.pid)
        shed_after = scrape_shed(served.port)
        if not served.server.alive():
            raise procs.ProcessError(f"server exited during the run:\n{served.server.log_tail()}")
    shed = None if shed_before is None or shed_after is None else shed_after - shed_before
    cpu = None if cpu_before is None or cpu_after is None else cpu_after - cpu_before
    return entry_of(result, saturation_rps, tmax, shed, cpu)


def measure_all(
    names: Sequence[str],
    outcomes: Mapping[str, Sequence[RunOutcome]],
    *,
    duration_s: float,
    warmup_s: float,
    max_wait_ms: str,
    pinning: Pinning,
    scratch: Path,
    serve: ServeFn,
    scenarios: Sequence[Scenario] = SCENARIOS,
) -> dict[str, dict[str, Any]]:
    """Every named scenario's overload run; one that did not run in the rounds (or fails) says why."""
    by_name = {scenario.name: scenario for scenario in scenarios}
    results: dict[str, dict[str, Any]] = {}
    for name in names:
        rate = saturation(outcomes.get(name, []))
        if name not in outcomes:
            reason = "did not run in the rounds (add it to BENCH_SCENARIOS)"
        elif rate is None:
            reason = "no successful round to take the saturation from"
        elif tmax_ms(by_name[name]) is None or by_name[name].lua_script is not None:
            reason = "not an auction or AMP scenario the open-loop generator can replay"
        else:
            reason = ""
        if reason or rate is None:
            print(f"[overload] {name}: skipped, {reason}", flush=True)
            results[name] = {"skipped": reason}
            continue
        try:
            entry = measure(
                with_max_wait(by_name[name], max_wait_ms), rate, duration_s=duration_s, warmup_s=warmup_s,
                pinning=pinning, workdir=scratch / f"{name}-overload", serve=serve,
            )
        except (procs.ProcessError, LatencyError, OSError, ValueError) as exc:
            print(f"[overload] {name}: ERROR {type(exc).__name__}: {exc}", flush=True)
            results[name] = {"error": f"{type(exc).__name__}: {exc}", "target_met": False}
            continue
        entry["max_wait_ms"] = max_wait_ms or "default"
        results[name] = entry
        print(f"[overload] {name}: {format_entry(entry)}", flush=True)
    return results


def add_to_summary(summary: MutableMapping[str, Any], results: Mapping[str, Mapping[str, Any]]) -> None:
    """A missed overload target as the rounds' are: ``overload:<name>`` in ``below_target``."""
    missed = [f"overload:{name}" for name, entry in results.items() if entry.get("target_met") is False]
    if missed:
        summary["below_target"] = [*summary.get("below_target", []), *missed]
        summary["targets_met"] = False


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def format_entry(entry: Mapping[str, Any]) -> str:
    if "p99_ms" not in entry:
        return str(entry.get("skipped") or entry.get("error"))
    share = "-" if entry["bid_share"] is None else f"{100 * entry['bid_share']:.1f} %"
    shed = "-" if entry["shed"] is None else f"{entry['shed']:.0f}"
    verdict = "met" if entry["target_met"] else "NOT MET"
    text = (
        f"offered {entry['offered']:.0f} req/s ({FACTOR:g}x {entry['saturation_rps']:.0f}), answered "
        f"{entry['answered']}/{entry['scheduled']}, p50 {_ms(entry['p50_ms'])} ms, p99 {_ms(entry['p99_ms'])} ms "
        f"(at most {entry['p99_max_ms']}), with bids {share}, shed {shed}, errors {entry['errors']}: {verdict}"
    )
    if entry["generator_flags"]:
        text += " (generator: " + "; ".join(entry["generator_flags"]) + ")"
    return text


def format_results(results: Mapping[str, Mapping[str, Any]]) -> str:
    """The overload runs for the final summary, one line per scenario."""
    lines = [f"overload at {FACTOR:g}x the wrk saturation (open-loop; p99 judged <= tmax + {SLACK_MS} ms, "
             "errors judged none):"]
    lines += [f"  {name:<16} {format_entry(entry)}" for name, entry in results.items()]
    return "\n".join(lines)
