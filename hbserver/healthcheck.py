"""``python -m hbserver.healthcheck``: the container's HEALTHCHECK.

It asks ``GET /status`` of the server on the address the server was configured with: the same
configuration sources in the same order (``--config`` file, ``HBS_`` variables, flags). Without
arguments of its own it reads the server's command line from ``/proc/1/cmdline`` (in a container
the server is process 1), so ``docker run hbserver --port 9000`` is checked on 9000 too.
Exit 0 when the server answers 200 or 204, else 1 with one line saying why.
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request
from pathlib import Path

from hbserver.cli import parse_args
from hbserver.config import ConfigError, load_config

TIMEOUT_SECONDS = 2.0
PID1_CMDLINE = Path("/proc/1/cmdline")


def server_arguments(cmdline: bytes) -> list[str]:
    """The flags of an ``hbserver`` (or ``python -m hbserver``) command line, else []."""
    argv = [part.decode(errors="replace") for part in cmdline.split(b"\0") if part]
    for i, arg in enumerate(argv):
        if os.path.basename(arg) == "hbserver":
            return argv[i + 1 :]
        if arg == "-m" and i + 1 < len(argv) and argv[i + 1] == "hbserver":
            return argv[i + 2 :]
    return []


def probe_url(host: str, port: int) -> str:
    """The /status URL for a listening address (a wildcard is asked on loopback)."""
    if host in ("", "0.0.0.0"):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}/status"


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        try:
            argv = server_arguments(PID1_CMDLINE.read_bytes())
        except OSError:
            argv = []
    try:
        args = parse_args(argv)
    except SystemExit:
        args = parse_args([])
    try:
        config = load_config(args.config, os.environ, {"host": args.host, "port": args.port})
    except ConfigError as exc:
        sys.stderr.write(f"unhealthy: configuration: {exc.problems[0]}\n")
        return 1
    url = probe_url(config.host, config.port)
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as response:
            status = response.status
    except urllib.error.HTTPError as exc:
        status = exc.code
    except OSError as exc:
        sys.stderr.write(f"unhealthy: {url}: {exc}\n")
        return 1
    if status in (200, 204):
        return 0
    sys.stderr.write(f"unhealthy: {url} answered {status}\n")
    return 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:] or None))
