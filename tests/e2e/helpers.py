"""Starting real hbserver processes on free ports and waiting for them."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ServerProcess:
    """A server process started from ``command``, listening on ``port``; its output goes to a log
    file in ``log_dir``."""

    def __init__(
        self, command: list[str], port: int, cwd: Path, env: dict[str, str] | None = None,
        log_dir: Path | None = None,
    ) -> None:
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        self.log = open((log_dir or cwd) / f"server-{port}.log", "w+b")
        self.proc = subprocess.Popen(
            command, cwd=cwd, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def wait_ready(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"server exited with {self.proc.returncode}:\n{self.output()}")
            try:
                get(self.base + "/status", timeout=1)
                return
            except OSError:
                time.sleep(0.05)
        raise AssertionError(f"server not ready after {timeout}s:\n{self.output()}")

    def output(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def signal(self, signum: int = signal.SIGTERM) -> None:
        self.proc.send_signal(signum)

    def wait(self, timeout: float = 30) -> int:
        return self.proc.wait(timeout)

    def terminate(self, timeout: float = 30) -> int:
        """SIGTERM, then the exit status."""
        self.signal(signal.SIGTERM)
        return self.wait(timeout)

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(10)
        self.log.close()


class Server(ServerProcess):
    """A real server process (the ``hbserver`` command through the test launcher)."""

    def __init__(
        self, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None, port: int | None = None
    ) -> None:
        port = port or free_port()
        command = [sys.executable, "-m", "tests.e2e.launcher", "--host", "127.0.0.1", "--port", str(port), *args]
        super().__init__(command, port, ROOT, {**os.environ, **(env or {})}, log_dir=cwd or ROOT)


def get(url: str, timeout: float = 10) -> tuple[int, bytes]:
    """One GET on a fresh connection (urllib never reuses connections)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
