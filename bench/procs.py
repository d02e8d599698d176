"""Child processes that never outlive the harness.

Every child runs in its own session (process group), so a signal reaches it and everything it
forked, and Ctrl-C in the terminal reaches only the harness, which then stops the children in
order. :func:`stop_all` (called from ``finally`` and at exit) kills whatever is still running.
"""

from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

STOP_TIMEOUT_S = 10.0
# Readiness polls go straight to 127.0.0.1, never through an http_proxy from the environment.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))
_LIVE: list[ManagedProcess] = []


class ProcessError(Exception):
    """A child that would not start, or died."""


class ManagedProcess:
    """A child in its own process group, its output going to a log file."""

    def __init__(self, name: str, popen: subprocess.Popen[bytes], log_path: Path) -> None:
        self.name = name
        self.popen = popen
        self.log_path = log_path

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> int | None:
        """SIGTERM the group, then SIGKILL it after ``timeout_s``; the exit status."""
        try:
            if self.alive():
                _signal_group(self.pid, signal.SIGTERM)
                try:
                    self.popen.wait(timeout_s)
                except subprocess.TimeoutExpired:
                    pass
        finally:
            _signal_group(self.pid, signal.SIGKILL)  # the leader if stuck, and any stray child
            self.popen.wait()
            if self in _LIVE:
                _LIVE.remove(self)
        return self.popen.returncode

    def log_tail(self, lines: int = 15) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def start(
    name: str,
    argv: Sequence[str],
    *,
    cwd: Path,
    log_path: Path,
    env: Mapping[str, str] | None = None,
    cpu: int | None = None,
) -> ManagedProcess:
    """Start ``argv`` (pinned to ``cpu`` with taskset when given), stdout and stderr to ``log_path``."""
    if cpu is not None:
        argv = ["taskset", "-c", str(cpu), *argv]
    with open(log_path, "wb") as log:
        popen = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    process = ManagedProcess(name, popen, log_path)
    _LIVE.append(process)
    return process


def stop_all() -> None:
    """Stop every child still running, newest first."""
    while _LIVE:
        _LIVE[-1].stop(timeout_s=3.0)


atexit.register(stop_all)


def run_captured(argv: Sequence[str], timeout_s: float) -> tuple[int, str]:
    """Run a short-lived command in its own process group; its status and combined output.

    The group is killed if the command overruns ``timeout_s`` or the harness is interrupted.
    """
    popen = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        output, _ = popen.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _signal_group(popen.pid, signal.SIGKILL)
        popen.communicate()
        raise ProcessError(f"{argv[0]} did not finish within {timeout_s:.0f}s") from None
    finally:
        if popen.poll() is None:
            _signal_group(popen.pid, signal.SIGKILL)
            popen.wait()
    return popen.returncode, output.decode(errors="replace")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_http_ready(url: str, process: ManagedProcess, timeout_s: float = 30.0) -> None:
    """Poll ``url`` until it answers 2xx; raises ProcessError if the process dies or time runs out."""
    deadline = time.monotonic() + timeout_s
    last = "no answer"
    while time.monotonic() < deadline:
        if not process.alive():
            raise ProcessError(
                f"{process.name} exited with status {process.popen.returncode} before it was ready:\n"
                f"{process.log_tail()}"
            )
        try:
            with _DIRECT.open(url, timeout=2.0) as response:
                if 200 <= response.status < 300:
                    return
                last = f"status {response.status}"
        except urllib.error.HTTPError as exc:
            last = f"status {exc.code}"
        except (urllib.error.URLError, OSError) as exc:
            last = str(getattr(exc, "reason", exc))
        time.sleep(0.1)
    raise ProcessError(f"{process.name} not ready at {url} after {timeout_s:.0f}s ({last}):\n{process.log_tail()}")
