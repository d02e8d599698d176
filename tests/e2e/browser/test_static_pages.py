"""GET /static/...: the sync helper pages and their script, served from memory (no browser needed)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hbserver.endpoints.static import CACHE_CONTROL

STATIC_DIR = Path(__file__).resolve().parents[3] / "hbserver" / "static"
PAGES = ("load-cookie.html", "load-cookie-with-consent.html")


@pytest.fixture
async def client(make_client):
    return await make_client()


@pytest.mark.parametrize(
    ("name", "content_type"),
    [
        ("load-cookie.html", "text/html; charset=utf-8"),
        ("load-cookie-with-consent.html", "text/html; charset=utf-8"),
        ("usersync.js", "application/javascript; charset=utf-8"),
    ],
)
async def test_serves_file_with_type_and_cache_headers(client, name, content_type):
    response = await client.get(f"/static/{name}")
    assert response.status == 200
    assert response.headers["Content-Type"] == content_type
    assert response.headers["Cache-Control"] == CACHE_CONTROL == "public, max-age=3600"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["X-Prebid"].startswith("hbserver/")
    assert await response.read() == (STATIC_DIR / name).read_bytes()


async def test_optout_page_is_the_file_with_a_fresh_token(client):
    response = await client.get("/static/optout.html")
    assert response.status == 200
    assert response.headers["Content-Type"] == "text/html; charset=utf-8"
    assert response.headers["Cache-Control"] == "no-store"  # the token is per visit
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["X-Frame-Options"] == "DENY"
    html = await response.text()
    [token] = set(re.findall(r'name="token" value="([^"]+)"', html))
    assert html == (STATIC_DIR / "optout.html").read_text().replace("{{token}}", token)


async def test_head_has_headers_and_no_body(client):
    response = await client.head("/static/load-cookie.html")
    assert response.status == 200
    assert response.headers["Content-Type"] == "text/html; charset=utf-8"
    assert await response.read() == b""


async def test_cors_headers_like_every_endpoint(client):
    response = await client.get("/static/usersync.js", headers={"Origin": "https://page.test"})
    assert response.headers["Access-Control-Allow-Origin"] == "https://page.test"
    assert response.headers["Access-Control-Allow-Credentials"] == "true"


@pytest.mark.parametrize(
    "path",
    [
        "/static/",
        "/static",
        "/static/optout.txt",
        "/static/../app.py",
        "/static/%2e%2e/app.py",
        "/static/..%2fapp.py",
        "/static/load-cookie.html/x",
        "/static//etc/passwd",
        "/static/LOAD-COOKIE.HTML",
        "/static/__init__.py",
    ],
)
async def test_only_the_listed_files_exist(client, path):
    response = await client.get(path)
    assert response.status == 404
    assert b"import" not in await response.read()


async def test_post_is_not_allowed(client):
    response = await client.post("/static/load-cookie.html", data=b"x")
    assert response.status == 405
    assert "GET" in response.headers["Allow"]


@pytest.mark.parametrize("name", PAGES)
def test_pages_load_only_the_shared_script_and_document_gdpr(name):
    html = (STATIC_DIR / name).read_text()
    assert re.findall(r"<script[^>]*\bsrc=\"([^\"]*)\"", html) == ["usersync.js"]
    assert not re.search(r"<(link|img|iframe)\b", html, re.I)
    assert not re.search(r"(?:src|href)=\"(?:https?:)?//", html)
    # The page documents that gdpr follows /cookie_sync (1 = in scope), unlike the specification's table.
    assert "1 = GDPR applies" in html and "reverse" in html


def test_script_writes_no_html():
    js = (STATIC_DIR / "usersync.js").read_text()
    for sink in ("innerHTML", "outerHTML", "document.write", "insertAdjacentHTML", "eval(", "Function("):
        assert sink not in js
