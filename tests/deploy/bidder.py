"""A mock appnexus bidder on loopback and the auction request the deployment tests send it."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class MockAppnexus:
    """An appnexus endpoint on loopback: one banner bid at 1.50 for every imp it is sent."""

    def __init__(self) -> None:
        self.received: list[dict] = []
        mock = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                mock.received.append(request)
                bids = [{"id": f"an-{imp['id']}", "impid": imp["id"], "price": 1.5, "adm": "<div>ad</div>",
                         "crid": "creative-1", "w": 300, "h": 250, "ext": {"appnexus": {"bid_ad_type": 0}}}
                        for imp in request["imp"]]
                body = json.dumps({"id": request["id"], "seatbid": [{"bid": bids}], "cur": "USD"}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/openrtb2"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def auction_request() -> dict:
    """A Prebid.js-shaped auction for one banner slot with the built-in appnexus bidder."""
    return {
        "id": "auction-1",
        "imp": [{"id": "slot-1", "banner": {"format": [{"w": 300, "h": 250}]},
                 "ext": {"prebid": {"bidder": {"appnexus": {"placementId": 12883451}}}}}],
        "site": {"page": "https://publisher.example/article", "publisher": {"id": "pub-1"}},
        "ext": {"prebid": {"targeting": {}, "cache": {"bids": {}}}},
        "tmax": 1000,
    }
