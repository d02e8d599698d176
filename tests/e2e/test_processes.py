"""Real processes: graceful shutdown with a request in flight, several workers on one port with
metrics summed across them, a dead worker replaced, analytics flushed on shutdown."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import NamedTuple

import pytest
from prometheus_client.mmap_dict import MmapedDict

from hbserver.metrics import FLUSH_INTERVAL_SECONDS
from tests.e2e.helpers import Server, get


@pytest.fixture
def servers():
    started: list[Server] = []
    yield started
    for server in started:
        server.stop()


def start(servers: list[Server], *args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> Server:
    server = Server(*args, env=env, cwd=cwd)
    servers.append(server)
    server.wait_ready()
    return server


def metric_value(text: str, line_prefix: str) -> float:
    for line in text.splitlines():
        if line.startswith(line_prefix + " "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_sigterm_lets_the_request_in_flight_finish(servers, tmp_path):
    log = tmp_path / "analytics.jsonl"
    server = start(servers, env={"HBS_ANALYTICS__FILE__FILENAME": str(log)}, cwd=tmp_path)
    for i in range(5):
        assert get(f"{server.base}/event?t=win&b=bid-{i}&a=acc")[0] == 200
    result: dict = {}

    def slow_request() -> None:
        result["response"] = get(f"{server.base}/test/slow?s=1.5", timeout=10)

    thread = threading.Thread(target=slow_request)
    thread.start()
    time.sleep(0.4)  # the slow request is now in flight
    sent = time.monotonic()
    server.signal(signal.SIGTERM)
    time.sleep(0.3)
    with pytest.raises(OSError):  # no longer accepting new connections
        get(f"{server.base}/status", timeout=2)
    thread.join(10)
    assert result["response"] == (200, b"done")
    assert server.wait(15) == 0
    assert time.monotonic() - sent >= 0.9  # it waited for the request rather than cutting it off
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert sorted(r["bidid"] for r in records) == [f"bid-{i}" for i in range(5)]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_sigterm_under_load_drains_then_closes(servers, tmp_path, workers):
    """shutdown_drain_seconds: readiness answers 503 at once, every request (new or in flight)
    within the drain window still succeeds, then the listener closes and the process exits 0."""
    drain = 2.0
    server = start(servers, "--workers", workers, env={"HBS_SHUTDOWN_DRAIN_SECONDS": str(drain)}, cwd=tmp_path)
    assert get(f"{server.base}/status/ready")[0] == 204
    results: list[tuple[float, object]] = []  # (sent at, status or the connection error)
    stop_load = threading.Event()

    def load(worker: int) -> None:
        n = 0
        while not stop_load.is_set():
            sent = time.monotonic()
            try:
                outcome: object = get(f"{server.base}/event?t=win&b=load-{worker}-{n}&a=acc", timeout=5)[0]
            except OSError as exc:
                outcome = exc
                time.sleep(0.05)
            results.append((sent, outcome))
            n += 1

    slow: dict = {}
    threads = [threading.Thread(target=load, args=(i,)) for i in range(4)]
    threads.append(threading.Thread(target=lambda: slow.update(r=get(f"{server.base}/test/slow?s=3", timeout=15))))
    for thread in threads:
        thread.daemon = True
        thread.start()
    try:
        time.sleep(0.5)  # load running, the slow request in flight
        signalled = time.monotonic()
        server.signal(signal.SIGTERM)
        ready = []
        while time.monotonic() < signalled + 1.0:
            ready.append(get(f"{server.base}/status/ready", timeout=2)[0])
            if ready[-1] == 503:
                break
            time.sleep(0.02)
        assert ready[-1] == 503, ready
        assert get(f"{server.base}/status")[0] == 204  # liveness: a draining server is not dead
        time.sleep(drain + 0.8)
    finally:
        stop_load.set()
    for thread in threads:
        thread.join(15)
    assert server.wait(15) == 0
    assert slow["r"] == (200, b"done")  # in flight across the end of the drain, answered
    during = [outcome for sent, outcome in results if signalled <= sent < signalled + drain - 0.2]
    assert len(during) > 20 and all(outcome == 200 for outcome in during), during[:5]
    after = [outcome for sent, outcome in results if sent > signalled + drain + 0.4]
    assert after and all(isinstance(outcome, OSError) for outcome in after)


def test_shutdown_timeout_bounds_the_wait(servers, tmp_path):
    server = start(servers, env={"HBS_SHUTDOWN_TIMEOUT_SECONDS": "0.5"}, cwd=tmp_path)
    result: dict = {}

    def slow_request() -> None:
        try:
            result["response"] = get(f"{server.base}/test/slow?s=30", timeout=20)
        except OSError as exc:
            result["error"] = exc

    thread = threading.Thread(target=slow_request)
    thread.start()
    time.sleep(0.4)
    sent = time.monotonic()
    server.signal(signal.SIGINT)
    assert server.wait(15) == 0
    assert time.monotonic() - sent < 5
    thread.join(10)
    assert "response" not in result  # the 30 s request was cut off at the timeout


def counts_by_pid(metrics_dir: Path) -> dict[int, float]:
    """/event requests per worker, read from each worker's own multiprocess file."""
    out: dict[int, float] = {}
    for path in metrics_dir.glob("counter_*.db"):
        pid = int(path.stem.split("_")[1])
        for key, value, *_ in MmapedDict.read_all_values_from_file(str(path)):
            _name, sample, labels, *_ = json.loads(key)
            if sample == "hbserver_http_requests_total" and labels == {"endpoint": "/event", "status": "200"}:
                out[pid] = out.get(pid, 0) + value
    return out


