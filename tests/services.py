"""The real services some tests need (CONTRACT §1): skipped with a printed reason when one is not
reachable, except under ``CI=true``, where ``make test`` starts (or installs) it and a test that
still cannot reach it fails instead of skipping."""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import redis
from redis.crc import key_slot

REDIS_HOST, REDIS_PORT = "127.0.0.1", 6379
REDIS_URL = f"redis://{REDIS_HOST}:{REDIS_PORT}/0"
START_HINT = "`bash scripts/services.sh` starts it (`make test` does under CI=true)"


def require(ok: bool, reason: str, hint: str = START_HINT) -> None:
    """Skip with ``reason`` when ``ok`` is false; under CI=true fail instead (nothing is skipped there)."""
    if ok:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: nothing may be skipped; {hint})", pytrace=False)
    pytest.skip(f"{reason}; {hint}")


def listening(host: str, port: int, timeout: float = 1.0) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def require_redis() -> None:
    require(listening(REDIS_HOST, REDIS_PORT), f"Redis is not reachable at {REDIS_HOST}:{REDIS_PORT}")


# -- a Redis Cluster of our own (Debian's redis-server and redis-cli) -----------------------------

CLUSTER_TOOLS_HINT = "`bash scripts/services.sh` installs Debian's redis-server (with redis-cli) under CI=true"


def require_redis_cluster_tools() -> None:
    missing = [tool for tool in ("redis-server", "redis-cli") if shutil.which(tool) is None]
    require(not missing, f"{' and '.join(missing)} not installed (the cluster tests start their own)",
            CLUSTER_TOOLS_HINT)


def _free_cluster_port(taken: set[int]) -> int:
    """A loopback port that is free, with its cluster bus port (port + 10000) free too; both below
    Linux's ephemeral range (32768-), so no outgoing connection takes one before the node binds it."""
    for _ in range(1000):
        port = random.randrange(20000, 22700)
        if port in taken or port + 10000 in taken:
            continue
        try:
            for candidate in (port, port + 10000):
                with socket.socket() as probe:
                    probe.bind(("127.0.0.1", candidate))
        except OSError:
            continue
        return port
    raise RuntimeError("no free port pair for a cluster node")


