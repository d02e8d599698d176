"""OpenWeb's own rules: the org found in the imps' params, the one call (the params' wording and the
answer are recipe steps)."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.openweb import build, org_of
from tests.adapters.helpers import bids_for, requests_of

ADAPTER = build(AdapterConfig("openweb", "https://ow.example/pbs"))


@pytest.mark.parametrize(
    ("org", "aid", "want"),
    [(" o\t", 5, "o"), ("  ", 5, ""), ("", 5, "5"), ("", -2, "-2"), ("", 0, None)],
)
def test_org_of(org, aid, want):
    assert org_of({"org": org, "aid": aid, "placementId": "p"}) == want


def _imp(imp_id, bidder):
    return {"id": imp_id, "banner": {}, "ext": {"bidder": bidder}}


@pytest.mark.parametrize(
    ("bidders", "uri", "error"),
    [
        ([{"placementId": "p"}, {"placementId": "q", "aid": 9}, {}], "https://ow.example/pbs?publisher_id=9", None),
        ([{"placementId": "p", "org": "x"}, {}], "https://ow.example/pbs?publisher_id=x", None),
        ([{"placementId": "p"}, {"aid": 9}], None, "checkExtAndExtractOrg: no placement id supplied"),
        ([{"placementId": "p"}], None, "checkExtAndExtractOrg: no org or aid supplied"),
        ([{"placementId": 1}], None, "checkExtAndExtractOrg: unmarshal ExtImpOpenWeb: cannot unmarshal"),
    ],
)
def test_the_call(bidders, uri, error):
    imps = [_imp(str(n), bidder) for n, bidder in enumerate(bidders)]
    calls, _, errors = requests_of(ADAPTER, {"id": "r", "imp": imps}, RequestInfo("openweb"))
    assert [c.uri for c in calls] == ([uri] if uri else [])
    assert [e.message[: len(error)] for e in errors] == ([error] if error else [])


def test_bids_typed_by_mtype():
    bids = [{"id": "1", "impid": "a", "price": 1, "mtype": 2}, {"id": "2", "impid": "a", "price": 1, "mtype": 4}]
    response, errors = bids_for(ADAPTER, {}, {"seatbid": [{"bid": bids}]})
    assert [t.bid_type for t in response.bids] == ["video"] and response.currency == "USD"
    assert [e.message for e in errors] == ["unsupported MType 4"]