def test_two_workers_share_the_port_and_metrics_are_summed(servers, tmp_path):
    metrics_dir = tmp_path / "metrics"
    log = tmp_path / "analytics.jsonl"
    server = start(
        servers, "--workers", "2",
        env={"PROMETHEUS_MULTIPROC_DIR": str(metrics_dir), "HBS_ANALYTICS__FILE__FILENAME": str(log)},
        cwd=tmp_path,
    )
    # The kernel spreads new connections over both workers once both listen; the second may
    # still be starting when the first answers, so batches go out until both have counted some.
    total = 0
    give_up = time.monotonic() + 30
    while True:
        for _ in range(60):
            assert get(f"{server.base}/event?t=win&b=bid-{total}&a=acc&f=i")[0] == 200
            total += 1
        time.sleep(FLUSH_INTERVAL_SECONDS + 0.5)  # each worker applies its counts within the interval
        per_worker = counts_by_pid(metrics_dir)
        if len(per_worker) == 2 or time.monotonic() > give_up:
            break
    assert len(per_worker) == 2, per_worker  # both workers answered
    assert all(n > 0 for n in per_worker.values())
    assert sum(per_worker.values()) == total
    for _ in range(6):  # whichever worker answers /metrics reports the sum
        status, body = get(server.base + "/metrics")
        text = body.decode()
        assert status == 200
        assert metric_value(text, 'hbserver_http_requests{endpoint="/event",status="200"}') == total
        assert metric_value(text, 'hbserver_event_notifications{type="win"}') == total
        assert metric_value(text, "hbserver_workers") == 2
    server.signal(signal.SIGTERM)
    assert server.wait(20) == 0
    lines = log.read_text().splitlines()
    assert sorted(json.loads(line)["bidid"] for line in lines) == sorted(f"bid-{i}" for i in range(total))


def test_workers_sum_metrics_with_the_supervisors_own_metrics_directory(servers, tmp_path):
    """Without PROMETHEUS_MULTIPROC_DIR set by the operator the supervisor makes one itself."""
    assert "PROMETHEUS_MULTIPROC_DIR" not in os.environ
    server = start(servers, "--workers", "2", cwd=tmp_path)
    total = 60
    for i in range(total):
        assert get(f"{server.base}/event?t=imp&b=bid-{i}&a=acc")[0] == 200
    time.sleep(FLUSH_INTERVAL_SECONDS + 0.5)
    for _ in range(6):
        text = get(server.base + "/metrics")[1].decode()
        assert metric_value(text, 'hbserver_event_notifications{type="imp"}') == total
        assert metric_value(text, "hbserver_workers") == 2
    server.signal(signal.SIGTERM)
    assert server.wait(20) == 0


def test_the_supervisor_does_not_import_prometheus_client():
    """prometheus-client fixes its metrics mode at import: the supervisor must decide first."""
    code = "import sys, hbserver.cli, hbserver.server; sys.exit('prometheus_client' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], timeout=60).returncode == 0


def worker_pids(master: int) -> set[int]:
    """The supervisor's children: its workers, and nothing else (the memory cache store's shards
    are in the workers)."""
    children = Path(f"/proc/{master}/task/{master}/children")
    return {int(pid) for pid in children.read_text().split()}


def test_a_dead_worker_is_replaced(servers, tmp_path):
    server = start(servers, "--workers", "2", cwd=tmp_path)
    deadline = time.monotonic() + 60
    while server.output().count("listening on") < 2:  # the survivor must be serving already
        assert time.monotonic() < deadline, server.output()
        time.sleep(0.1)
    before = worker_pids(server.proc.pid)
    assert len(before) == 2
    victim = min(before)
    os.kill(victim, signal.SIGKILL)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        after = worker_pids(server.proc.pid)
        if len(after) == 2 and victim not in after:
            break
        time.sleep(0.1)
    assert victim not in after and len(after) == 2
    for _ in range(20):
        assert get(server.base + "/status")[0] == 204
    server.signal(signal.SIGTERM)
    assert server.wait(20) == 0
    assert "exited unexpectedly" in server.output()


