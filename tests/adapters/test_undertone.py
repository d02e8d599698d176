"""Undertone's own rules: imps tagged by placement with only their gpid as ext, the first publisher
id on the site or app, the adapter's ext, and bids typed by their imp."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.undertone import REQUEST_EXT, build, read_ext
from tests.adapters.helpers import bids_for, requests_of

ADAPTER = build(AdapterConfig("undertone", "https://u.example/bid"))


@pytest.mark.parametrize(
    ("ext", "read"),
    [
        ({"bidder": {"publisherId": 1, "placementId": 2}, "gpid": "g"}, (1, 2, "g")),
        ({"bidder": None}, (0, 0, "")),
        ({"gpid": "g"}, (0, 0, "g")),
        ({"bidder": {"publisherId": "1"}}, "ExtImpUndertone.PublisherID"),
        ({"bidder": 1}, "undertone.impExt.Bidder"),
        ("x", "expect { or n"),
    ],
)
def test_read_ext(ext, read):
    try:
        assert read_ext({"ext": ext}) == read
    except ValueError as exc:
        assert read in str(exc)


def test_one_call_with_every_imp_that_decodes():
    imps = [
        {"id": "1", "banner": {}, "tagid": "t", "ext": {"bidder": {"placementId": 5}, "gpid": "g"}},
        {"id": "2", "video": {"mimes": []}, "ext": {"bidder": {"publisherId": 7, "placementId": 6}}},
        {"id": "3", "ext": {"bidder": {"publisherId": 8, "placementId": "x"}}},
    ]
    request = {"id": "r", "imp": imps, "app": {"publisher": {"name": "n", "id": "old"}}}
    calls, bodies, errors = requests_of(ADAPTER, request, RequestInfo("undertone"))
    assert calls[0].headers == {} and calls[0].imp_ids == ["1", "2"]
    body = bodies[0]
    assert [(imp["tagid"], imp.get("ext")) for imp in body["imp"]] == [("5", {"gpid": "g"}), ("6", None)]
    assert body["app"]["publisher"] == {"id": "7", "name": "n"} and body["ext"] == REQUEST_EXT
    assert [(e.code, e.message.startswith("Invalid impid=3: ")) for e in errors] == [(ErrorCode.BAD_INPUT, True)]


def test_no_imp_left_no_call():
    calls, errors = ADAPTER.make_requests({"imp": [{"id": "1", "ext": "x"}]}, RequestInfo("undertone"))
    assert calls == [] and len(errors) == 1


def test_bids_are_typed_by_their_imp():
    request = {"imp": [{"id": "b", "banner": {}, "video": {}}, {"id": "v", "video": {}}, {"id": "n", "native": {}}]}
    bids = [{"id": str(n), "impid": impid, "price": 1} for n, impid in enumerate(["b", "v", "n", "x"])]
    response, errors = bids_for(ADAPTER, request, {"cur": "EUR", "seatbid": [{"bid": bids}]})
    assert [(t.bid["impid"], t.bid_type) for t in response.bids] == [("b", "banner"), ("v", "video")]
    assert response.currency == "EUR" and not errors
