"""Fixtures for the browser tests."""

from __future__ import annotations

import ssl

import pytest

from tests.e2e.browser import harness


@pytest.fixture(scope="session")
def tls(tmp_path_factory: pytest.TempPathFactory) -> ssl.SSLContext:
    cert, key = harness.make_certificate(tmp_path_factory.mktemp("tls"))
    return harness.server_ssl_context(cert, key)
