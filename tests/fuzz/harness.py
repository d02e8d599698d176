"""The fuzz suite's application: the real app in-process on a real socket, stored data for AMP, an
account for the auction's publisher with the Privacy Sandbox on, three generic bidders (alpha, beta,
gamma2) and the built-in appnexus and connectad on a mock that answers what the example says, and
every log record kept (a traceback logged is a finding too)."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Any

from aiohttp import ClientSession, web
from aiohttp.test_utils import TestServer

from hbserver.app import create_app
from tests.conftest import make_config

ROOT = Path(__file__).resolve().parents[2]
AUCTION = json.loads((ROOT / "bench" / "payloads" / "auction.json").read_text())
AMP_STORED = {"id": "amp-1", "imp": [{"id": "slot", "banner": {"format": [{"w": 300, "h": 250}]},
                                      "ext": {"prebid": {"bidder": {"alpha": {}, "beta": {}}}}}],
              "site": {"page": "https://amp.example/"}, "ext": {"prebid": {"targeting": {}, "cache": {"bids": {}}}}}
PUBLISHER = AUCTION["site"]["publisher"]["id"]
# the auction's account reads the browser's Privacy Sandbox headers (Sec-Browsing-Topics, Sec-Cookie-Deprecation)
ACCOUNT = {"privacy": {"privacysandbox": {"topicsdomain": "ads.example", "cookiedeprecation": {"enabled": True}}}}
GENERIC_BIDDERS = ("alpha", "beta", "gamma2")
BUILT_IN_BIDDERS = ("appnexus", "connectad")  # their endpoints moved to the mock


class Bidder:
    """A bidder whose next answer the example chooses: a status and a body."""

    def __init__(self) -> None:
        self.status = 204
        self.body = b""

    async def handle(self, request: web.Request) -> web.Response:
        await request.read()
        return web.Response(status=self.status, body=self.body, content_type="application/json")


class Records(logging.Handler):
    """Every record logged while the harness runs."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


class Harness:
    def __init__(self, tmp: Path) -> None:
        self.loop = asyncio.new_event_loop()
        self.bidder = Bidder()
        self.log = Records()
        data = tmp / "by_id"
        for kind in ("accounts", "stored_requests", "stored_imps", "stored_responses"):
            (data / kind).mkdir(parents=True)
        (data / "stored_requests" / "amp-1.json").write_text(json.dumps(AMP_STORED))
        (data / "accounts" / f"{PUBLISHER}.json").write_text(json.dumps(ACCOUNT))
        self.loop.run_until_complete(self._start(data))
        logging.getLogger().addHandler(self.log)

    async def _start(self, data: Path) -> None:
        # a bidder that takes any URL an adapter builds (params can make it long): its own 400s are no finding
        mock = web.Application(handler_args={"max_line_size": 1 << 20, "max_field_size": 1 << 20})
        mock.router.add_post("/{name}", self.bidder.handle)
        self.mock = TestServer(mock)
        await self.mock.start_server()
        adapters: dict[str, Any] = {
            name: {"alias_of": "generic", "endpoint": str(self.mock.make_url(f"/{name}"))} for name in GENERIC_BIDDERS
        }
        adapters.update({name: {"endpoint": str(self.mock.make_url(f"/{name}"))} for name in BUILT_IN_BIDDERS})
        config = make_config({"stored_requests": {"filesystem": {"directorypath": str(data)}},
                              "adapters": adapters, "max_request_size": 65536})
        self.app = TestServer(create_app(config))
        await self.app.start_server()
        self.session = ClientSession()

    def request(self, method: str, path: str, *, params: dict[str, str] | None = None, body: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, str]:
        async def call() -> tuple[int, str]:
            url = self.app.make_url(path)
            async with self.session.request(method, url, params=params, data=body, headers=headers or {},
                                            skip_auto_headers=("Content-Type",)) as response:
                return response.status, await response.text(errors="replace")

        return self.loop.run_until_complete(call())

    def tracebacks(self) -> list[str]:
        """The records logged with a traceback since the last call (then forgotten)."""
        found = [f"{r.name}: {r.getMessage()}" for r in self.log.records if r.exc_info]
        self.log.records.clear()
        return found

    def close(self) -> None:
        logging.getLogger().removeHandler(self.log)

        async def stop() -> None:
            await self.session.close()
            await self.app.close()
            await self.mock.close()

        self.loop.run_until_complete(stop())
        self.loop.close()


def below_500(status: int, text: str) -> None:
    assert status < 500, f"{status}: {text[:500]}"


def encode(value: Any) -> bytes:
    """JSON text for any generated value: big integers, lone surrogates (escaped) and nesting far
    beyond what orjson writes included (the stdlib encoder, with room to recurse)."""
    return json.dumps(value).encode()


sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))  # deep() values go 1,200 levels down
