"""Analytics: every record goes to every enabled module without blocking the response.

A record is a plain dict with ``event`` and ``ts`` (see :mod:`hbserver.analytics.records`).
Modules buffer records in memory (bounded; overflow is counted as dropped) and deliver them
from a background task; :meth:`Analytics.close` flushes what is left on shutdown.

Activity controls (PBS-Go ``analytics/build/build.go``): given the account's controls, a record
goes to a module only when ``reportAnalytics`` allows component type ``analytics`` named as the
module (``component``: PBS-Go's ``filelogger`` for the file module), checked without a request as
PBS-Go does. PBS-Go then scrubs the request it hands a module for ``transmitUfpd`` and
``transmitPreciseGeo``; hbserver's records carry no part of the request (no user or device
fields, ids, geo or IP), so there is nothing for those activities to remove.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from hbserver.privacy.activity import ActivityControl

log = logging.getLogger("hbserver.analytics")

REPORT_ANALYTICS = "reportAnalytics"
COMPONENT_ANALYTICS = "analytics"


class AnalyticsModule(Protocol):
    name: str  # the metrics label (file, http)

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
        # the name activity rules give each module: its ``component`` (PBS-Go's), else its name
        self._components = [(m, getattr(m, "component", m.name)) for m in self.modules]

    def log(self, record: dict[str, Any], activities: ActivityControl | None = None) -> None:
        """Hand ``record`` to each module ``reportAnalytics`` allows (``activities``: the account's
        controls; None, the account having none or not being known, allows every module)."""
        if activities is None:
            for module in self.modules:
                module.log(record)
            return
        for module, component in self._components:
            if activities.allowed(REPORT_ANALYTICS, COMPONENT_ANALYTICS, component):
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
