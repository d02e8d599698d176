"""Black box: the real ``hbserver`` process runs an auction with three of set A's bidders (medianet,
sovrn and adform, the catalogue alias of adf) pointed at a mock bidder over loopback, and
``/cookie_sync`` offers their sync URLs from their built-in definitions."""

from __future__ import annotations

import gzip
import json
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.helpers import Server

BIDDERS = {"medianet": {"cid": "8CUTSTCID", "crid": "999999999"}, "sovrn": {"tagid": "123456"},
           "adform": {"mid": "828782"}}
PRICES = {"medianet": 1.25, "sovrn": 2.5, "adform": 0.75}


class MockBidder(BaseHTTPRequestHandler):
    """POST /<bidder>: records the (decompressed) request, answers one banner bid per imp."""

    received: dict[str, dict[str, Any]] = {}

    def do_POST(self) -> None:
        name = self.path.strip("/").split("?")[0]
        raw = self.rfile.read(int(self.headers["Content-Length"]))
        if self.headers.get("Content-Encoding") == "gzip":
            raw = gzip.decompress(raw)
        request = json.loads(raw)
        self.received[name] = {"path": self.path, "headers": dict(self.headers), "body": request}
        bids = [
            {"id": f"{name}-{imp['id']}", "impid": imp["id"], "price": PRICES[name], "adm": f"<div>{name}</div>",
             "crid": f"cr-{name}", "w": 300, "h": 250, "mtype": 1, "ext": {"prebid": {"type": "banner"}}}
            for imp in request["imp"]
        ]
        answer = json.dumps({"id": request["id"], "seatbid": [{"seat": name, "bid": bids}], "cur": "USD"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def mock_bidder() -> Iterator[str]:
    MockBidder.received = {}
    server = ThreadingHTTPServer(("127.0.0.1", 0), MockBidder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def post(url: str, body: Any) -> tuple[int, Any]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, json.loads(response.read())


def test_auction_and_cookie_sync_with_three_new_bidders(mock_bidder: str, tmp_path: Path) -> None:
    config = {
        "external_url": "http://hb.example",
        "adapters": {name: {"endpoint": f"{mock_bidder}/{name}"} for name in BIDDERS},
    }
    config_file = tmp_path / "hbserver.yaml"
    config_file.write_text(yaml.safe_dump(config))
    server = Server("--config", str(config_file), cwd=tmp_path)
    try:
        server.wait_ready()
        auction = {
            "id": "req-1", "tmax": 1000,
            "imp": [{"id": "imp-1", "banner": {"format": [{"w": 300, "h": 250}]},
                     "ext": {"prebid": {"bidder": BIDDERS}}}],
            "site": {"page": "https://news.example/a", "publisher": {"id": "1001"}},
            "device": {"ua": "test-agent", "ip": "203.0.113.77"},
            "ext": {"prebid": {"targeting": {"pricegranularity": "medium"}}},
        }
        status, data = post(server.base + "/openrtb2/auction", auction)
        assert status == 200, data
        seats = {seat["seat"]: seat["bid"] for seat in data.get("seatbid", [])}
        assert set(seats) == set(BIDDERS), data.get("ext")
        assert {name: bids[0]["price"] for name, bids in seats.items()} == PRICES
        winner = next(bid for bid in seats["sovrn"] if bid["impid"] == "imp-1")
        assert winner["ext"]["prebid"]["targeting"]["hb_bidder"] == "sovrn"
        # each adapter's own request shape reached the mock
        got = MockBidder.received
        assert got["sovrn"]["body"]["imp"][0]["tagid"] == "123456"
        assert got["medianet"]["path"].startswith("/medianet?src=")  # its extra_info, as PBS-Go sends it
        assert got["adform"]["body"]["imp"][0]["tagid"] == "828782"  # adf's adapter, under the alias code
        assert got["medianet"]["headers"].get("Content-Encoding") == "gzip"  # endpointCompression: gzip

        status, synced = post(server.base + "/cookie_sync", {"bidders": list(BIDDERS), "gdpr": 0})
        assert status == 200, synced
        urls = {entry["bidder"]: entry["usersync"]["url"] for entry in synced["bidder_status"]}
        assert set(urls) == set(BIDDERS)
        assert urls["medianet"].startswith("https://hbx.media.net/checksync.php?")  # iframe first
        assert urls["sovrn"].startswith("https://ap.lijit.com/beacon/prebid-server/?")
        assert urls["adform"].startswith("https://c1.adform.net/cookie?redirect_url=http%3A%2F%2Fhb.example")
    finally:
        server.stop()
