"""Where the benchmark runs: CPU pinning and the machine description for the report."""

from __future__ import annotations

import datetime
import os
import platform
import shutil
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from bench import procs

REPO_DIR = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Pinning:
    """The CPU the servers run on and the CPU wrk (and helper processes) run on; None = unpinned."""

    server_cpu: int | None
    client_cpu: int | None
    note: str

    @property
    def pinned(self) -> bool:
        return self.server_cpu is not None

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "pinned": self.pinned}


def detect_pinning() -> Pinning:
    """Servers on the first usable CPU, wrk on the second; unpinned without taskset or a second CPU."""
    if shutil.which("taskset") is None:
        return Pinning(None, None, "UNPINNED: taskset not found, server and wrk share the CPUs")
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return Pinning(None, None, f"UNPINNED: only {len(cpus)} usable CPU, server and wrk share it")
    server, client = cpus[0], cpus[1]
    status, output = procs.run_captured(["taskset", "-c", str(server), "true"], timeout_s=10)
    if status != 0:
        return Pinning(None, None, f"UNPINNED: taskset does not work here ({output.strip()[:200]})")
    return Pinning(server, client, f"server on CPU {server}, wrk on CPU {client} (taskset)")


def machine_info() -> dict[str, Any]:
    """CPU, software versions and date, for the report."""
    return {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "cpu_model": _cpu_model(),
        "nproc": os.cpu_count(),
        "usable_cpus": sorted(os.sched_getaffinity(0)),
        "cpu_governor": _read_first_line(Path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "versions": {name: _version(name) for name in ("hbserver", "aiohttp", "uvloop", "orjson")},
        "wrk": _wrk_version(),
        "git": _git_revision(),
    }


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                return value.strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _read_first_line(path: Path) -> str | None:
    try:
        return path.read_text().strip().splitlines()[0]
    except (OSError, IndexError):
        return None


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def _wrk_version() -> str | None:
    wrk = shutil.which("wrk")
    if wrk is None:
        return None
    _, output = procs.run_captured([wrk, "--version"], timeout_s=10)  # exits 1 after the usage text
    first = output.strip().splitlines()[0] if output.strip() else ""
    return first.split(" Copyright")[0] or None


def _git_revision() -> str | None:
    if shutil.which("git") is None:
        return None
    status, commit = procs.run_captured(["git", "-C", str(REPO_DIR), "rev-parse", "--short", "HEAD"], 10)
    if status != 0:
        return None
    _, changes = procs.run_captured(["git", "-C", str(REPO_DIR), "status", "--porcelain"], 10)
    return commit.strip() + ("-dirty" if changes.strip() else "")


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat_fields(pid: int | str) -> list[str] | None:
    """``/proc/PID/stat`` after the command name: fields[0] is field 3 (state) of proc(5)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _children_by_parent() -> dict[int, list[int]]:
    """Every process's children, from the parent pid field of each ``/proc/PID/stat``."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            fields = _stat_fields(entry.name)
            if fields is not None:
                children.setdefault(int(fields[1]), []).append(int(entry.name))
    return children


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process and everything it forked (Linux ``/proc``); None where
    the process cannot be read.

    With ``workers: 2`` the server is a supervisor and forked workers, and a live child's time is in
    no field of its parent's stat: so the live descendants' times are added, and, for those that
    already exited and were reaped, each process's ``cutime``/``cstime``.
    """
    fields = _stat_fields(pid)
    if fields is None:
        return None
    ticks = sum(int(value) for value in fields[11:15])  # utime, stime, cutime, cstime (fields 14-17)
    tree = _children_by_parent()
    pending = list(tree.get(pid, ()))
    while pending:
        child = pending.pop()
        child_fields = _stat_fields(child)
        if child_fields is not None:  # None: it exited meanwhile (its time moves to its parent's cutime)
            ticks += sum(int(value) for value in child_fields[11:15])
            pending.extend(tree.get(child, ()))
    return ticks / _CLOCK_TICKS


def steal_seconds() -> float | None:
    """CPU time the hypervisor gave to others, summed over all CPUs (``/proc/stat``); None off Linux."""
    try:
        first = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    if first[0] != "cpu" or len(first) < 9:
        return None
    return int(first[8]) / _CLOCK_TICKS
