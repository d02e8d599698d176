"""Serving: each worker process listens on the shared port (SO_REUSEPORT) with uvloop; with
several workers a small supervisor forks them, restarts one that dies, and on SIGTERM/SIGINT
passes the signal on and waits for every worker to finish its in-flight requests. Each worker
first drains for ``shutdown_drain_seconds`` (readiness 503, still serving), then closes its listener.
From the signal on every response says ``Connection: close``; after the drain each connection is
closed once the request on it is answered (see :mod:`hbserver.web.connection`).

The supervisor also makes a run directory for the workers' shared files (``HBSERVER_RUN_DIR``:
the currency rates one worker fetched for all, see :mod:`hbserver.auction.bids.currency_fetch`),
removed at exit like its metrics directory. Each worker gets its slot's index (``HBSERVER_WORKER_INDEX``,
kept by the worker restarted in that slot) and the worker count (``HBSERVER_WORKERS``): with
``cache.store: memory`` each worker owns a shard of the keys (:mod:`hbserver.stores.cache.sharded`).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import glob
import logging
import os
import shutil
import signal
import socket
import tempfile
import time
from typing import Any

from aiohttp import web

from hbserver.appkeys import HEALTH
from hbserver.config import Config
from hbserver.cpus import usable_cpus
from hbserver.multiproc import MULTIPROC_ENV
from hbserver.web.connection import ConnectionLimits, ConnectionRunner, ConnectionServer
from hbserver.web.listener import BatchSite

log = logging.getLogger("hbserver.server")

# The directory the supervisor shares with its workers (files any worker may read or replace).
RUN_DIR_ENV = "HBSERVER_RUN_DIR"
# A worker's slot, 0..count-1 (kept when it is restarted), and the worker count.
WORKER_INDEX_ENV = "HBSERVER_WORKER_INDEX"
WORKER_COUNT_ENV = "HBSERVER_WORKERS"

LISTEN_BACKLOG = 2048
# A worker that dies sooner than this after starting counts towards a crash loop.
QUICK_EXIT_SECONDS = 5.0
MAX_QUICK_EXITS = 3
# The cyclic garbage collector's first-generation threshold while serving (CPython's default: 700).
# The collector counts allocations minus frees, but a free does not count while the count is 0, as
# it is just after each collection: the objects of the requests in flight at a collection, freed
# right after it, are never taken off. Every collection so brings the next one closer by about
# what was in flight, and each walks all of it. Measured on auction_full (bench.profile, 60 s):
# with 700 a collection every few requests (about 6 % of the CPU), with 10 000 one every ~150
# requests at ~4 ms (4.5 %), with 100 000 a few per minute (0.3 %). Real cyclic garbage is rare
# (none on the auction paths, none from bidder answers cut short: hbserver.web.bidclient._Failure),
# so what waits for a collection stays small: a lower threshold buys no memory (peak RSS measured
# beside CPU in the README, "Memory and the garbage collector").
GC_GEN0_THRESHOLD = 100_000
# At most this many connections are taken from the listening sockets' queues as they close.
MAX_LAST_ACCEPTS = LISTEN_BACKLOG * 2
# After shutdown_timeout_seconds, how long aiohttp gives requests still running, once cancelled, to end.
CUT_OFF_SECONDS = 0.1


def tune_gc() -> None:
    """Freeze what start-up made (config, registry, modules: never garbage) and collect less often.

    Frozen objects are left out of every later collection, so full collections stay short too.
    """
    gc.collect()
    gc.freeze()
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(GC_GEN0_THRESHOLD, gen1, gen2)


def serve(config: Config) -> int:
    """Run the server until SIGTERM/SIGINT; the process exit status."""
    workers = config.workers or usable_cpus()
    if workers == 1:
        prepare_operator_metrics_dir()
        return run_worker(config)
    return Supervisor(config, workers).run()


def prepare_operator_metrics_dir() -> bool:
    """Create the operator's ``PROMETHEUS_MULTIPROC_DIR`` (the container image sets one) and
    remove a previous run's files from it; False when none is set."""
    directory = os.environ.get(MULTIPROC_ENV)
    if not directory:
        return False
    os.makedirs(directory, exist_ok=True)
    for stale in glob.glob(os.path.join(directory, "*.db")):
        os.unlink(stale)
    return True


_early_stop = False


def _remember_stop(_signum: int, _frame: object) -> None:
    global _early_stop
    _early_stop = True


def run_worker(config: Config) -> int:
    import uvloop

    return uvloop.run(_serve(config))


