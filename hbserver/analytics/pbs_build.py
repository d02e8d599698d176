"""The modules that take PBS-Go's objects, built from PBS-Go's keys (PBS-Go ``analytics/build``):
the file logger in PBS-Go's format (``analytics.file.format: pbs``), pubstack and agma."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hbserver.analytics.agma import AgmaModule
from hbserver.analytics.batching import Limits
from hbserver.analytics.pbs_file import PbsFileModule
from hbserver.analytics.pubstack import PubstackModule
from hbserver.config import AnalyticsBuffers, Config
from hbserver.gounits import go_duration, human_size
from hbserver.metrics import Metrics

if TYPE_CHECKING:
    from hbserver.analytics import PbsModule


def limits(buffers: AnalyticsBuffers) -> Limits:
    return Limits(buffers.count, human_size(buffers.size), go_duration(buffers.timeout))


def build_pbs_analytics(config: Config, metrics: Metrics) -> list[PbsModule]:
    analytics, shutdown = config.analytics, config.shutdown_timeout_seconds
    modules: list[PbsModule] = []
    if analytics.file.filename and analytics.file.format == "pbs":
        modules.append(PbsFileModule(analytics.file.filename, metrics))
    pubstack = analytics.pubstack
    if pubstack.enabled:
        modules.append(PubstackModule(
            pubstack.scopeid, pubstack.endpoint, go_duration(pubstack.configuration_refresh_delay),
            limits(pubstack.buffers), metrics, shutdown,
        ))  # fmt: skip
    agma = analytics.agma
    if agma.enabled:
        modules.append(AgmaModule(
            agma.endpoint.url, go_duration(agma.endpoint.timeout), agma.endpoint.gzip, agma.accounts,
            limits(agma.buffers), metrics, shutdown,
        ))  # fmt: skip
    return modules
