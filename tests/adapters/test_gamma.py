"""Gamma adapter: the GET query, skipped imps, param checks, headers, the answer id's media type and
markup rules."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.gamma import build
from tests.adapters.helpers import bids_for, imp_with, requests_of

ENDPOINT = "https://hb.gammaplatform.com/adx/request/"
ADAPTER = build(AdapterConfig("gamma", ENDPOINT))
INFO = RequestInfo(bidder="gamma")
PARAMS = {"id": "p", "zid": "z", "wid": "w"}
BASE = f"{ENDPOINT}?id=p&zid=z&wid=w&bidid=i&hb=pbmobile"


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    return imp_with(imp_id, PARAMS if params is None else params, fields, {"banner": {}})


def run(request: dict):
    calls, _, errors = requests_of(ADAPTER, {"id": "r", **request}, INFO)
    return calls, [(e.message, e.code) for e in errors]


@pytest.mark.parametrize(
    ("top", "want"),
    [
        ({}, BASE),
        ({"device": {"ip": "1.2.3.4", "ua": "Mozilla/5.0 (X11)", "os": "", "ifa": "f"}},
         BASE + "&device_ip=1.2.3.4&device_ua=Mozilla%2F5.0+%28X11%29&device_ifa=f"),
        ({"app": {"id": "a", "bundle": "b", "name": "n m"}}, BASE + "&app_id=a&app_bundle=b&app_name=n m"),
    ],
)  # fmt: skip
def test_query(top, want):
    calls, errors = run({"imp": [imp()], **top})
    assert errors == []
    assert [(call.method, call.uri, call.body, call.imp_ids) for call in calls] == [("GET", want, None, ["i"])]


@pytest.mark.parametrize(
    ("the_imp", "want"),
    [
        ({"id": "i", "banner": {}}, "ext.bidder not provided"),
        (imp(ext={"bidder": 1}), "ext.bidder.publisher not provided"),
        (imp(params={"id": 5}), "ext.bidder.publisher not provided"),
        (imp(params={"zid": "z", "wid": "w"}), "PartnerID is empty"),
        (imp(params={"id": "p", "wid": "w"}), "ZoneID is empty"),
        (imp(params={"id": "p", "zid": "z"}), "WebID is empty"),
    ],
)
def test_params(the_imp, want):
    calls, errors = run({"imp": [the_imp, imp("j")]})
    assert [call.imp_ids for call in calls] == [["j"]]
    assert errors == [(want, ErrorCode.BAD_INPUT)]


def test_imps_without_banner_or_video():
    audio = imp("a", audio={})
    calls, errors = run({"imp": [audio, imp()]})
    skipped = ("Gamma only supports banner and video media types. Ignoring imp id=a", ErrorCode.BAD_INPUT)
    assert ([call.imp_ids for call in calls], errors) == ([["i"]], [skipped])
    calls, errors = run({"imp": [audio]})
    assert (calls, errors) == ([], [skipped, ("No valid impression in the bid request", ErrorCode.BAD_INPUT)])
    assert run({"imp": []}) == ([], [("No impressions in the bid request", ErrorCode.BAD_INPUT)])


def test_headers():
    calls, _ = run({"imp": [imp()], "device": {"ua": "u", "ip": "1.2.3.4", "language": "en", "dnt": 1}})
    assert dict(calls[0].headers) == {
        "Accept": "*/*", "X-Openrtb-Version": "2.5", "User-Agent": "u", "X-Forwarded-For": "1.2.3.4",
        "Accept-Language": "en", "Dnt": "1", "Connection": "keep-alive", "Cache-Control": "no-cache",
        "Accept-Encoding": "gzip, deflate",
    }  # fmt: skip


REQUEST = {"id": "r", "imp": [imp("b"), imp("v", video={})]}


@pytest.mark.parametrize(
    ("answer_id", "bid", "want"),
    [
        ("b", {"adm": "<div/>"}, ("banner", {"adm": "<div/>"})),
        ("x", {"adm": "<div/>"}, ("banner", {"adm": "<div/>"})),  # no such imp: banner
        ("v", {"adm": "a", "vastXml": "<VAST/>", "vastUrl": "u"}, ("video", {"adm": "<VAST/>", "nurl": "u"})),
        ("v", {"adm": "a", "vastXml": "<VAST/>"}, ("video", {"adm": "<VAST/>"})),
        ("v", {"adm": "a"}, None),  # video without vastXml
        ("b", {"vastXml": "<VAST/>"}, None),  # banner without adm
    ],
)
def test_bids(answer_id, bid, want):
    answer = {"id": answer_id, "seatbid": [{"bid": [{"id": "1", "impid": "b", "price": 1, **bid}]}]}
    response, errors = bids_for(ADAPTER, REQUEST, answer)
    assert response is not None
    if want is None:
        assert response.bids == []
        assert [(e.message, e.code) for e in errors] == [
            ("Missing Ad Markup. Run with request.debug = 1 for more info", ErrorCode.BAD_SERVER_RESPONSE)
        ]
        return
    kind, fields = want
    assert errors == []
    assert [(t.bid_type, {k: t.bid.get(k) for k in ("adm", "nurl") if k in t.bid}) for t in response.bids] == [
        (kind, fields)
    ]


@pytest.mark.parametrize(
    ("status", "body", "want"),
    [
        (400, b"", [("Unexpected status code: 400. Run with request.debug = 1 for more info", 3)]),
        (204, b"", []),
        (200, b'{"seatbid": []}', []),
        (200, b"", [("bad server response: &{%!d(string=expect { or n, but found \x00)}. ", 3)]),
    ],
)
def test_no_bids(status, body, want):
    response, errors = bids_for(ADAPTER, REQUEST, body, status)
    assert response is None
    assert [(e.message, int(e.code)) for e in errors] == want
