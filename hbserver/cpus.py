"""How many CPUs this process may really use: ``workers: 0`` starts one worker per such CPU.

``os.cpu_count()`` counts the host's CPUs: a pod limited to 2 CPUs on a 64-core node would start
64 workers, each throttled by the CFS quota. The usable count is the smallest of the host's
count, the CPU affinity mask (``taskset``, cpusets) and the cgroup CPU quota (v2 ``cpu.max``,
v1 ``cpu.cfs_quota_us``/``cpu.cfs_period_us``; the tightest limit on the path from the process's
cgroup up to the root), rounded down and never below 1, as Go's automaxprocs does.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from hbserver.numbers import NumberError, parse_int

CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_SELF_CGROUP = Path("/proc/self/cgroup")


def usable_cpus(
    cgroup_root: Path = CGROUP_ROOT,
    proc_self_cgroup: Path = PROC_SELF_CGROUP,
    affinity: int | None = None,
    cpu_count: int | None = None,
) -> int:
    """The number of CPUs this process may use (at least 1)."""
    count = cpu_count or os.cpu_count() or 1
    if affinity is None:
        affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else count
    usable = min(count, affinity or count)
    quota = cgroup_cpu_quota(cgroup_root, proc_self_cgroup)
    if quota is not None:
        usable = min(usable, max(1, math.floor(quota)))
    return max(1, usable)


def cgroup_cpu_quota(cgroup_root: Path = CGROUP_ROOT, proc_self_cgroup: Path = PROC_SELF_CGROUP) -> float | None:
    """The CPU quota (in CPUs) of this process's cgroup, or None when it has none."""
    try:
        lines = proc_self_cgroup.read_text().splitlines()
    except OSError:
        return None
    limits = []
    for line in lines:
        hierarchy, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if hierarchy == "0" and controllers == "":  # cgroup v2: "0::/path"
            limits += [_v2_quota(d) for d in _levels(cgroup_root, path)]
        elif "cpu" in controllers.split(","):  # cgroup v1: "4:cpu,cpuacct:/path"
            mount = _v1_mount(cgroup_root, controllers)
            if mount is not None:
                limits += [_v1_quota(d) for d in _levels(mount, path)]
    found = [limit for limit in limits if limit is not None]
    return min(found) if found else None


def _levels(mount: Path, path: str) -> list[Path]:
    """The process's cgroup directory and each parent up to the mount point.

    Inside a container without a cgroup namespace the path names the container's place in the
    host's tree, which is not under the container's mount: then only the mount itself is read.
    """
    parts = [p for p in path.strip().split("/") if p and p not in (".", "..")]
    levels = [mount.joinpath(*parts[:i]) for i in range(len(parts), 0, -1)]
    return [level for level in levels if level.is_dir()] + [mount]


def _v1_mount(cgroup_root: Path, controllers: str) -> Path | None:
    for name in (controllers, "cpu,cpuacct", "cpuacct,cpu", "cpu"):
        candidate = cgroup_root / name
        if (candidate / "cpu.cfs_quota_us").exists():
            return candidate
    return None


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _v2_quota(directory: Path) -> float | None:
    text = _read(directory / "cpu.max")  # "max 100000" (no limit) or "<quota> <period>"
    if not text:
        return None
    quota, _, period = text.partition(" ")
    return _ratio(quota, period or "100000")


def _v1_quota(directory: Path) -> float | None:
    quota, period = _read(directory / "cpu.cfs_quota_us"), _read(directory / "cpu.cfs_period_us")
    if quota is None or period is None:
        return None
    return _ratio(quota, period)


def _ratio(quota: str, period: str) -> float | None:
    try:
        q, p = parse_int(quota.strip()), parse_int(period.strip())
    except NumberError:
        return None  # "max"
    return q / p if q > 0 and p > 0 else None  # v1 says -1 for no limit
