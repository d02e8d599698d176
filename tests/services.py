"""The real services some tests need (CONTRACT §1): skipped with a printed reason when one is not
reachable, except under ``CI=true``, where ``make test`` starts (or installs) it and a test that
still cannot reach it fails instead of skipping."""

from __future__ import annotations

import os
import socket

import pytest

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
