"""StackAdapt adapter: endpoint macros (query-escaped), shared publisher/supply ids, imp rewrites
from params, the publisher id, mtype typing, native adm unwrapping and the price macro."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.stackadapt import build, native_adm
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "http://localhost/br?publisher_id={{.PublisherID}}&supply_id={{.SupplyId}}"
ADAPTER = build(AdapterConfig("stackadapt", ENDPOINT))
INFO = RequestInfo(bidder="stackadapt")


def imp(imp_id: str = "i", **params: Any) -> dict[str, Any]:
    params = {"publisherId": "p", "supplyId": "s", **params}
    return {"id": imp_id, "banner": {"w": 1, "h": 1}, "ext": {"bidder": params}}


@pytest.mark.parametrize(
    ("publisher", "supply", "uri"),
    [
        ("p", "s", "http://localhost/br?publisher_id=p&supply_id=s"),
        ("pub&1", "ssp 1", "http://localhost/br?publisher_id=pub%261&supply_id=ssp+1"),
    ],
)
def test_endpoint(publisher, supply, uri):
    calls, _, errors = requests_of(ADAPTER, {"id": "r", "imp": [imp(publisherId=publisher, supplyId=supply)]}, INFO)
    assert errors == []
    assert [c.uri for c in calls] == [uri]


@pytest.mark.parametrize(
    ("params", "want"),
    [
        ({"placementId": "t"}, {"tagid": "t"}),
        ({"bidfloor": 1.5}, {"bidfloor": 1.5, "bidfloorcur": "USD"}),
        ({"bidfloor": 0}, {}),
        ({"banner": {"expdir": [1, 2]}}, {"banner": {"w": 1, "h": 1, "expdir": [1, 2]}}),
        ({"banner": {"expdir": []}}, {}),
    ],
)
def test_imp_rewrites(params, want):
    _, bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": [imp(**params)]}, INFO)
    assert errors == []
    assert bodies[0]["imp"][0] == {**imp(**params), **want}


@pytest.mark.parametrize(
    ("request_top", "want"),
    [
        ({"site": {"page": "x"}}, {"site": {"page": "x", "publisher": {"id": "p"}}}),
        ({"site": {"publisher": {"id": "old", "name": "n"}}}, {"site": {"publisher": {"id": "p", "name": "n"}}}),
        ({"app": {"publisher": {"id": "old"}}}, {"app": {"publisher": {"id": "p"}}}),
    ],
)
def test_publisher_id(request_top, want):
    _, bodies, _ = requests_of(ADAPTER, {"id": "r", "imp": [imp()], **request_top}, INFO)
    assert {key: bodies[0][key] for key in want} == want


@pytest.mark.parametrize(
    ("imps", "error"),
    [
        ([imp("a"), imp("b", supplyId="other")], "imp[1]: all imps must have the same publisherId and supplyId"),
        ([{"id": "a", "ext": {"bidder": "x"}}], "imp[0]: unable to unmarshal bidder ext: "),
        ([{"id": "a", "ext": 1}], "imp[0]: unable to unmarshal ext: "),
        ([imp(publisherId=1)], "imp[0]: unable to unmarshal bidder ext: "),
        ([imp(banner={"expdir": "x"})], "imp[0]: unable to unmarshal bidder ext: "),
    ],
)
def test_refused(imps, error):
    calls, _, errors = requests_of(ADAPTER, {"id": "r", "imp": imps}, INFO)
    assert calls == []
    assert [(e.message.startswith(error), e.code) for e in errors] == [(True, ErrorCode.BAD_INPUT)]


@pytest.mark.parametrize(
    ("adm", "want"),
    [
        ('{"native":{"ver":"1.2"}}', '{"ver":"1.2"}'),
        ('{"a": 1, "native" : {"x": [1]} }', '{"x": [1]}'),
        ('{"ver":"1.2"}', '{"ver":"1.2"}'),
        ("<div/>", "<div/>"),
    ],
)
def test_native_adm(adm, want):
    assert native_adm(adm) == want


@pytest.mark.parametrize(
    ("bid", "kind", "error"),
    [
        ({"mtype": 1, "adm": "p=${AUCTION_PRICE}", "nurl": "n${AUCTION_PRICE}"}, "banner", None),
        ({"mtype": 4, "adm": '{"native":{"a":1}}'}, "native", None),
        ({"mtype": 4, "adm": '{"native":"x"}'}, None, "unable to get native adm"),
        ({"mtype": 4, "adm": '{"native":'}, None, "unable to unmarshal native adm"),
        ({"mtype": 99}, None, "unsupported MType 99"),
        ({}, None, "unsupported MType 0"),
    ],
)
def test_bids(bid, kind, error):
    the_bid = {"id": "b", "impid": "i", "price": 1.25, **bid}
    response, errors = bids_for(ADAPTER, {}, {"id": "r", "seatbid": [{"bid": [the_bid]}]})
    assert response is not None
    assert [t.bid_type for t in response.bids] == ([kind] if kind else [])
    assert [e.message for e in errors] == ([error] if error else [])
    if kind == "banner":
        assert (response.bids[0].bid["adm"], response.bids[0].bid["nurl"]) == ("p=1.25", "n1.25")
    if kind == "native":
        assert response.bids[0].bid["adm"] == '{"a":1}'
