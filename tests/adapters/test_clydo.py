"""Clydo's own rule over its recipe: bids typed by a map of the request's imps (the calls, headers and
the answer's wording are recipe steps, tested there)."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig
from hbserver.adapters.clydo import build
from tests.adapters.helpers import bids_for

ADAPTER = build(AdapterConfig("clydo", "http://{{.Region}}.clydo.io/{{.PartnerId}}"))


@pytest.mark.parametrize(
    ("imps", "want"),
    [
        ([{"id": "i", "banner": {}, "video": {}, "audio": {}}], ["audio"]),
        ([{"id": "i", "banner": {}, "native": {}}], ["native"]),
        ([{"id": "x", "video": {}}], ["banner"]),
        ([{"id": "i", "banner": {}}, {"id": "i", "video": {}}], "Duplicate impression ID found"),
        ([{"id": "i"}], "Failed to get media type"),
    ],
)
def test_bid_type(imps, want):
    bid = {"id": "b", "impid": "i", "price": 1}
    response, errors = bids_for(ADAPTER, {"imp": imps}, {"cur": "EUR", "seatbid": [{"bid": [bid]}]})
    if isinstance(want, str):
        assert response is None and [e.message for e in errors] == [want]
    else:
        assert response is not None and response.currency == "EUR"
        assert [t.bid_type for t in response.bids] == want