@dataclass
class RedisClusterNodes:
    """Six redis-server processes on loopback: three masters, three replicas."""

    directory: Path
    ports: list[int]
    processes: dict[int, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def seeds(self) -> list[str]:
        return [f"127.0.0.1:{port}" for port in self.ports]

    def start_node(self, port: int) -> None:
        with open(self.directory / f"redis-{port}.log", "ab") as log:  # the process keeps its own copy
            self.processes[port] = subprocess.Popen(
                ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
                 "--cluster-config-file", str(self.directory / f"nodes-{port}.conf"),
                 "--cluster-node-timeout", "1000", "--save", "", "--appendonly", "no", "--daemonize", "no",
                 "--repl-diskless-sync-delay", "0", "--dir", str(self.directory)],
                stdout=log, stderr=subprocess.STDOUT, cwd=self.directory,
            )

    def client(self, port: int) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=port, socket_timeout=2, decode_responses=True)

    def call(self, port: int, *args: str) -> Any:
        with self.client(port) as client:
            return client.execute_command(*args)

    def view(self, port: int) -> list[dict[str, str]]:
        """``CLUSTER NODES`` as seen by ``port``: port, id, flags, master id, slots."""
        nodes = []
        for line in self.call(port, "CLUSTER", "NODES").splitlines():
            node_id, address, flags, master, *_, state = line.split()[:8]
            slots = line.split()[8:]
            nodes.append({"port": address.split("@")[0].rpartition(":")[2], "id": node_id, "flags": flags,
                          "master": master, "slots": " ".join(slots), "link": state})
        return nodes

    def masters(self, port: int | None = None) -> dict[int, int | None]:
        """{master port: its replica's port (None without one)} as one live node sees it."""
        view = self.view(port if port is not None else self.alive()[0])
        by_id = {node["id"]: node for node in view}
        out: dict[int, int | None] = {}
        for node in view:
            if "master" in node["flags"] and "fail" not in node["flags"].split(",") and node["slots"]:
                out[int(node["port"])] = None
        for node in view:
            if "slave" in node["flags"] and "fail" not in node["flags"].split(","):
                master = by_id.get(node["master"])
                if master and int(master["port"]) in out:
                    out[int(master["port"])] = int(node["port"])
        return out

    def slot_owners(self, port: int | None = None) -> list[int | None]:
        """For each of the 16384 slots, the port of the live master serving it (None: none)."""
        owners: list[int | None] = [None] * 16384
        for node in self.view(port if port is not None else self.alive()[0]):
            if "master" not in node["flags"] or "fail" in node["flags"].split(","):
                continue
            for part in node["slots"].split():
                low, _, high = part.partition("-")
                if low.isdigit():
                    owners[int(low):int(high or low) + 1] = [int(node["port"])] * (int(high or low) - int(low) + 1)
        return owners

    def listening(self) -> bool:
        """Whether every node accepts connections; a node that exited is an error with its log."""
        for port, process in self.processes.items():
            if process.poll() is not None:
                log = (self.directory / f"redis-{port}.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"redis-server on port {port} exited with {process.returncode}:\n{log}")
        return all(listening("127.0.0.1", port, 0.2) for port in self.ports)

    def alive(self) -> list[int]:
        return [port for port, process in self.processes.items() if process.poll() is None]

    def kill(self, port: int) -> None:
        """SIGKILL: no shutdown, no last words to the replica."""
        self.processes[port].kill()
        self.processes[port].wait(timeout=10)

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.kill()
        for process in self.processes.values():
            process.wait(timeout=10)

    def healthy(self) -> bool:
        """Every live node agrees: all slots served, three masters each with a synced replica."""
        try:
            for port in self.alive():
                info = self.call(port, "CLUSTER", "INFO")
                if "cluster_state:ok" not in info or "cluster_slots_assigned:16384" not in info:
                    return False
                masters = self.masters(port)
                if len(masters) != 3 or None in masters.values():
                    return False
                if any(set(node["flags"].split(",")) & {"fail", "fail?", "handshake", "noaddr"}
                       for node in self.view(port)):
                    return False
            for replica in self.masters().values():
                if self.call(replica, "INFO", "replication").get("master_link_status") != "up":
                    return False
        except (redis.RedisError, OSError):
            return False
        return True


    def replicating(self) -> bool:
        """Every master's replica acknowledges a write within the store's WAIT bound (the first writes of
        a fresh cluster can take longer while the replication stream settles)."""
        try:
            owners = self.slot_owners()
            for master in self.masters():
                probe = next(f"probe-{n}" for n in range(100_000) if owners[key_slot(f"probe-{n}".encode())] == master)
                with self.client(master) as client:  # SET and WAIT on one connection
                    pipe = client.pipeline(transaction=False)
                    pipe.execute_command("SET", probe, "1", "EX", "5")
                    pipe.execute_command("WAIT", "1", "100")
                    if pipe.execute()[1] < 1:
                        return False
        except (redis.RedisError, OSError):
            return False
        return True


def wait_until(condition: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {seconds} s")
        time.sleep(0.1)


@contextmanager
def running_redis_cluster(directory: Path) -> Iterator[RedisClusterNodes]:
    """Start six nodes, join them with ``redis-cli --cluster create`` (one replica each), wait
    until every node reports the cluster whole; stop them all afterwards."""
    require_redis_cluster_tools()
    taken: set[int] = set()
    ports = []
    for _ in range(6):
        ports.append(_free_cluster_port(taken))
        taken.update((ports[-1], ports[-1] + 10000))
    cluster = RedisClusterNodes(directory, ports)
    try:
        for port in cluster.ports:
            cluster.start_node(port)
        wait_until(cluster.listening, 10, "redis-server start")
        subprocess.run(
            ["redis-cli", "--cluster", "create", *cluster.seeds, "--cluster-replicas", "1", "--cluster-yes"],
            check=True, capture_output=True, timeout=60,
        )
        wait_until(cluster.healthy, 30, "cluster_state:ok with three synced replicas")
        wait_until(cluster.replicating, 10, "every replica acknowledging writes")
        yield cluster
    finally:
        cluster.stop()
