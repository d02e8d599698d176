"""workers: 0 counts the CPUs this process may use: cgroup v2/v1 quotas, affinity, the host."""

from __future__ import annotations

from pathlib import Path

import pytest

from hbserver.cpus import cgroup_cpu_quota, usable_cpus


def fake_cgroup(tmp_path: Path, proc_lines: str, files: dict[str, str]) -> tuple[Path, Path]:
    """A fake /sys/fs/cgroup tree (``files``: relative path -> content) and /proc/self/cgroup."""
    root = tmp_path / "cgroup"
    root.mkdir()
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content + "\n")
    proc = tmp_path / "proc-self-cgroup"
    proc.write_text(proc_lines)
    return root, proc


V2_CONTAINER = "0::/\n"
V2_HOST = "0::/kubepods.slice/pod1.slice/cri-abc.scope\n"
V1 = "12:cpu,cpuacct:/\n4:memory:/\n"
V1_SPLIT = "2:cpuacct:/\n1:cpu:/\n0::/\n"  # hybrid, cpu on its own

CASES = [
    # (name, /proc/self/cgroup, files, host CPUs, affinity, quota, usable)
    ("v2-no-limit", V2_CONTAINER, {"cpu.max": "max 100000"}, 64, 64, None, 64),
    ("v2-two-cpus", V2_CONTAINER, {"cpu.max": "200000 100000"}, 64, 64, 2.0, 2),
    ("v2-one-and-a-half", V2_CONTAINER, {"cpu.max": "150000 100000"}, 64, 64, 1.5, 1),
    ("v2-half-a-cpu", V2_CONTAINER, {"cpu.max": "50000 100000"}, 64, 64, 0.5, 1),
    ("v2-quota-above-host", V2_CONTAINER, {"cpu.max": "800000 100000"}, 4, 4, 8.0, 4),
    ("v2-parent-is-tighter", V2_HOST, {
        "kubepods.slice/pod1.slice/cpu.max": "300000 100000",
        "kubepods.slice/pod1.slice/cri-abc.scope/cpu.max": "max 100000",
    }, 64, 64, 3.0, 3),
    ("v2-path-not-mounted", "0::/docker/abc\n", {"cpu.max": "400000 100000"}, 64, 64, 4.0, 4),
    ("v1-no-limit", V1, {"cpu,cpuacct/cpu.cfs_quota_us": "-1", "cpu,cpuacct/cpu.cfs_period_us": "100000"},
     16, 16, None, 16),
    ("v1-three-cpus", V1, {"cpu,cpuacct/cpu.cfs_quota_us": "300000", "cpu,cpuacct/cpu.cfs_period_us": "100000"},
     16, 16, 3.0, 3),
    ("v1-split-controllers", V1_SPLIT, {"cpu/cpu.cfs_quota_us": "200000", "cpu/cpu.cfs_period_us": "100000"},
     16, 16, 2.0, 2),
    ("affinity", V2_CONTAINER, {"cpu.max": "max 100000"}, 64, 3, None, 3),
    ("affinity-and-quota", V2_CONTAINER, {"cpu.max": "400000 100000"}, 64, 2, 4.0, 2),
    ("no-cgroup-files", V2_CONTAINER, {}, 8, 8, None, 8),
    ("garbage", V2_CONTAINER, {"cpu.max": "lots"}, 8, 8, None, 8),
]


@pytest.mark.parametrize(("proc", "files", "host", "affinity", "quota", "usable"),
                         [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_usable_cpus(tmp_path, proc, files, host, affinity, quota, usable):
    root, proc_file = fake_cgroup(tmp_path, proc, files)
    assert cgroup_cpu_quota(root, proc_file) == quota
    assert usable_cpus(root, proc_file, affinity=affinity, cpu_count=host) == usable


def test_no_proc_file_means_no_quota(tmp_path):
    assert cgroup_cpu_quota(tmp_path, tmp_path / "missing") is None
    assert usable_cpus(tmp_path, tmp_path / "missing", affinity=2, cpu_count=4) == 2


def test_this_machine_counts_at_least_one_and_at_most_the_host():
    import os

    assert 1 <= usable_cpus() <= (os.cpu_count() or 1)


@pytest.mark.parametrize(("workers", "usable", "started"), [(0, 3, ("supervisor", 3)), (0, 1, ("worker", 1)),
                                                            (2, 8, ("supervisor", 2))])
def test_workers_zero_starts_one_per_usable_cpu(monkeypatch, workers, usable, started):
    from hbserver import server
    from tests.conftest import make_config

    seen = []

    class FakeSupervisor:
        def __init__(self, config, count):
            seen.append(("supervisor", count))

        def run(self):
            return 0

    monkeypatch.setattr(server, "usable_cpus", lambda: usable)
    monkeypatch.setattr(server, "Supervisor", FakeSupervisor)
    monkeypatch.setattr(server, "run_worker", lambda config: seen.append(("worker", 1)) or 0)
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    assert server.serve(make_config(workers=workers)) == 0
    assert seen == [started]
