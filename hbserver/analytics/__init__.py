"""Analytics: every record goes to every enabled module without blocking the response.

A record is a plain dict with ``event`` and ``ts`` (see :mod:`hbserver.analytics.records`).
Modules buffer records in memory (bounded; overflow is counted as dropped) and deliver them
from a background task; :meth:`Analytics.close` flushes what is left on shutdown.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

log = logging.getLogger("hbserver.analytics")


class AnalyticsModule(Protocol):
    name: str

    def log(self, record: dict[str, Any]) -> None:
        """Accept a record; must return at once (no I/O)."""

    async def start(self) -> None:
        """Open resources and start delivering."""

    async def close(self) -> None:
        """Deliver everything accepted so far, then release resources."""


class Analytics:
    """Fans records out to the enabled modules."""

    def __init__(self, modules: list[AnalyticsModule]) -> None:
        self.modules = list(modules)
        self.enabled = bool(self.modules)

    def log(self, record: dict[str, Any]) -> None:
        for module in self.modules:
            module.log(record)

    async def start(self) -> None:
        for module in self.modules:
            await module.start()

    async def close(self) -> None:
        for module in self.modules:
            try:
                await module.close()
            except Exception:
                log.exception("analytics module %s failed to close", module.name)
