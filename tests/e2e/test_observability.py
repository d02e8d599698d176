"""Real processes, two workers: the admin port carries /metrics, /version and readiness while
the public port stops serving /metrics; scrapes running concurrently with traffic lose no count;
the runtime figures are summed over the live workers; a restarted worker is counted."""

from __future__ import annotations

import os
import signal
import threading
import time

import orjson
import pytest

from hbserver import __version__
from hbserver.metrics import FLUSH_INTERVAL_SECONDS
from tests.e2e.helpers import Server, free_port, get
from tests.e2e.test_processes import metric_value


@pytest.fixture
def two_workers(tmp_path):
    admin = free_port()
    server = Server(
        "--workers", "2",
        env={"HBS_ADMIN__PORT": str(admin), "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics")},
        cwd=tmp_path,
    )
    server.wait_ready()
    server.admin = f"http://127.0.0.1:{admin}"  # type: ignore[attr-defined]
    yield server
    server.stop()


def wait_for(predicate, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.2)


def scrape(server: Server) -> str:
    status, body = get(server.admin + "/metrics")  # type: ignore[attr-defined]
    assert status == 200
    return body.decode()


@pytest.mark.parametrize(
    ("port", "path", "status"),
    [
        ("admin", "/metrics", 200),
        ("admin", "/version", 200),
        ("admin", "/status/ready", 204),
        ("admin", "/currency/rates", 200),
        ("admin", "/openrtb2/auction", 404),  # the admin port serves nothing else
        ("main", "/metrics", 404),  # moved off the public port
        ("main", "/version", 404),
        ("main", "/status/ready", 204),
    ],
)
def test_admin_port_routes(two_workers, port, path, status):
    base = two_workers.admin if port == "admin" else two_workers.base
    assert get(base + path)[0] == status


def test_version_names_the_release_and_revision(two_workers):
    status, body = get(two_workers.admin + "/version")
    answer = orjson.loads(body)
    assert status == 200
    assert answer["version"] == __version__
    assert answer["revision"] and isinstance(answer["revision"], str)


def test_concurrent_scrapes_lose_no_count(two_workers):
    """Before the fix /metrics applied pending counts from a worker thread while the loop added to
    them; with scrapes hammering both workers, every one of thousands of requests is counted."""
    per_thread, threads = 250, 8
    key = 'hbserver_http_requests{endpoint="/status",status="204"}'
    time.sleep(FLUSH_INTERVAL_SECONDS + 0.5)
    before = metric_value(scrape(two_workers), key)  # the readiness checks
    stop = threading.Event()
    failures: list[str] = []

    def traffic() -> None:
        for _ in range(per_thread):
            status = get(two_workers.base + "/status")[0]
            if status != 204:
                failures.append(str(status))

    def scraper() -> None:
        while not stop.is_set():
            scrape(two_workers)

    scrapers = [threading.Thread(target=scraper) for _ in range(3)]
    senders = [threading.Thread(target=traffic) for _ in range(threads)]
    for thread in scrapers + senders:
        thread.start()
    for thread in senders:
        thread.join(120)
    stop.set()
    for thread in scrapers:
        thread.join(30)
    assert not failures
    expected = before + per_thread * threads
    time.sleep(FLUSH_INTERVAL_SECONDS + 0.5)
    for _ in range(4):  # whichever worker answers reports the same sum
        text = scrape(two_workers)
        assert metric_value(text, key) == expected


def test_runtime_figures_are_summed_over_live_workers(two_workers):
    get(two_workers.base + "/status")

    def sampled() -> bool:
        text = scrape(two_workers)
        return metric_value(text, "hbserver_process_resident_memory_bytes") > 0 and metric_value(
            text, "hbserver_event_loop_lag_seconds_count") >= 8

    wait_for(sampled)
    text = scrape(two_workers)
    assert metric_value(text, "hbserver_workers") == 2
    rss = metric_value(text, "hbserver_process_resident_memory_bytes")
    assert 2 * 20e6 < rss < 2 * 2e9  # two Python processes' worth
    assert metric_value(text, "hbserver_process_open_fds") >= 2 * 5
    assert metric_value(text, "hbserver_process_cpu_seconds") > 0
    assert 'hbserver_gc_collections{generation="0"}' in text
    assert metric_value(text, "hbserver_in_flight_requests") >= 1  # the scrape itself
    assert metric_value(text, "hbserver_worker_restarts") == 0


def test_a_restarted_worker_is_counted(two_workers, tmp_path):
    files = sorted((tmp_path / "metrics").glob("gauge_livesum_*.db"))
    pids = {int(path.stem.rsplit("_", 1)[1]) for path in files}
    victim = next(pid for pid in pids if pid != two_workers.proc.pid)
    os.kill(victim, signal.SIGKILL)

    def restarted() -> bool:
        try:
            text = scrape(two_workers)
        except OSError:  # a connection the killed worker's socket had taken
            return False
        return metric_value(text, "hbserver_worker_restarts") == 1 and metric_value(text, "hbserver_workers") == 2

    wait_for(restarted, 30)
