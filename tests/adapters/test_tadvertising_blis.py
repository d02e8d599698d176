"""T-Advertising (Blis) adapter: the publisher id set on the app or site, the supply partner header,
the typed re-encoding of the request, mtype typing and the price macro."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.tadvertising_blis import build
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "https://example.endpoint/"
ADAPTER = build(AdapterConfig("tadvertising_blis", ENDPOINT))
INFO = RequestInfo(bidder="tadvertising_blis")


def imp(imp_id: str = "i", publisher: Any = "p") -> dict[str, Any]:
    return {"id": imp_id, "banner": {"w": 1, "h": 2}, "ext": {"bidder": {"publisherId": publisher}}}


@pytest.mark.parametrize(
    ("top", "want"),
    [
        ({}, {"site": {"publisher": {"id": "p"}}}),
        (
            {"site": {"page": "x", "publisher": {"id": "old", "name": "n"}}},
            {"site": {"page": "x", "publisher": {"id": "p", "name": "n"}}},
        ),
        (
            {"app": {"bundle": "b"}, "site": {"page": "x"}},
            {"app": {"bundle": "b", "publisher": {"id": "p"}}, "site": {"page": "x"}},
        ),
    ],
)
def test_publisher(top, want):
    calls, bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": [imp(), imp("j", "q")], **top}, INFO)
    assert errors == []
    assert [(c.uri, c.imp_ids, dict(c.headers)) for c in calls] == [
        (ENDPOINT, ["i", "j"], {"Content-Type": "application/json", "X-Supply-Partner-Id": "p"})
    ]
    assert {key: bodies[0][key] for key in ("site", "app") if key in bodies[0]} == want


def test_request_goes_as_go_writes_it():
    request = {
        "id": "r",
        "imp": [{**imp(), "bidfloor": 0, "banner": {"w": 1, "api": []}}],
        "device": {"deviceType": 2, "dnt": 0},
        "regs": {"coppa": 0, "gdpr": 0},
        "unknown": 1,
    }
    _, bodies, _ = requests_of(ADAPTER, request, INFO)
    assert bodies[0] == {
        "id": "r",
        "imp": [{"id": "i", "banner": {"w": 1}, "ext": {"bidder": {"publisherId": "p"}}}],
        "site": {"publisher": {"id": "p"}},
        "device": {"devicetype": 2, "dnt": 0},
        "regs": {"gdpr": 0},
    }


@pytest.mark.parametrize(
    ("imps", "error"),
    [
        ([{"id": "i", "ext": "x"}], "Invalid imp.ext for impression index 0. Error Information: "),
        ([imp(publisher=1)], "Invalid imp.ext.bidder for impression index 0. Error Information: "),
    ],
)
def test_refused(imps, error):
    calls, _, errors = requests_of(ADAPTER, {"id": "r", "imp": imps}, INFO)
    assert calls == []
    assert [(e.message.startswith(error), e.code) for e in errors] == [(True, ErrorCode.BAD_INPUT)]


@pytest.mark.parametrize(
    ("mtype", "kind"), [(1, "banner"), (2, "video"), (4, "native"), (3, None), (0, None)],
)
def test_bid_type(mtype, kind):
    bid = {"id": "b", "impid": "i", "price": 0.5, "mtype": mtype, "adm": "x${AUCTION_PRICE}"}
    response, errors = bids_for(ADAPTER, {}, {"id": "r", "seatbid": [{"bid": [bid]}]})
    assert response is not None
    assert [(t.bid_type, t.bid["adm"]) for t in response.bids] == ([(kind, "x0.5")] if kind else [])
    assert [e.message for e in errors] == ([] if kind else ['Failed to parse media type of impression ID "i"'])
