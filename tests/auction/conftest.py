"""The ``bidders`` fixture: one mock bidder server per test (tests/auction/helpers.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.auction.helpers import MockBidders


@pytest.fixture
async def bidders() -> AsyncIterator[MockBidders]:
    mock = MockBidders()
    await mock.server.start_server()
    yield mock
    await mock.server.close()
