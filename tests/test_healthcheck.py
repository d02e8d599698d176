"""The container health check asks /status on the address the server was configured with."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hbserver.healthcheck import probe_url, server_arguments
from tests.e2e.helpers import Server


@pytest.mark.parametrize(
    ("cmdline", "args"),
    [
        (b"/opt/hbserver/bin/python\0/opt/hbserver/bin/hbserver\0--port\0009000\0", ["--port", "9000"]),
        (b"hbserver\0", []),
        (b"python3\0-m\0hbserver\0--config\0/etc/hbs.yaml\0", ["--config", "/etc/hbs.yaml"]),
        (b"/sbin/tini\0--\0hbserver\0--host\0::\0", ["--host", "::"]),
        (b"/bin/sh\0-c\0sleep 1\0", []),
        (b"", []),
    ],
    ids=["script", "bare", "module", "behind-init", "not-hbserver", "empty"],
)
def test_server_arguments(cmdline, args):
    assert server_arguments(cmdline) == args


@pytest.mark.parametrize(
    ("host", "port", "url"),
    [
        ("0.0.0.0", 8000, "http://127.0.0.1:8000/status"),
        ("", 8000, "http://127.0.0.1:8000/status"),
        ("::", 9000, "http://[::1]:9000/status"),
        ("10.1.2.3", 8080, "http://10.1.2.3:8080/status"),
        ("fd00::5", 80, "http://[fd00::5]:80/status"),
    ],
)
def test_probe_url(host, port, url):
    assert probe_url(host, port) == url


def healthcheck(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hbserver.healthcheck", *args], capture_output=True, text=True,
                          timeout=30, env={"PATH": "/usr/bin:/bin", **(env or {})})


def test_against_a_real_server_on_the_configured_port(tmp_path):
    server = Server(cwd=tmp_path)
    try:
        server.wait_ready()
        assert healthcheck("--port", str(server.port)).returncode == 0
        assert healthcheck(env={"HBS_PORT": str(server.port)}).returncode == 0
        config = tmp_path / "hbs.yaml"
        config.write_text(f"port: {server.port}\n")
        assert healthcheck("--config", str(config)).returncode == 0
        wrong = healthcheck("--port", str(server.port + 1 if server.port < 65535 else 1))
        assert wrong.returncode == 1 and wrong.stderr.startswith("unhealthy: http://127.0.0.1:")
    finally:
        server.stop()


def test_a_bad_configuration_is_unhealthy():
    done = healthcheck(env={"HBS_PORT": "not-a-port"})
    assert done.returncode == 1
    assert done.stderr == "unhealthy: configuration: port: must be an integer, got str 'not-a-port'\n"
