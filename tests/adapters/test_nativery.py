"""Nativery adapter: ext.nativery (AMP flag, the first imp's widget), one call per imp, 204 errors,
bid typing by ``ext.nativery.bid_ad_media_type`` and the EUR default."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.nativery import build
from tests.adapters.helpers import bids_for, imp_with, requests_of

ENDPOINT = "http://example.com/hb"
ADAPTER = build(AdapterConfig("nativery", ENDPOINT))


def imp(imp_id: str = "i", params: Any = None) -> dict:
    return imp_with(imp_id, {"widgetId": f"w-{imp_id}"} if params is None else params, {}, {"native": {"request": ""}})


@pytest.mark.parametrize(
    ("imps", "entry", "ext", "want"),
    [
        ([imp("a"), imp("b")], "openrtb2-auction", None, {"nativery": {"isAmp": False, "widgetId": "w-a"}}),
        ([imp("a")], "openrtb2-amp", {"k": 1}, {"k": 1, "nativery": {"isAmp": True, "widgetId": "w-a"}}),
        (
            [imp("a", {"widgetId": 1}), imp("b")],
            "openrtb2-auction",
            None,
            {"nativery": {"isAmp": False, "widgetId": ""}},
        ),
        (
            [imp("a")],
            "openrtb2-auction",
            {"nativery": {"isAmp": True, "widgetId": "old"}},
            {"nativery": {"isAmp": False, "widgetId": "w-a"}},
        ),
    ],
)
def test_request_ext(imps, entry, ext, want):
    request = {"id": "r", "imp": imps, **({"ext": ext} if ext is not None else {})}
    calls, bodies, _errors = requests_of(ADAPTER, request, RequestInfo(bidder="nativery", entry_point=entry))
    assert [c.imp_ids for c in calls] == [[i["id"]] for i in imps if i["ext"]["bidder"]["widgetId"] != 1]
    assert all(body["ext"] == want for body in bodies)


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ("x", 'expect { or n, but found "'),
        (
            {"nativery": {"widgetId": 123}},
            'cannot unmarshal nativery.bidReqExtNativery.WidgetId: expects " or n, but found 1',
        ),
    ],
)
def test_request_ext_that_does_not_decode(ext, want):
    calls, _bodies, errors = requests_of(
        ADAPTER, {"id": "r", "imp": [imp()], "ext": ext}, RequestInfo(bidder="nativery")
    )
    assert calls == [] and [e.message for e in errors] == [want]


@pytest.mark.parametrize(
    ("headers", "want"),
    [
        ({"X-Nativery-Error": "bad widget"}, ("Nativery Error: bad widget.", ErrorCode.BAD_INPUT)),
        ({}, ("No Content", ErrorCode.BAD_SERVER_RESPONSE)),
    ],
)
def test_no_content_is_an_error(headers, want):
    response, errors = bids_for(ADAPTER, {}, b"", status=204, headers=headers)
    assert response is None and [(e.message, e.code) for e in errors] == [want]


@pytest.mark.parametrize(
    ("media_type", "want"),
    [
        ("native", "native"),
        ("display", "banner"),
        ("rich_media", "banner"),
        ("banner", "banner"),
        ("video", "video"),
        ("audio", "unrecognized bid_ad_media_type in response from nativery: audio"),
    ],
)
def test_bid_type(media_type, want):
    ext = {"nativery": {"bid_ad_media_type": media_type, "bid_adv_domains": ["a.com"]}}
    bid = {"id": "b", "impid": "i", "price": 1, "ext": ext}
    response, errors = bids_for(ADAPTER, {"imp": []}, {"seatbid": [{"bid": [bid]}]})
    assert response is not None and response.currency == "EUR"
    assert [t.bid_type for t in response.bids] + [e.message for e in errors] == [want]
    assert all(t.bid_meta == {"mediaType": want, "advertiserDomains": ["a.com"]} for t in response.bids)
