"""Headless Chromium harness: HTTPS servers on loopback under *.test names, and a browser.

Recipe (shared/reference/real-clients-and-performance.md §1.6, §7): Debian's /usr/bin/chromium
driven by Playwright for Python (its own driver; `playwright install` is never run), launched with
``--host-resolver-rules=MAP *.test 127.0.0.1`` so ``pbs.test``, ``bidder.test``, ``page.test``,
``cdn.test`` and ``cache.test`` are distinct sites on loopback; a persistent context whose profile allows
third-party cookies; every server on https with a self-signed certificate
(``--ignore-certificate-errors``); requests to any non-.test host are aborted.

Missing chromium, playwright, prebid-universal-creative or the Prebid.js bundle make the tests skip
with the reason, except under CI=true, where they fail (scripts/browser-deps.sh installs them).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime
import importlib.util
import json
import os
import shutil
import socket
import ssl
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from aiohttp import web

from tests import services

ROOT = Path(__file__).resolve().parents[3]
CHROMIUM = os.environ.get("HBS_TEST_CHROMIUM", "/usr/bin/chromium")
PUC_VERSION = "1.17.2"
PUC_DIST = ROOT / ".cache" / "npm" / f"prebid-universal-creative-{PUC_VERSION}" / "package" / "dist"
PBJS_VERSION = "11.36.0"
# Prebid.js with only prebidServerBidAdapter, built from the npm package's chunks by scripts/browser-deps.sh.
PBJS_BUNDLE = ROOT / ".cache" / "npm" / f"prebid-{PBJS_VERSION}-pbs.js"
DEPS_HINT = "run `bash scripts/browser-deps.sh` and `pip install -e '.[test]'` (playwright)"
TEST_HOSTS = ("pbs.test", "bidder.test", "page.test", "cdn.test", "cache.test")
WAIT_SECONDS = 15.0
CLOSE_SECONDS = 10.0


def require(ok: bool, reason: str) -> None:
    services.require(ok, reason, DEPS_HINT)


def require_browser() -> None:
    require(os.access(CHROMIUM, os.X_OK), f"chromium is not installed at {CHROMIUM}")
    require(importlib.util.find_spec("playwright") is not None, "the playwright Python package is not installed")


def require_puc() -> Path:
    require(
        (PUC_DIST / "load-cookie.html").is_file(),
        f"prebid-universal-creative@{PUC_VERSION} is not unpacked in {PUC_DIST.parent}",
    )
    return PUC_DIST


def require_prebidjs() -> Path:
    """The Prebid.js bundle (prebidServerBidAdapter only) that scripts/browser-deps.sh builds."""
    require(PBJS_BUNDLE.is_file(), f"the Prebid.js {PBJS_VERSION} bundle {PBJS_BUNDLE} has not been built")
    return PBJS_BUNDLE


# --- TLS ----------------------------------------------------------------------------------------


def make_certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for the test hosts: (cert.pem, key.pem)."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    if importlib.util.find_spec("cryptography") is not None:
        _certificate_with_cryptography(cert, key)
    else:
        openssl = shutil.which("openssl")
        require(openssl is not None, "neither the cryptography package nor openssl is available")
        san = ",".join(f"DNS:{host}" for host in TEST_HOSTS)
        subprocess.run(
            [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=pbs.test",
             "-addext", f"subjectAltName={san}", "-keyout", str(key), "-out", str(cert)],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
    return cert, key


def _certificate_with_cryptography(cert_path: Path, key_path: Path) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "pbs.test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(h) for h in TEST_HOSTS]), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )


def server_ssl_context(cert: Path, key: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context


# --- servers ------------------------------------------------------------------------------------


def bound_socket() -> socket.socket:
    """A listening-ready socket on 127.0.0.1 with a free port (known before the app is built)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@contextlib.asynccontextmanager
async def serve(
    app: web.Application, tls: ssl.SSLContext | None, sock: socket.socket | None = None
) -> AsyncIterator[int]:
    """Serve ``app`` over https (plain http when ``tls`` is None) on 127.0.0.1 (on ``sock`` if given);
    yields the port."""
    sock = sock or bound_socket()
    port = sock.getsockname()[1]
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=1)
    try:
        await runner.setup()
        await web.SockSite(runner, sock, ssl_context=tls).start()
        yield port
    finally:
        try:
            await asyncio.wait_for(runner.cleanup(), CLOSE_SECONDS)
        finally:
            sock.close()


class MockBidder:
    """A bidder's sync endpoint: ``GET /sync?redir=URL`` 302s to URL with ``$UID`` replaced by its id.

    It also answers any other path with a 1x1 GIF and records every request (path and query).
    """

    GIF = base64.b64decode("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7")

    def __init__(self, uid: str = "mock-uid-0001", allowed_redirect_prefix: str = "https://pbs.test:") -> None:
        self.uid = uid
        self.allowed_redirect_prefix = allowed_redirect_prefix
        self.hits: list[str] = []
        self.redirects: list[str] = []
        self.app = web.Application()
        self.app.router.add_get("/sync", self.sync)
        self.app.router.add_get("/{tail:.*}", self.pixel)

    async def sync(self, request: web.Request) -> web.StreamResponse:
        self.hits.append(request.path_qs)
        redirect = request.query.get("redir", "")
        if not redirect.startswith(self.allowed_redirect_prefix):
            return web.Response(status=400, text=f"bad redir {redirect!r}")
        location = redirect.replace("$UID", self.uid)
        self.redirects.append(location)
        raise web.HTTPFound(location)

    async def pixel(self, request: web.Request) -> web.Response:
        self.hits.append(request.path_qs)
        return web.Response(body=self.GIF, content_type="image/gif")


