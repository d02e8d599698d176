"""The wheel is the product: built with ``pip wheel --no-deps .``, installed into a fresh venv
(from the lock, not editable, not from the source tree) and started in a scratch directory, it
must serve an auction with a built-in bidder, offer the built-in bidders' syncs and the helper
pages. A file left out of the package data fails here (it did for every bidder definition)."""

from __future__ import annotations

import json
import re
import subprocess
import urllib.request
import zipfile
from pathlib import Path

from hbserver.bidders.registry import build_registry
from hbserver.endpoints.optout import TOKEN_PLACEHOLDER
from hbserver.installation import STATIC_FILES
from tests.conftest import make_config
from tests.deploy.bidder import auction_request
from tests.e2e.helpers import ServerProcess, free_port, get

ROOT = Path(__file__).resolve().parents[2]


def post(url: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "text/plain"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, json.loads(response.read())


def test_the_wheel_carries_every_runtime_file(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    packaged = {
        *(f"hbserver/bidders/definitions/{p.name}" for p in (ROOT / "hbserver/bidders/definitions").glob("*.yaml")),
        *(f"hbserver/adapters/schemas/{p.name}" for p in (ROOT / "hbserver/adapters/schemas").glob("*.json")),
        *(f"hbserver/static/{name}" for name in STATIC_FILES),
        *(p.relative_to(ROOT).as_posix() for p in (ROOT / "hbserver/static/category-mapping").rglob("*.json")),
        "hbserver/py.typed",
    }
    assert packaged - names == set()


def test_installed_wheel_serves_auctions_syncs_and_pages(image, appnexus, tmp_path):
    scratch = tmp_path / "scratch"  # no sources here: whatever runs comes from the venv
    (scratch / "stored").mkdir(parents=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(scratch)}
    where = subprocess.run([str(image.python), "-c", "import hbserver.bidders as b; print(b.DEFINITIONS)"],
                           cwd=scratch, env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert where.startswith(str(image.venv)), where
    port = free_port()
    config = scratch / "hbserver.yaml"
    config.write_text(
        f"host: 127.0.0.1\nport: {port}\nexternal_url: http://127.0.0.1:{port}\n"
        f"stored_requests: {{filesystem: {{directorypath: {scratch / 'stored'}}}}}\n"
        f"adapters: {{appnexus: {{endpoint: '{appnexus.url}'}}}}\n"
    )
    server = ServerProcess([str(image.python), "-m", "hbserver", "--config", str(config)], port, scratch, env)
    try:
        server.wait_ready()
        status, answer = post(f"{server.base}/openrtb2/auction", auction_request())
        assert status == 200, answer
        [seat] = answer["seatbid"]
        assert seat["seat"] == "appnexus" and seat["bid"][0]["price"] == 1.5
        assert appnexus.received[0]["imp"][0]["ext"]["appnexus"]["placement_id"] == 12883451

        status, synced = post(f"{server.base}/cookie_sync", {})
        assert status == 200 and synced["status"] == "no_cookie"
        # one bidder per cookie key (which of equativ and smartadserver stands for theirs may vary)
        registry = build_registry(make_config())  # the source tree's built-in bidders
        offered = [registry.lookup(entry["bidder"]).sync_key for entry in synced["bidder_status"]]
        expected = {registry.lookup(code).sync_key for code in registry.syncable}
        assert len(expected) >= 20 and sorted(offered) == sorted(expected)

        for name in STATIC_FILES:
            status, body = get(f"{server.base}/static/{name}")
            source = (ROOT / "hbserver" / "static" / name).read_bytes()
            if TOKEN_PLACEHOLDER in source:  # the opt-out page: served with a per-view token
                token = re.search(rb'name="token" value="([^"]+)"', body).group(1)
                source = source.replace(TOKEN_PLACEHOLDER, token)
            assert (status, body) == (200, source), name
    finally:
        server.stop()
