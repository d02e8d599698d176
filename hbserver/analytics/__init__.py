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

The modules that send PBS-Go's payloads (:class:`PbsModule`: pubstack, agma, the file in PBS-Go's
format) do carry the request: each gets it through :func:`hbserver.analytics.pbs.request_for`,
scrubbed as PBS-Go's ``evaluateActivities`` does and with ``ext.prebid.analytics`` narrowed to its
own entry. The record carries what their objects are built from under :data:`SOURCE` (the auction's
details, an event's account), taken out here before any module sees the record.

Each account's own collector (account ``analytics.http``, host ``analytics.account_http``) is served by
:class:`~hbserver.analytics.account_http.AccountCollectors`, handed the record and its source.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Protocol

from hbserver.analytics.pbs import request_for
from hbserver.analytics.records import SOURCE

if TYPE_CHECKING:
    from hbserver.analytics.account_http import AccountCollectors
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


class PbsModule(Protocol):
    """A module that takes PBS-Go's analytics objects (hbserver.analytics.pbs) instead of records."""

    name: str  # the metrics label (pubstack, agma, file)
    component: str  # PBS-Go's module name: activity rules and ext.prebid.analytics name it

    def log_pbs(self, event: str, record: dict[str, Any], source: Any, request: dict[str, Any] | None) -> None:
        """Accept one event (``record``: hbserver's record; ``source``: the auction's details or the
        event's account; ``request``: the request as this module may see it); must return at once."""

    async def start(self) -> None: ...

    async def close(self) -> None: ...


class Analytics:
    """Fans records out to the enabled modules: hbserver's records to ``modules``, PBS-Go's objects
    to ``pbs_modules``, and each record whose account has a collector to ``accounts``."""

    def __init__(
        self, modules: list[AnalyticsModule], pbs_modules: list[PbsModule] | None = None,
        accounts: AccountCollectors | None = None,
    ) -> None:  # fmt: skip
        self.modules = list(modules)
        self.pbs_modules = list(pbs_modules or ())
        self.accounts = accounts
        self.enabled = bool(self.modules or self.pbs_modules or accounts is not None)
        # the name activity rules give each module: its ``component`` (PBS-Go's), else its name
        self._components = [(m, getattr(m, "component", m.name)) for m in self.modules]

    def log(self, record: dict[str, Any], activities: ActivityControl | None = None) -> None:
        """Hand ``record`` to each module ``reportAnalytics`` allows (``activities``: the account's
        controls; None, the account having none or not being known, allows every module)."""
        source = record.pop(SOURCE, None)
        if self.pbs_modules:
            self._log_pbs(record, source, activities)
        if self.accounts is not None and source is not None:
            try:
                self.accounts.log(record, source)
            except Exception:  # a record that cannot be sent must not fail the request
                log.exception("analytics module account_http could not take a %s record", record["event"])
        if activities is None:
            for module in self.modules:
                module.log(record)
            return
        for module, component in self._components:
            if activities.allowed(REPORT_ANALYTICS, COMPONENT_ANALYTICS, component):
                module.log(record)

    def _log_pbs(self, record: dict[str, Any], source: Any, activities: ActivityControl | None) -> None:
        details = source if record["event"] in ("auction", "amp") else None
        request = getattr(details, "request", None)
        account = getattr(details, "account", None)
        for module in self.pbs_modules:
            component = module.component
            if activities is not None and not activities.allowed(REPORT_ANALYTICS, COMPONENT_ANALYTICS, component):
                continue
            try:
                module.log_pbs(record["event"], record, source, request_for(request, component, activities, account))
            except Exception:  # a record that cannot be built must not fail the request
                log.exception("analytics module %s could not take a %s record", module.name, record["event"])

    async def start(self) -> None:
        for module in self.modules:
            await module.start()
        for pbs in self.pbs_modules:
            await pbs.start()

    async def close(self) -> None:
        if self.accounts is not None:
            try:
                await self.accounts.close()
            except Exception:
                log.exception("analytics module account_http failed to close")
        for pbs in self.pbs_modules:
            try:
                await pbs.close()
            except Exception:
                log.exception("analytics module %s failed to close", pbs.name)
        for module in self.modules:
            try:
                await module.close()
            except Exception:
                log.exception("analytics module %s failed to close", module.name)