class PageServer:
    """The publisher (``page.test``) and CDN (``cdn.test``) origin: fixed pages plus optional files."""

    def __init__(self, files_dir: Path | None = None) -> None:
        self.pages: dict[str, str] = {}
        self.app = web.Application()
        if files_dir is not None:
            self.app.router.add_static("/files/", files_dir)
        self.app.router.add_get("/{name}", self.page)

    async def page(self, request: web.Request) -> web.Response:
        body = self.pages.get(request.path)
        if body is None:
            raise web.HTTPNotFound()
        return web.Response(text=body, content_type="text/html")


def publisher_page(iframe_src: str, consent_answer: dict[str, Any] | None = None) -> str:
    """A publisher page embedding ``iframe_src``; with ``consent_answer`` it answers the consent request."""
    from html import escape

    script = ""
    if consent_answer is not None:
        script = (
            "<script>window.addEventListener('message', function (e) {"
            " var d = e.data;"
            " if (d && d.sentinel === 'amp' && d.type === 'send-consent-data') {"
            f"  window.consentAsked = true; e.source.postMessage({json.dumps(consent_answer)}, '*'); }}"
            "});</script>"
        )
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>publisher</title></head><body>"
        f"<h1>publisher</h1>{script}"
        f'<iframe id="sync" width="1" height="1" src="{escape(iframe_src)}"></iframe>'
        "</body></html>"
    )


# --- the browser --------------------------------------------------------------------------------


def write_profile(profile: Path) -> None:
    """A Chromium profile that allows third-party cookies (reference §1.6)."""
    prefs = {"profile": {"cookie_controls_mode": 0, "block_third_party_cookies": False}}
    (profile / "Default").mkdir(parents=True, exist_ok=True)
    (profile / "Default" / "Preferences").write_text(json.dumps(prefs))


@contextlib.asynccontextmanager
async def browser_context(profile: Path) -> AsyncIterator[Any]:
    """A persistent headless Chromium context; requests to non-.test hosts are aborted."""
    require_browser()
    from playwright.async_api import async_playwright

    write_profile(profile)
    playwright = await asyncio.wait_for(async_playwright().start(), 60)
    context = None
    try:
        context = await playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=CHROMIUM,
            headless=True,
            ignore_https_errors=True,
            timeout=60_000,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--ignore-certificate-errors",
                "--host-resolver-rules=MAP *.test 127.0.0.1",
            ],
        )
        context.set_default_timeout(WAIT_SECONDS * 1000)

        async def only_test_hosts(route: Any) -> None:
            host = urlsplit(route.request.url).hostname or ""
            if host.endswith(".test") or not route.request.url.startswith(("http:", "https:")):
                await route.continue_()
            else:
                await route.abort()

        await context.route("**/*", only_test_hosts)
        yield context
    finally:
        try:
            if context is not None:
                await asyncio.wait_for(context.close(), CLOSE_SECONDS)
        finally:
            await asyncio.wait_for(playwright.stop(), CLOSE_SECONDS)


async def wait_for(
    probe: Callable[[], Awaitable[Any]], what: str, timeout: float = WAIT_SECONDS, detail: Callable[[], str] = str
) -> Any:
    """Poll ``probe`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = await probe()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}\n{detail()}", pytrace=False)
        await asyncio.sleep(0.1)


async def wait_for_cookie(context: Any, url: str, name: str, detail: Callable[[], str] = str) -> str:
    async def probe() -> str | None:
        for cookie in await context.cookies(url):
            if cookie["name"] == name:
                return cookie["value"]
        return None

    return await wait_for(probe, f"cookie {name!r} for {url}", detail=detail)


async def helper_frame(page: Any, marker: str = "load-cookie") -> Any:
    """The page's sync-helper iframe once it has loaded."""

    async def probe() -> Any:
        for frame in page.frames:
            if marker in frame.url and frame is not page.main_frame:
                return frame
        return None

    return await wait_for(probe, f"an iframe whose URL contains {marker!r}")


def decode_uids(value: str) -> dict[str, Any]:
    """The ``uids`` cookie: URL-safe base64 (padding optional) of a JSON object."""
    raw = value.strip('"')
    return json.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))


class OrtbBidders:
    """Mock OpenRTB bidders: ``POST /<seat>`` records the request and bids ``prices[seat]`` on every
    imp, a ``width`` x ``height`` banner whose markup is ``creative(seat)``."""

    def __init__(
        self, prices: dict[str, float], creative: Callable[[str], str], width: int = 300, height: int = 250
    ) -> None:
        self.prices = prices
        self.creative = creative
        self.size = (width, height)
        self.requests: dict[str, list[dict[str, Any]]] = {seat: [] for seat in prices}
        self.app = web.Application()
        self.app.router.add_post("/{seat}", self.bid)

    async def bid(self, request: web.Request) -> web.Response:
        seat = request.match_info["seat"]
        if seat not in self.prices:
            raise web.HTTPNotFound()
        body = json.loads(await request.read())
        self.requests[seat].append(body)
        width, height = self.size
        bids = [
            {
                "id": f"{seat}-bid-{n}",
                "impid": imp["id"],
                "price": self.prices[seat],
                "crid": f"cr-{seat}",
                "w": width,
                "h": height,
                "mtype": 1,
                "adm": self.creative(seat),
                "adomain": ["example.com"],
            }
            for n, imp in enumerate(body["imp"])
        ]
        return web.json_response({"id": body["id"], "cur": "USD", "seatbid": [{"seat": seat, "bid": bids}]})
