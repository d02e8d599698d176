"""Running wrk and parsing its report (``wrk --latency`` output, wrk 4.x)."""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench import procs

# wrk prints times with format_time_us: us, ms, s, then m and h past a minute.
_TIME_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}
_TIME = r"([0-9]+(?:\.[0-9]+)?)(us|ms|s|m|h)"

_REQUESTS_PER_SEC = re.compile(r"^Requests/sec:\s+([0-9]+(?:\.[0-9]+)?)\s*$", re.M)
_TOTAL = re.compile(rf"^\s*([0-9]+) requests in {_TIME},", re.M)
_LATENCY = re.compile(rf"^\s*Latency\s+{_TIME}\s+{_TIME}\s+{_TIME}", re.M)
_DISTRIBUTION = re.compile(rf"^\s*([0-9]+(?:\.[0-9]+)?)%\s+{_TIME}\s*$")
_NON_2XX = re.compile(r"^\s*Non-2xx or 3xx responses:\s+([0-9]+)\s*$", re.M)
_SOCKET_ERRORS = re.compile(
    r"^\s*Socket errors: connect ([0-9]+), read ([0-9]+), write ([0-9]+), timeout ([0-9]+)\s*$", re.M
)


class WrkError(Exception):
    """wrk could not run, failed, or printed a report that cannot be parsed."""

    def __init__(self, message: str, output: str = "") -> None:
        super().__init__(message)
        self.output = output


@dataclass(frozen=True)
class SocketErrors:
    connect: int = 0
    read: int = 0
    write: int = 0
    timeout: int = 0

    @property
    def total(self) -> int:
        return self.connect + self.read + self.write + self.timeout


@dataclass(frozen=True)
class WrkResult:
    """One wrk run. Times are in milliseconds."""

    requests_per_sec: float
    requests: int
    duration_ms: float
    latency_avg_ms: float
    latency_max_ms: float
    percentiles_ms: dict[str, float]  # "50", "75", "90", "99" -> ms
    non_2xx_3xx: int = 0  # wrk counts statuses > 399 here, despite the name
    socket_errors: SocketErrors = field(default_factory=SocketErrors)

    @property
    def p50_ms(self) -> float:
        return self.percentiles_ms["50"]

    @property
    def p99_ms(self) -> float:
        return self.percentiles_ms["99"]

    @property
    def errors(self) -> int:
        """Failed responses plus socket errors."""
        return self.non_2xx_3xx + self.socket_errors.total

    @property
    def ok(self) -> bool:
        """Every response successful, and at least one."""
        return self.errors == 0 and self.requests > 0

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(p50_ms=self.p50_ms, p99_ms=self.p99_ms, errors=self.errors, ok=self.ok)
        return data


def to_ms(value: str, unit: str) -> float:
    """A wrk time (number and unit) in milliseconds."""
    try:
        return float(value) * _TIME_UNITS_MS[unit]
    except KeyError:
        raise ValueError(f"unknown wrk time unit {unit!r}") from None


def parse_wrk_output(text: str) -> WrkResult:
    """Parse the report of ``wrk --latency``; raises WrkError when a required line is missing."""
    rps = _REQUESTS_PER_SEC.search(text)
    total = _TOTAL.search(text)
    latency = _LATENCY.search(text)
    percentiles = _parse_distribution(text)
    missing = [
        name
        for name, found in (
            ("Requests/sec", rps),
            ("'N requests in T'", total),
            ("Latency", latency),
            ("Latency Distribution 50%", "50" in percentiles),
            ("Latency Distribution 99%", "99" in percentiles),
        )
        if not found
    ]
    if missing or rps is None or total is None or latency is None:
        raise WrkError(f"wrk output lacks {', '.join(missing)}", text)
    non_2xx = _NON_2XX.search(text)
    sockets = _SOCKET_ERRORS.search(text)
    return WrkResult(
        requests_per_sec=float(rps.group(1)),
        requests=int(total.group(1)),
        duration_ms=to_ms(total.group(2), total.group(3)),
        latency_avg_ms=to_ms(latency.group(1), latency.group(2)),
        latency_max_ms=to_ms(latency.group(5), latency.group(6)),
        percentiles_ms=percentiles,
        non_2xx_3xx=int(non_2xx.group(1)) if non_2xx else 0,
        socket_errors=SocketErrors(*(int(g) for g in sockets.groups())) if sockets else SocketErrors(),
    )


def _parse_distribution(text: str) -> dict[str, float]:
    """The lines under 'Latency Distribution', as {"50": ms, ...}."""
    result: dict[str, float] = {}
    in_block = False
    for line in text.splitlines():
        if line.strip() == "Latency Distribution":
            in_block = True
            continue
        if not in_block:
            continue
        match = _DISTRIBUTION.match(line)
        if match is None:
            break
        key = match.group(1).removesuffix(".0")
        result[key] = to_ms(match.group(2), match.group(3))
    return result


@dataclass(frozen=True)
class WrkCommand:
    """How to drive one URL: everything wrk needs but the duration."""

    url: str
    connections: int
    threads: int = 1
    script: Path | None = None
    headers: Sequence[str] = ()
    cpu: int | None = None  # pin wrk to this CPU with taskset

    def argv(self, duration_s: int) -> list[str]:
        argv = ["wrk", f"-t{self.threads}", f"-c{self.connections}", f"-d{duration_s}s", "--latency"]
        for header in self.headers:
            argv += ["-H", header]
        if self.script is not None:
            argv += ["-s", str(self.script)]
        argv.append(self.url)
        if self.cpu is not None:
            argv = ["taskset", "-c", str(self.cpu), *argv]
        return argv


def run_wrk(command: WrkCommand, duration_s: int) -> tuple[WrkResult, str]:
    """Run wrk for ``duration_s`` seconds; the parsed result and the raw output."""
    if shutil.which("wrk") is None:
        raise WrkError("wrk is not installed (apt-get install wrk)")
    argv = command.argv(duration_s)
    # wrk stops by itself after the duration; the margin covers start-up and the final report.
    status, output = procs.run_captured(argv, timeout_s=duration_s + 30)
    if status != 0:
        raise WrkError(f"wrk exited with status {status}: {output.strip()[-500:]}", output)
    return parse_wrk_output(output), output
