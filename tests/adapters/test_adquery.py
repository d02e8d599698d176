"""Adquery adapter: the per-imp request (sizes, ids, device and page facts), params errors, headers
and the one-bid answer (numbers as text, media type, imp id, markup, currency)."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.adquery import build
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from tests.adapters.helpers import bids_for, imp_with, requests_of

ENDPOINT = "https://bidder2.adquery.io/prebid/bid"
ADAPTER = build(AdapterConfig("adquery", ENDPOINT))
INFO = RequestInfo(bidder="adquery")


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    return imp_with(imp_id, {"placementId": "p", "type": "t"} if params is None else params, fields, {"banner": {}})


def run(request: dict):
    calls, bodies, errors = requests_of(ADAPTER, {"id": "r", **request}, INFO)
    return calls, bodies, [(e.message, e.code) for e in errors]


@pytest.mark.parametrize(
    ("banner", "want"),
    [
        ({"format": [{"w": 300, "h": 250}, {"w": 728}], "w": 1, "h": 2}, "300x250,728x0"),
        ({"w": 320, "h": 50}, "320x50"),
        ({"w": 320}, ""),
        (None, ""),
    ],
)
def test_sizes(banner, want):
    the_imp = imp(banner=banner) if banner is not None else imp(video={})
    _, bodies, _ = run({"imp": [the_imp]})
    assert bodies[0]["sizes"] == want


def test_request_body_and_headers():
    request = {
        "imp": [imp(tagid="tag"), imp("j")],
        "user": {"id": "u"},
        "device": {"ip": "1.2.3.4", "ipv6": "::1", "ua": "ua"},
        "site": {"page": "https://p"},
    }
    calls, bodies, errors = run(request)
    assert errors == []
    assert [call.imp_ids for call in calls] == [["i"], ["j"]]
    assert bodies[0] == {
        "v": "server", "placementCode": "p", "type": "t", "adUnitCode": "tag", "bidQid": "u", "bidId": "ri",
        "bidIp": "1.2.3.4", "bidIpv6": "::1", "bidUa": "ua", "bidder": "adquery", "bidPageUrl": "https://p",
        "bidderRequestId": "r", "bidRequestsCount": 1, "bidderRequestsCount": 1, "sizes": "",
    }  # fmt: skip
    assert dict(calls[0].headers) == {
        "Content-Type": "application/json;charset=utf-8", "Accept": "application/json",
        "X-Openrtb-Version": "2.5", "X-Forwarded-For": "1.2.3.4",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"bidder": {"placementId": 1}},
         'cannot unmarshal openrtb_ext.ImpExtAdQuery.PlacementID: expects " or n, but found 1'),
        ("x", 'expect { or n, but found "'),
    ],
)  # fmt: skip
def test_bad_params(ext, want):
    calls, _, errors = run({"imp": [imp("a", ext=ext), imp("b")]})
    assert [call.imp_ids for call in calls] == [["b"]]
    assert errors == [(want, ErrorCode.BAD_INPUT)]


def data(**fields: Any) -> dict:
    media = {"name": "banner", "width": "320", "height": "50"}
    base = {"requestId": "r1", "creationId": 7, "cpm": "4.14", "adqLib": "lib.js", "tag": "<t/>",
            "adDomains": ["a.com"], "currency": "EUR", "mediaType": media}  # fmt: skip
    return {"data": {**base, **fields}}


@pytest.mark.parametrize(
    ("answer", "want_bid", "want_currency"),
    [
        (data(), {"id": "r1", "impid": "1", "price": 4.14, "adm": '<script src="lib.js"></script><t/>',
                  "adomain": ["a.com"], "crid": "7", "w": 320, "h": 50}, "EUR"),
        (data(currency="", requestId="x1"), {"id": "x1", "impid": "x1"}, "PLN"),
    ],
)  # fmt: skip
def test_bid(answer, want_bid, want_currency):
    response, errors = bids_for(ADAPTER, {"id": "r", "imp": [imp()]}, answer)
    assert errors == [] and response is not None
    assert response.currency == want_currency
    [typed] = response.bids
    assert typed.bid_type == "banner"
    assert {key: typed.bid[key] for key in want_bid} == want_bid


@pytest.mark.parametrize(
    ("answer", "want"),
    [
        (data(cpm="$1", mediaType={"name": "banner", "width": "1px", "height": "2"}),
         ['strconv.ParseFloat: parsing "$1": invalid syntax', 'strconv.ParseInt: parsing "1px": invalid syntax']),
        (data(cpm="$1", mediaType={"name": "video", "width": "1", "height": "2"}), ["unsupported MediaType: video"]),
        (data(creationId="x"), ["cannot unmarshal adquery.ResponseData.CrID: unexpected character: \ufffd"]),
        ([], ["expect { or n, but found ["]),
    ],
)  # fmt: skip
def test_answer_errors(answer, want):
    response, errors = bids_for(ADAPTER, {"id": "r", "imp": [imp()]}, answer)
    assert response is None
    assert [e.message for e in errors] == want


def test_data_null_is_an_empty_answer():
    response, errors = bids_for(ADAPTER, {"id": "r", "imp": [imp()]}, {"data": None})
    assert errors == [] and response is not None and response.bids == []