def test_port_in_use_exits_non_zero(servers, tmp_path):
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        for workers in ("1", "2"):
            server = Server("--workers", workers, cwd=tmp_path, port=blocker.getsockname()[1])
            servers.append(server)
            assert server.wait(30) == 1
            assert "cannot listen on" in server.output()


def test_one_worker_with_an_operator_metrics_dir_that_does_not_exist_yet(servers, tmp_path):
    """The container image sets PROMETHEUS_MULTIPROC_DIR; one worker creates it and clears old files."""
    metrics_dir = tmp_path / "not" / "yet"
    server = start(servers, "--workers", "1", env={"PROMETHEUS_MULTIPROC_DIR": str(metrics_dir)}, cwd=tmp_path)
    assert get(f"{server.base}/event?t=win&b=x&a=acc")[0] == 200
    time.sleep(FLUSH_INTERVAL_SECONDS + 0.5)
    status, body = get(f"{server.base}/metrics")
    assert status == 200
    assert 'hbserver_http_requests{endpoint="/event",status="200"} 1.0' in body.decode()
    assert list(metrics_dir.glob("*.db"))


class Sent(NamedTuple):
    at: float
    new_connection: bool  # the request's connection was opened for it
    outcome: int | Exception  # the status, or what went wrong
    told_to_close: bool  # the response said Connection: close
    answered_at: float


class KeepAliveClient(threading.Thread):
    """Requests in a loop over one kept-alive connection, honouring Connection: close (then it
    opens a new one), recording each request."""

    def __init__(self, port: int, path: str, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.path = path
        self.stop = stop
        self.sent: list[Sent] = []

    def run(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        while not self.stop.is_set():
            new = conn.sock is None
            if new:
                try:
                    conn.connect()
                except OSError:  # the listener is closed: nothing was sent
                    time.sleep(0.02)
                    continue
            at = time.monotonic()
            try:
                conn.request("GET", self.path)
                response = conn.getresponse()
                response.read()
            except (OSError, http.client.HTTPException) as exc:
                self.sent.append(Sent(at, new, exc, False, time.monotonic()))
                conn.close()
                time.sleep(0.02)
                continue
            told_to_close = (response.getheader("Connection") or "").lower() == "close"
            self.sent.append(Sent(at, new, response.status, told_to_close, time.monotonic()))
            if told_to_close:
                conn.close()  # (http.client has closed it already)
        conn.close()


@pytest.mark.parametrize(("workers", "drain"), [("1", 0.0), ("2", 0.0), ("1", 1.5), ("2", 1.5)])
def test_sigterm_answers_every_request_read_on_kept_alive_connections(servers, tmp_path, workers, drain):
    """32 clients keep requests going over kept-alive connections through SIGTERM: no request sent
    on a connection the server had not told to close goes unanswered, and every answer from the
    signal on says Connection: close."""
    server = start(servers, "--workers", workers, env={"HBS_SHUTDOWN_DRAIN_SECONDS": str(drain)}, cwd=tmp_path)
    stop = threading.Event()
    # A few requests are in flight at any moment, the others come back to back.
    paths = [f"/test/slow?s={s}" for s in (0.3, 0.4, 0.5, 0.6)] + ["/status"] * 28
    clients = [KeepAliveClient(server.port, path, stop) for path in paths]
    for client in clients:
        client.start()
    time.sleep(1.0)
    signalled = time.monotonic()
    server.signal(signal.SIGTERM)
    try:
        assert server.wait(20) == 0
    finally:
        stop.set()
        for client in clients:
            client.join(15)
    sent = [request for client in clients for request in client.sent]
    before = [r for r in sent if r.at < signalled]
    assert len(before) > 200 and sum(r.new_connection for r in before) <= len(clients) * 2  # kept alive
    assert all(r.outcome in (200, 204) and not r.told_to_close for r in before if r.answered_at < signalled)
    # A request may fail only as the first on a new connection (made as the listener closed: the
    # server never read it). Clients do not reuse a connection they were told to close, so any
    # other failure is a request that the server dropped.
    dropped = [r for r in sent if isinstance(r.outcome, Exception) and not r.new_connection]
    assert not dropped, dropped[:5]
    after = [r for r in sent if r.answered_at > signalled + 0.1 and isinstance(r.outcome, int)]
    assert after, "nothing was answered after the signal"
    assert all(r.told_to_close for r in after), [r for r in after if not r.told_to_close][:5]
    if drain:
        during = [r for r in after if r.at < signalled + drain - 0.2]
        assert len(during) > 50 and all(r.outcome in (200, 204) for r in during)
    output = server.output()
    assert "shutdown timeout" not in output  # no connection had to be cut off
    assert "Traceback" not in output
