"""SynapseHX's own rules over its recipe: the first imp's tenantId as the endpoint's pid query
parameter, and bids typed by mtype, else by ext.prebid.type, in SynapseHX's words."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.synapsehx import build
from tests.adapters.helpers import bids_for, requests_of

ADAPTER = build(AdapterConfig("synapseHX", "https://s.example/bid/?z=1&pid=old"))


def test_the_call_names_the_first_imps_tenant_as_pid():
    imps = [{"id": "1", "banner": {}, "ext": {"bidder": {"tenantId": "t 1"}}}, {"id": "2", "ext": {}}]
    calls, bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": imps}, RequestInfo("synapseHX"))
    assert not errors and calls[0].uri == "https://s.example/bid/?pid=t+1&z=1"
    assert calls[0].headers["X-Openrtb-Version"] == "2.6" and [imp["id"] for imp in bodies[0]["imp"]] == ["1", "2"]


@pytest.mark.parametrize(
    ("bid", "typed"),
    [
        ({"mtype": 1}, "banner"),
        ({"mtype": 2, "ext": {"prebid": {"type": "banner"}}}, "video"),
        ({"mtype": 4}, "unsupported media type 4"),
        ({"ext": {"prebid": {"type": "video"}}}, "video"),
        ({"ext": {"prebid": {"type": "native"}}}, 'unsupported media type "native"'),
        ({"ext": {"prebid": 1}}, 'failed to parse impression "i" mediatype'),
        ({"ext": {}}, 'failed to parse impression "i" mediatype'),
        ({}, 'failed to parse impression "i" mediatype'),
    ],
)
def test_bids_are_typed_by_mtype_then_ext_prebid(bid, typed):
    answer = {"cur": "EUR", "seatbid": [{"bid": [{"id": "b", "impid": "i", "price": 1, **bid}]}]}
    response, errors = bids_for(ADAPTER, {}, answer)
    assert response.currency == "EUR"
    assert [t.bid_type for t in response.bids] + [e.message for e in errors] == [typed]


def test_an_answer_whose_first_seatbid_is_empty_is_none():
    assert bids_for(ADAPTER, {}, {"seatbid": [{"bid": []}, {"bid": [{"id": "b", "mtype": 1}]}]}) == (None, [])
