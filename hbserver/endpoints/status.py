"""GET /status (liveness) and GET /status/ready (readiness).

``/status`` answers 200 with ``status_response``, or 204 when it is empty (CONTRACT §2), for as
long as the server can run an auction: an application built from an incomplete installation
(see :mod:`hbserver.installation`) answers 503 naming the problem.

``/status/ready`` answers the same while the server takes traffic, and 503 from the moment a
SIGTERM starts the drain (``shutdown_drain_seconds``): a load balancer or Kubernetes stops
sending new requests while the server still answers the ones that come, then the listener closes.
Liveness stays healthy during the drain, so an orchestrator never kills a draining process.
"""

from __future__ import annotations

from aiohttp import web

from hbserver.web.errors import text_response
from hbserver.web.response import FastResponse


class Health:
    """What /status and /status/ready report; ``draining`` is set by the server on SIGTERM."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        self.draining = False


class StatusEndpoint:
    def __init__(self, status_response: str, health: Health) -> None:
        self.health = health
        self.text = status_response

    def _healthy(self) -> web.Response:
        if self.text:
            return FastResponse(text=self.text, content_type="text/plain")
        return FastResponse(status=204)

    async def handle_live(self, request: web.Request) -> web.Response:
        if self.health.problems:
            return text_response(503, "unhealthy: " + self.health.problems[0])
        return self._healthy()

    async def handle_ready(self, request: web.Request) -> web.Response:
        if self.health.draining:
            return text_response(503, "draining: shutting down")
        return await self.handle_live(request)
