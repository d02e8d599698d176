"""BidMyAdz's own rules over its recipe: the request's checks and the one bid it takes (the call's
shape and the statuses' wording are recipe steps, tested there)."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.bidmyadz import build
from tests.adapters.helpers import bids_for

ADAPTER = build(AdapterConfig("bidmyadz", "http://b.example/x"))
IMP = {"id": "i", "banner": {}}


@pytest.mark.parametrize(
    ("request_", "errors"),
    [
        ({"imp": [IMP], "device": {"ipv6": "::1", "ua": "u"}}, []),
        (
            {"imp": [IMP, IMP], "device": {"ip": ""}},
            [
                "Bidder does not support multi impression",
                "IP/IPv6 is a required field",
                "User-Agent is a required field",
            ],
        ),
        ({"imp": [IMP]}, ["IP/IPv6 is a required field", "User-Agent is a required field"]),
    ],
)
def test_request_checks(request_, errors):
    calls, got = ADAPTER.make_requests(request_, RequestInfo("bidmyadz"))
    assert [e.message for e in got] == errors and len(calls) == (0 if errors else 1)


@pytest.mark.parametrize(
    ("bids", "want"),
    [
        ([{"ext": {"mediaType": "video"}}, {"ext": {"mediaType": "banner"}}], ["video"]),  # the first bid alone
        ([], "Empty SeatBid.Bids"),
        ([{}], "BidExt parsing error. expect { or n, but found"),
        ([{"ext": {"mediaType": 1}}], "BidExt parsing error. "),
        ([{"ext": {}}], "invalid BidType: "),
    ],
)
def test_the_bid(bids, want):
    answer = {"seatbid": [{"bid": [{"id": "b", "impid": "i", "price": 1, **bid} for bid in bids]}]}
    response, errors = bids_for(ADAPTER, {"imp": [IMP]}, answer)
    if isinstance(want, str):
        assert response is None and len(errors) == 1 and errors[0].message.startswith(want)
    else:
        assert [t.bid_type for t in response.bids] == want and not errors