async def _serve(config: Config) -> int:
    from hbserver.app import create_app  # imported here: metrics mode is fixed by now

    app = create_app(config)
    # shutdown_timeout: what aiohttp waits for before cutting requests still running once
    # close_connections has given them shutdown_timeout_seconds.
    runner = ConnectionRunner(
        app, ConnectionLimits.from_config(config.http_timeouts),
        access_log=None, handle_signals=False, shutdown_timeout=CUT_OFF_SECONDS,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    if _early_stop:  # a signal that came while the worker was still starting
        stop.set()
    await runner.setup()
    # the admin port first: once the public port answers, so does the admin port (probes, scrapes)
    admin_runner = await _start_admin(app, config) if config.admin.port else None
    if config.admin.port and admin_runner is None:
        await runner.cleanup()
        return 1
    # connections accepted in batches: uvloop takes one per loop turn (hbserver.web.listener)
    site = BatchSite(runner, config.host, config.port, backlog=LISTEN_BACKLOG, reuse_port=True)
    try:
        await site.start()
    except OSError as exc:
        log.error("cannot listen on %s:%d: %s", config.host, config.port, exc.strerror or exc)
        if admin_runner is not None:
            await admin_runner.cleanup()
        await runner.cleanup()
        return 1
    tune_gc()  # once listening: the collection (tens of ms) does not hold up the port
    for address in runner.addresses:
        log.info("listening on %s:%s", address[0], address[1], extra={"worker_pid": os.getpid()})
    await stop.wait()
    server = runner.server
    assert server is not None
    server.stop_keep_alive()  # from now on every answer says Connection: close
    await _drain(app, stop, config.shutdown_drain_seconds)
    log.info(
        "shutting down: finishing in-flight requests (up to %gs)",
        config.shutdown_timeout_seconds,
        extra={"worker_pid": os.getpid()},
    )
    await _stop_listening(runner, server)
    if not await server.close_connections(config.shutdown_timeout_seconds):
        log.warning("shutdown timeout: cutting %d connections off", len(server.connections),
                    extra={"worker_pid": os.getpid()})
    if admin_runner is not None:
        await admin_runner.cleanup()
    await runner.cleanup()
    log.info("stopped", extra={"worker_pid": os.getpid()})
    return 0


async def _start_admin(app: web.Application, config: Config) -> web.AppRunner | None:
    """The admin port's listener (``admin.port``), every worker sharing it; None when it cannot listen."""
    from hbserver.app import create_admin_app

    admin_runner = web.AppRunner(create_admin_app(app), access_log=None, handle_signals=False)
    await admin_runner.setup()
    site = web.TCPSite(admin_runner, config.host, config.admin.port, reuse_port=True, backlog=128)
    try:
        await site.start()
    except OSError as exc:
        log.error("cannot listen on %s:%d (admin.port): %s", config.host, config.admin.port, exc.strerror or exc)
        await admin_runner.cleanup()
        return None
    log.info("admin endpoints on %s:%d", config.host, config.admin.port, extra={"worker_pid": os.getpid()})
    return admin_runner


async def _drain(app: web.Application, stop: asyncio.Event, seconds: float) -> None:
    """After SIGTERM: /status/ready answers 503 while serving goes on for ``seconds``, so a load
    balancer moves away before the listener closes. A second signal ends the drain at once."""
    if seconds <= 0:
        return
    app[HEALTH].draining = True
    log.info("draining: /status/ready answers 503, serving goes on for %gs", seconds,
             extra={"worker_pid": os.getpid()})
    stop.clear()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)


async def _stop_listening(runner: web.AppRunner, server: ConnectionServer) -> None:
    """Close the listening sockets, but first take the connections waiting in their accept queues
    (the kernel would reset them, after their clients had sent requests) and serve them."""
    loop = asyncio.get_running_loop()
    held: list[socket.socket] = []
    for site in runner.sites:
        for sock in getattr(site._server, "sockets", None) or ():
            with contextlib.suppress(OSError):
                held.append(socket.socket(fileno=os.dup(sock.fileno())))
        await site.stop()
    queued: list[socket.socket] = []
    for sock in held:
        with sock:  # no await until it is closed: a connection made meanwhile is refused, not queued
            sock.setblocking(False)
            while len(queued) < MAX_LAST_ACCEPTS:
                try:
                    conn, _address = sock.accept()
                except OSError:  # BlockingIOError: the queue is empty
                    break
                queued.append(conn)
    for conn in queued:
        try:
            conn.setblocking(False)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            await loop.connect_accepted_socket(server, conn)
        except OSError:  # the client has gone already
            conn.close()


