"""Mabidder's own answer: items of ``Responses`` made into bids (float32 prices, omitempty fields),
their mediaType passed on as given, the last non-empty currency the answer's; decoding failures in
json-iterator's words (the call is a recipe step, tested there)."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.mabidder import build
from tests.adapters.helpers import bids_for, requests_of

ADAPTER = build(AdapterConfig("mabidder", "http://m.example/pbs"))
REQUEST = {"id": "r", "imp": [{"id": "1", "banner": {}, "ext": {"bidder": {"ppid": "p"}}}]}
ITEM = {
    "requestId": "1", "currency": "CAD", "width": 300, "height": 250, "creativeId": "c", "dealId": "d",
    "ad": "<a>", "mediaType": "banner", "meta": {"advertiserDomains": ["a.com"]}, "cpm": 0.1,
}  # fmt: skip


def test_one_call_without_headers():
    calls, bodies, errors = requests_of(ADAPTER, REQUEST, RequestInfo("mabidder"))
    assert errors == [] and calls[0].uri == "http://m.example/pbs" and calls[0].headers == {}
    assert bodies[0]["imp"][0]["ext"] == {"bidder": {"ppid": "p"}}


def test_items_become_bids():
    second = {"requestId": "2", "cpm": 2, "mediaType": "popup"}
    result, errors = bids_for(ADAPTER, REQUEST, {"Responses": [ITEM, second]})
    assert errors == [] and result.currency == "CAD"
    assert [(bid.bid, bid.bid_type) for bid in result.bids] == [
        (
            {"id": "1", "impid": "1", "price": 0.10000000149011612, "adm": "<a>", "adomain": ["a.com"], "crid": "c",
             "dealid": "d", "w": 300, "h": 250},
            "banner",
        ),
        ({"id": "2", "impid": "2", "price": 2.0}, "popup"),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (b"", "expect { or n, but found \x00"),
        (
            {"responses": 5},
            "cannot unmarshal mabidder.serverResponse.Responses: decode slice: expect [ or n, but found 5",
        ),
        ({"Responses": [{"cpm": "1"}]}, None),
        ({"Responses": [{"cpm": 1e39}]}, "cannot unmarshal mabidder.bidResponse.CPM: float32 overflow: 1e+39"),
    ],
)
def test_answers_that_do_not_decode(body, error):
    result, errors = bids_for(ADAPTER, REQUEST, body)
    if error is None:
        assert result is None and len(errors) == 1
    else:
        assert (result, [e.message for e in errors]) == (None, [error])


def test_null_answer_and_statuses():
    assert bids_for(ADAPTER, REQUEST, b"null")[0].bids == []
    assert bids_for(ADAPTER, REQUEST, b"", status=204) == (None, [])
    assert bids_for(ADAPTER, REQUEST, {}, status=500)[1][0].message.startswith("Unexpected status code: 500")
