"""The browser-test rig: hbserver, a mock bidder and page servers on *.test names, plus one browser."""

from __future__ import annotations

import contextlib
import json
import ssl
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from hbserver.app import create_app
from hbserver.config import deep_merge, load_config
from hbserver.web.endpoint import Routes
from tests.e2e.browser import harness
from tests.e2e.browser.harness import MockBidder, PageServer

TERMINAL_STATES = ("done", "error", "bad-endpoint", "no-consent")


@dataclass
class Rig:
    """hbserver on ``pbs.test``, a mock bidder on ``bidder.test``, pages on ``page.test``/``cdn.test``."""

    pbs_port: int
    bidder_port: int
    page_port: int
    context: Any
    pages: PageServer
    bidder: MockBidder
    network: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)

    @property
    def pbs(self) -> str:
        return f"https://pbs.test:{self.pbs_port}"

    def bidder_url(self, path: str) -> str:
        return f"https://bidder.test:{self.bidder_port}{path}"

    def page_url(self, path: str, host: str = "page.test") -> str:
        return f"https://{host}:{self.page_port}{path}"

    def helper_url(self, name: str, params: dict[str, str]) -> str:
        return f"{self.pbs}/static/{name}" + (f"?{urlencode(params)}" if params else "")

    def detail(self) -> str:
        return (
            "network:\n  "
            + "\n  ".join(self.network[-60:])
            + "\nconsole:\n  "
            + "\n  ".join(self.console[-30:])
            + f"\nbidder hits: {self.bidder.hits}\nbidder redirects: {self.bidder.redirects}"
        )

    async def open_page(self, html: str, name: str = "page") -> Any:
        """Serve ``html`` on page.test under a new path and load it in a new tab; returns the page."""
        path = f"/{name}-{len(self.pages.pages)}.html"
        self.pages.pages[path] = html
        page = await self.context.new_page()
        page.on("console", lambda msg: self.console.append(f"{msg.type}: {msg.text}"))
        page.on("pageerror", lambda exc: self.console.append(f"pageerror: {exc}"))
        await page.goto(self.page_url(path), wait_until="load")
        return page

    async def open_publisher(self, iframe_src: str, consent_answer: dict[str, Any] | None = None) -> Any:
        """Load a publisher page on page.test embedding ``iframe_src``; returns the page."""
        return await self.open_page(harness.publisher_page(iframe_src, consent_answer), "publisher")

    async def run_helper(
        self, name: str, params: dict[str, str], consent_answer: dict[str, Any] | None = None
    ) -> tuple[Any, Any, dict[str, Any]]:
        """Embed our helper page, wait until it has finished; (page, frame, window.hbsUserSyncResult)."""
        page = await self.open_publisher(self.helper_url(name, params), consent_answer)
        frame = await harness.helper_frame(page)

        async def finished() -> dict[str, Any] | None:
            result = await frame.evaluate("() => window.hbsUserSyncResult || null")
            return result if result and result["state"] in TERMINAL_STATES else None

        result = await harness.wait_for(finished, "the helper page to finish", detail=self.detail)
        return page, frame, result


@contextlib.asynccontextmanager
async def start_rig(
    tmp_path: Path,
    tls: ssl.SSLContext,
    config: dict[str, Any] | None = None,
    extra_routes: Callable[[Routes], None] | None = None,
    files_dir: Path | None = None,
) -> AsyncIterator[Rig]:
    """Start everything; ``config`` is merged over the base overrides (``{bidder}`` in strings is the
    mock bidder's origin)."""
    harness.require_browser()
    bidder = MockBidder()
    pages = PageServer(files_dir)
    data_dir = tmp_path / "by_id"
    for kind in ("accounts", "stored_requests", "stored_imps", "stored_responses"):
        (data_dir / kind).mkdir(parents=True)
    async with contextlib.AsyncExitStack() as stack:
        bidder_port = await stack.enter_async_context(harness.serve(bidder.app, tls))
        page_port = await stack.enter_async_context(harness.serve(pages.app, tls))
        pbs_sock = harness.bound_socket()
        pbs_port = pbs_sock.getsockname()[1]
        overrides = {
            "external_url": f"https://pbs.test:{pbs_port}",
            "stored_requests": {"filesystem": {"directorypath": str(data_dir)}},
        }
        raw = json.loads(json.dumps(config or {}).replace("{bidder}", f"https://bidder.test:{bidder_port}"))
        app_config = load_config(environ={}, overrides=deep_merge(overrides, raw))
        hooks = [extra_routes] if extra_routes else []
        await stack.enter_async_context(harness.serve(create_app(app_config, extra_routes=hooks), tls, pbs_sock))
        context = await stack.enter_async_context(harness.browser_context(tmp_path / "profile"))
        rig = Rig(pbs_port, bidder_port, page_port, context, pages, bidder)
        context.on("response", lambda r: rig.network.append(f"{r.status} {r.request.method} {r.url}"))
        context.on("requestfailed", lambda r: rig.network.append(f"FAILED {r.method} {r.url}: {r.failure}"))
        yield rig


class FakeCookieSync:
    """``POST /test/cookie_sync`` on hbserver: records each request and answers ``self.answer``."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.answer: dict[str, Any] = {"status": "ok", "bidder_status": []}

    async def handle(self, request: web.Request) -> web.Response:
        self.requests.append(
            {
                "content_type": request.headers.get("Content-Type", ""),
                "origin": request.headers.get("Origin"),
                "body": json.loads(await request.read() or b"null"),
            }
        )
        return web.json_response(self.answer)

    def add_routes(self, routes: Routes) -> None:
        routes.add("POST", "/test/cookie_sync", self.handle)


async def echo_cookies(request: web.Request) -> web.Response:
    return web.json_response({name: value for name, value in request.cookies.items()})


def add_echo_cookies(routes: Routes) -> None:
    routes.add("GET", "/test/cookies", echo_cookies)
