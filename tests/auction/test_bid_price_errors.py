"""A bid without a usable price, end to end (issue 38): PBS-Go's validateBid
(exchange/bidder_validate_bids.go) drops it; only when the response may carry debug does the
bidder get an error entry, with PBS-Go's text and no code of its own (999, errortypes.ReadCode of a
plain error). It records no seat-non-bid for it either (only the imp's generic "no bid" entry,
hbserver's PBS-Java-style extension, appears)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.auction.helpers import banner_imp, bid, bidder_config

NEGATIVE = "Bid \"neg\" does not contain a positive (or zero if there is a deal) 'price'"
ZERO = "Bid \"zero\" does not contain positive 'price' which is required since there is no deal set for this bid"


def request(debug: bool) -> dict[str, Any]:
    prebid: dict[str, Any] = {"targeting": {"pricegranularity": "medium"}, "returnallbidstatus": True}
    if debug:
        prebid["debug"] = True
    return {
        "id": "req-1",
        "tmax": 500,
        "imp": [banner_imp("imp-1")],
        "site": {"page": "https://news.example/a", "publisher": {"id": "1001"}},
        "device": {"ua": "test-agent", "ip": "203.0.113.77"},
        "ext": {"prebid": prebid},
    }


@pytest.mark.parametrize(
    ("bids", "debug", "errors"),
    [
        pytest.param([bid("imp-1", -1.5, "neg")], True, [{"code": 999, "message": NEGATIVE}], id="negative-debug"),
        pytest.param([bid("imp-1", -1.5, "neg")], False, None, id="negative-silent-without-debug"),
        pytest.param([bid("imp-1", 0, "zero")], True, [{"code": 999, "message": ZERO}], id="zero-without-deal-debug"),
        pytest.param(
            [bid("imp-1", 1.0, "good", crid="")],
            False,
            [{"code": 999, "message": 'Bid "good" missing creative ID'}],
            id="other-validateBid-errors-always",
        ),
    ],
)
async def test_unusable_price(make_client, bidders, bids, debug, errors):
    bidders.bids["alpha"] = bids
    client = await make_client(bidder_config(bidders, "alpha"))
    response = await client.post("/openrtb2/auction", data=json.dumps(request(debug)))
    assert response.status == 200
    data = await response.json()
    assert "seatbid" not in data
    assert data["ext"].get("errors", {}).get("alpha") == errors
    nonbids = data["ext"]["prebid"]["seatnonbid"]
    assert nonbids == [{"nonbid": [{"impid": "imp-1", "statuscode": 0}], "seat": "alpha"}]