def can_listen(host: str, port: int) -> str | None:
    """None when ``host:port`` can be bound with SO_REUSEPORT, else the reason."""
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        return str(exc)
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        try:
            sock.bind(address)
        except OSError as exc:
            return exc.strerror or str(exc)
    return None


class Supervisor:
    def __init__(self, config: Config, workers: int) -> None:
        self.config = config
        self.count = workers
        self.children: dict[int, float] = {}  # pid -> start time
        self.slots: dict[int, int] = {}  # pid -> worker index
        self.stopping = False
        self._own_metrics_dir: str | None = None
        self._run_dir: str | None = None
        self._restarts: Any = None  # prometheus_client Counter, made on the first restart

    def run(self) -> int:
        for port in (self.config.port, self.config.admin.port):
            problem = can_listen(self.config.host, port) if port else None
            if problem:
                log.error("cannot listen on %s:%d: %s", self.config.host, port, problem)
                return 1
        self._prepare_metrics_dir()
        self._prepare_run_dir()
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._on_signal)
        try:
            for index in range(self.count):
                self._spawn(index)
            return self._wait()
        finally:
            self._remove_dirs()

    def _remove_dirs(self) -> None:
        for directory in (self._own_metrics_dir, self._run_dir):
            if directory:
                shutil.rmtree(directory, ignore_errors=True)
        if self._run_dir and os.environ.get(RUN_DIR_ENV) == self._run_dir:
            del os.environ[RUN_DIR_ENV]
        self._run_dir = None

    def _prepare_run_dir(self) -> None:
        """A fresh private directory for the workers' shared files, named in ``HBSERVER_RUN_DIR``."""
        directory = self._run_dir = tempfile.mkdtemp(prefix="hbserver-run-")
        os.environ[RUN_DIR_ENV] = directory

    def _prepare_metrics_dir(self) -> None:
        if not prepare_operator_metrics_dir():
            directory = self._own_metrics_dir = tempfile.mkdtemp(prefix="hbserver-metrics-")
            os.environ[MULTIPROC_ENV] = directory

    def _spawn(self, index: int) -> None:
        pid = os.fork()
        if pid == 0:  # the worker
            code = 1
            try:
                os.environ[WORKER_INDEX_ENV] = str(index)
                os.environ[WORKER_COUNT_ENV] = str(self.count)
                # Until the worker's event loop takes the signals over, remember a stop request
                # (a worker signalled while starting must still exit cleanly).
                signal.signal(signal.SIGTERM, _remember_stop)
                signal.signal(signal.SIGINT, _remember_stop)
                code = run_worker(self.config)
            except BaseException:
                log.exception("worker %d failed", os.getpid())
            finally:
                logging.shutdown()
                os._exit(code)
        self.children[pid] = time.monotonic()
        self.slots[pid] = index
        log.info("started worker %d", pid)

    def _count_restart(self) -> None:
        """``worker_restarts``: written to the shared metrics directory under the supervisor's pid,
        so the workers' /metrics sums it in (each worker exports the family with 0 of its own)."""
        from prometheus_client import CollectorRegistry, Counter

        if self._restarts is None:
            prometheus = self.config.metrics.prometheus
            self._restarts = Counter(
                "worker_restarts", "Workers the supervisor restarted after an unexpected exit.",
                namespace=prometheus.namespace, subsystem=prometheus.subsystem, registry=CollectorRegistry(),
            )
        self._restarts.inc()

    def _on_signal(self, signum: int, _frame: object) -> None:
        if not self.stopping:
            log.info("received %s: stopping %d workers", signal.Signals(signum).name, len(self.children))
        self.stopping = True
        for pid in list(self.children):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    def _wait(self) -> int:
        from prometheus_client.multiprocess import mark_process_dead

        status = 0
        quick_exits = 0
        while self.children:
            try:
                pid, wait_status = os.wait()
            except ChildProcessError:
                break
            started = self.children.pop(pid, None)
            if started is None:
                continue
            index = self.slots.pop(pid)
            code = os.waitstatus_to_exitcode(wait_status)
            mark_process_dead(pid)
            if self.stopping:
                if code != 0:
                    log.error("worker %d exited with status %d while stopping", pid, code)
                    status = 1
                continue
            log.error("worker %d exited unexpectedly with status %d", pid, code)
            quick_exits = quick_exits + 1 if time.monotonic() - started < QUICK_EXIT_SECONDS else 0
            if quick_exits >= MAX_QUICK_EXITS:
                log.error("workers keep failing at start; giving up")
                self._on_signal(signal.SIGTERM, None)
                status = 1
                continue
            time.sleep(min(quick_exits, 3) * 0.5)
            if not self.stopping:
                self._count_restart()
                self._spawn(index)
        return status
