"""Vidazoo adapter: one call per imp with the trimmed, query-escaped cId in the URL, params errors,
every failure status as bad input, bids typed by mtype."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from tests.adapters.helpers import bids_for, imp_with, requests_of

ENDPOINT = "http://prebid-server.cootlogix.com/openrtb/"
INFO = RequestInfo(bidder="vidazoo")


def imp(imp_id: str = "i", cid: Any = "c1", **fields: Any) -> dict:
    return imp_with(imp_id, {"cId": cid}, fields, {"banner": {}})


def run(request: dict):
    calls, bodies, errors = requests_of(build_adapter("vidazoo", AdapterConfig("vidazoo", ENDPOINT)), request, INFO)
    return calls, bodies, [(e.message, e.code) for e in errors]


def bids(request: dict, body: Any, status: int = 200):
    return bids_for(build_adapter("vidazoo", AdapterConfig("vidazoo", ENDPOINT)), request, body, status)


@pytest.mark.parametrize(
    ("cid", "tail"),
    [
        ("abc", "abc"),
        ("  abc\t\n", "abc"),  # trimmed
        ("\u00a0abc\u3000", "abc"),  # Go's Unicode spaces trimmed too
        ("\x1cabc", "%1Cabc"),  # not a space for Go
        ("a b/c?d=e&f+g~h_i.j-k", "a+b%2Fc%3Fd%3De%26f%2Bg~h_i.j-k"),  # url.QueryEscape
        ("é", "%C3%A9"),
        ("", ""),  # an empty cId is sent as it is
        (None, ""),
    ],
)
def test_cid_fills_the_url(cid, tail):
    calls, _, errors = run({"imp": [imp(cid=cid)]})
    assert errors == []
    assert calls[0].uri == ENDPOINT + tail


def test_one_call_per_imp_unchanged():
    request = {"id": "r", "tmax": 5, "imp": [imp("a", "x"), imp("b", "y", ext={"bidder": {"cid": "y"}, "k": 1})]}
    calls, bodies, errors = run(request)
    assert errors == []
    assert [(call.uri, call.imp_ids) for call in calls] == [(ENDPOINT + "x", ["a"]), (ENDPOINT + "y", ["b"])]
    assert bodies == [{**request, "imp": [request["imp"][0]]}, {**request, "imp": [request["imp"][1]]}]
    assert dict(calls[0].headers) == {"Content-Type": "application/json;charset=utf-8"}


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"id": "i", "banner": {}}, "extract cId: unmarshal bidderExt: expect { or n, but found \x00"),
        ({"id": "i", "banner": {}, "ext": "x"}, 'extract cId: unmarshal bidderExt: expect { or n, but found "'),
        ({"id": "i", "banner": {}, "ext": {}}, "extract cId: unmarshal ImpExtVidazoo: expect { or n, but found \x00"),
        (
            imp(cid=5),
            "extract cId: unmarshal ImpExtVidazoo: cannot unmarshal openrtb_ext.ImpExtVidazoo.ConnectionId: "
            'expects " or n, but found 5',
        ),
    ],
)
def test_bad_imp_is_reported_and_left_out(bad, message):
    calls, _, errors = run({"imp": [bad, imp("ok")]})
    assert [call.imp_ids for call in calls] == [["ok"]]
    assert errors == [(message, ErrorCode.UNKNOWN)]


@pytest.mark.parametrize("status", [400, 500, 503])
def test_every_failure_status_is_bad_input(status):
    response, errors = bids({"imp": [imp()]}, b"{}", status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == [
        (f"Unexpected status code: {status}. Run with request.debug = 1 for more info", ErrorCode.BAD_INPUT)
    ]


def test_no_content_and_bad_body():
    assert bids({"imp": [imp()]}, b"", 204) == (None, [])
    response, errors = bids({"imp": [imp()]}, b"x")
    assert response is None
    assert [(e.message, e.code) for e in errors] == [
        ("bad server response: &{%!d(string=expect { or n, but found x)}. ", ErrorCode.BAD_SERVER_RESPONSE)
    ]


@pytest.mark.parametrize(("mtype", "want"), [(1, "banner"), (2, "video"), (3, None), (4, None), (None, None)])
def test_bids_typed_by_mtype(mtype, want):
    body = {"cur": "EUR", "seatbid": [{"bid": [{"id": "b", "impid": "i", "price": 1, "mtype": mtype}]}]}
    response, errors = bids({"imp": [imp(video={})]}, body)
    assert response.currency == "EUR"
    assert [b.bid_type for b in response.bids] == ([want] if want else [])
    expected = [] if want else [("Could not define bid type for imp: i", ErrorCode.BAD_INPUT)]
    assert [(e.message, e.code) for e in errors] == expected
