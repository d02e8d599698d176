"""Bluesea adapter: one call per good imp, each with the whole request, the URL's query from the
params; params errors quoting the ext; bids typed by ext.mediatype."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.bluesea import build
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "https://bluesea.test/bid"
INFO = RequestInfo(bidder="bluesea")
GOOD = {"pubid": "p1", "token": "t1"}


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict[str, Any]:
    return {"id": imp_id, "banner": {}, "ext": {"bidder": GOOD if params is None else params}, **fields}


def run(imps: list[dict[str, Any]]):
    return requests_of(build(AdapterConfig("bluesea", ENDPOINT)), {"id": "r", "imp": imps}, INFO)


def test_each_good_imp_a_call_with_the_whole_request():
    imps = [imp("a"), imp("b", {"pubid": "a b&c", "token": "x/y"}), imp("c", {"pubid": "p"})]
    calls, bodies, errors = run(imps)
    assert [call.uri for call in calls] == [
        f"{ENDPOINT}?pubid=p1&token=t1",
        f"{ENDPOINT}?pubid=a+b%26c&token=x%2Fy",
    ]
    assert [call.imp_ids for call in calls] == [["a", "b", "c"]] * 2
    assert all(body["imp"] == imps for body in bodies)  # every imp, its ext kept
    assert calls[0].headers["Content-Type"] == "application/json;charset=utf-8"
    assert [(e.message, e.code) for e in errors] == [
        ("Error in parsing imp.ext.bidder, empty pubid or token", ErrorCode.BAD_INPUT)
    ]


@pytest.mark.parametrize(
    ("one", "message"),
    [
        (imp(ext="x"), 'Error in parsing imp.ext. err = expect { or n, but found ", imp.ext = "x"'),
        ({"id": "i", "banner": {}}, "Error in parsing imp.ext. err = expect { or n, but found \x00, imp.ext = "),
        (
            # json-iterator reads on past the one-character bad value; decoding token wraps the error, so
            # Go's text names the field alone (as smartrtb's bad-pub-value fixture shows)
            imp(params={"pubid": 1, "token": "t"}),
            "Error in parsing imp.ext.bidder. err = cannot unmarshal PubId: "
            'expects " or n, but found 1, bidder = {"pubid":1,"token":"t"}',
        ),
        (imp(params={"token": "t"}), "Error in parsing imp.ext.bidder, empty pubid or token"),
    ],
)
def test_params_errors(one, message):
    calls, _, errors = run([one])
    assert (calls, [(e.message, e.code) for e in errors]) == ([], [(message, ErrorCode.BAD_INPUT)])


def test_no_imps():
    calls, _, errors = run([])
    assert (calls, [e.message for e in errors]) == ([], ["Empty Imp objects"])


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"mediatype": "native"}, "native"),
        ({"mediaType": "video"}, "video"),  # Go matches the key ignoring case
        ({"mediatype": "audio"}, "Unknown bid type, audio"),
        ({}, "Unknown bid type, "),
        ({"mediatype": 1}, "Error in parsing bid.ext"),
        ("x", "Error in parsing bid.ext"),
        (None, "Error in parsing bid.ext"),  # no ext
    ],
)
def test_bid_types(ext, want):
    bid = {"id": "1", "impid": "i", "price": 1, **({} if ext is None else {"ext": ext})}
    response, errors = bids_for(
        build(AdapterConfig("bluesea", ENDPOINT)), {"imp": [imp()]}, {"seatbid": [{"bid": [bid]}]}
    )
    assert response is not None and response.currency == "USD"
    if want in ("banner", "native", "video"):
        assert ([b.bid_type for b in response.bids], errors) == ([want], [])
    else:
        assert (response.bids, [(e.message, e.code) for e in errors]) == ([], [(want, ErrorCode.UNKNOWN)])


def test_answer_wording():
    adapter = build(AdapterConfig("bluesea", ENDPOINT))
    response, errors = bids_for(adapter, {"imp": [imp()]}, b"nope")
    assert (response, [e.message for e in errors]) == (None, ["Error in parsing bidresponse body"])
    response, errors = bids_for(adapter, {"imp": [imp()]}, {"cur": "EUR", "seatbid": []})
    assert (response.currency, response.bids, errors) == ("EUR", [], [])
