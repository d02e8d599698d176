"""The application-state keys the web layer reads (``app[KEY]``). They live here, below the
application, so that ``web/`` never imports :mod:`hbserver.appkeys` (which names every part of the
server); :mod:`hbserver.appkeys` re-exports them for the application."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

if TYPE_CHECKING:
    from hbserver.config import Config
    from hbserver.metrics import Metrics

CONFIG: web.AppKey[Config] = web.AppKey("config")
METRICS: web.AppKey[Metrics] = web.AppKey("metrics")
MAX_REQUEST_SIZE: web.AppKey[int] = web.AppKey("max_request_size")
