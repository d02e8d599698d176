"""GET /version (admin): the release and the build revision, shaped as PBS-Go's ``/version``."""

from __future__ import annotations

import os
import subprocess
from functools import cache
from pathlib import Path

import orjson
from aiohttp import web

from hbserver import __version__

# Set at image build time (Dockerfile ARG); a source checkout asks git once instead.
REVISION_ENV = "HBSERVER_BUILD_REVISION"
NOT_SET = "not-set"


@cache
def build_revision() -> str:
    """The build's commit: the image's ``HBSERVER_BUILD_REVISION``, else a git checkout's HEAD, else not-set."""
    given = os.environ.get(REVISION_ENV, "").strip()
    if given:
        return given[:64]
    source = Path(__file__).resolve().parents[2]
    if not (source / ".git").exists():
        return NOT_SET
    try:
        done = subprocess.run(
            ["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return NOT_SET
    return done.stdout.strip()[:64] or NOT_SET


def version_body() -> bytes:
    return orjson.dumps({"revision": build_revision(), "version": __version__})


async def handle_version(request: web.Request) -> web.Response:
    return web.Response(body=version_body(), content_type="application/json")
