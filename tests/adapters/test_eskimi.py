"""Eskimi adapter: the first imp's placement into site/app ext, block lists and per-imp params, bad
imps dropped, and bid typing by ``mtype`` or the imp."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.eskimi import build
from tests.adapters.helpers import bids_for, imp_with, requests_of

ENDPOINT = "https://ittr.eskimi.com/prebidjs"
ADAPTER = build(AdapterConfig("eskimi", ENDPOINT))
INFO = RequestInfo(bidder="eskimi")


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    return imp_with(imp_id, {"placementId": 7} if params is None else params, fields, {"banner": {"w": 1, "h": 1}})


@pytest.mark.parametrize(
    ("top", "want_top"),
    [
        ({"site": {"id": "s"}}, {"site": {"id": "s", "ext": {"placementId": 7}}}),
        ({"site": {"ext": {"a": 1}}}, {"site": {"ext": {"a": 1, "placementId": 7}}}),
        ({"app": {"id": "a"}}, {"app": {"id": "a", "ext": {"placementId": 7}}}),
    ],
)
def test_placement_written_into_site_or_app(top, want_top):
    _calls, bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": [imp()], **top}, INFO)
    assert errors == []
    assert {key: bodies[0][key] for key in want_top} == want_top


@pytest.mark.parametrize(
    ("request_", "want"),
    [
        ({"id": "r", "imp": []}, "no impressions in the bid request"),
        ({"id": "r", "imp": [imp()]}, "request must contain either site or app"),
        (
            {"id": "r", "imp": [imp()], "site": {"ext": "x"}},
            'failed to set placementId on site.ext: expect { or n, but found "',
        ),
        ({"id": "r", "imp": [imp(params={"placementId": "7"})], "site": {}}, "invalid imp.ext.bidder for imp i: "),
        ({"id": "r", "imp": [imp(ext="x")], "site": {}}, "invalid imp.ext for imp i: "),
    ],
)
def test_request_refused(request_, want):
    calls, _bodies, errors = requests_of(ADAPTER, request_, INFO)
    assert calls == []
    assert len(errors) == 1 and errors[0].message.startswith(want) and errors[0].code is ErrorCode.BAD_INPUT


def test_later_bad_imp_dropped_and_params_applied():
    params = {"placementId": 7, "bidFloor": 2.5, "bidFloorCur": "EUR", "battr": [1], "bcat": ["IAB1"]}
    request = {"id": "r", "imp": [imp("a", params), imp("b", {"placementId": "x"})], "site": {}, "badv": ["x.com"]}
    calls, bodies, errors = requests_of(ADAPTER, request, INFO)
    assert [e.message[:32] for e in errors] == ["invalid imp.ext.bidder for imp b"]
    assert calls[0].imp_ids == ["a"]
    sent = bodies[0]["imp"][0]
    assert (sent["secure"], sent["bidfloor"], sent["bidfloorcur"], sent["banner"]["battr"]) == (1, 2.5, "EUR", [1])
    assert (bodies[0]["bcat"], bodies[0]["badv"]) == (["IAB1"], ["x.com"])


@pytest.mark.parametrize(
    ("mtype", "media", "want"),
    [
        (1, {"video": {}}, "banner"),
        (2, {"banner": {}}, "video"),
        (4, {"banner": {}}, "unsupported bid.mtype 4 for impression i (banner and video only)"),
        (0, {"banner": {}}, "banner"),
        (0, {"video": {}}, "video"),
        (0, {"banner": {}, "video": {}}, "bid for multi-format imp i requires bid.mtype to disambiguate"),
        (0, {"native": {}}, "unsupported media type for impression i (banner and video only)"),
        (0, None, "unable to resolve media type for impression i"),
    ],
)
def test_bid_type(mtype, media, want):
    imps = [] if media is None else [{"id": "i", **media}]
    bid = {"id": "b", "impid": "i", "price": 1, **({"mtype": mtype} if mtype else {})}
    response, errors = bids_for(ADAPTER, {"imp": imps}, {"cur": "EUR", "seatbid": [{"bid": [bid]}]})
    assert response is not None and response.currency == "EUR"
    got = [t.bid_type for t in response.bids] or [e.message for e in errors]
    assert got == [want]
