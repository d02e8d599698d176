"""Sharethrough adapter: per-imp and per-type calls, growing block lists, source.ext, floors, bid typing."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import (
    AdapterConfig,
    ErrorCode,
    RequestInfo,
)
from hbserver.adapters.sharethrough import build
from tests.adapters.helpers import bids_for, converter, imp_with, requests_of

ENDPOINT = "https://btlr.sharethrough.com/universal/v1?supply_id=FGMrCMMc"
PARAMS = {"pkey": "pk"}
MEDIA = {"banner": {"w": 300, "h": 250}}  # an imp's media unless the test names its own


INFO = RequestInfo(bidder="sharethrough", convert_currency=converter("EUR"))


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    return imp_with(imp_id, PARAMS if params is None else params, fields, MEDIA)


def run(request: dict, version: str = ""):
    adapter = build(AdapterConfig("sharethrough", ENDPOINT, {"pbs_version": version}))
    calls, bodies, errors = requests_of(adapter, request, INFO)
    assert all(call.uri == ENDPOINT for call in calls)
    return calls, bodies, [e.message for e in errors]


def test_each_media_type_goes_alone_and_audio_is_dropped():
    media = {"banner": {"w": 1}, "video": {"mimes": ["v"]}, "native": {"request": "{}"}, "audio": {"mimes": ["a"]}}
    calls, bodies, errors = run({"id": "r", "imp": [imp("x", **media), imp("y")]})
    assert errors == []
    assert [call.imp_ids for call in calls] == [["x"], ["x"], ["x"], ["y"]]
    kinds = [sorted(k for k in ("banner", "video", "native", "audio") if k in b["imp"][0]) for b in bodies]
    assert kinds == [["banner"], ["video"], ["native"], ["banner"]]


def test_block_lists_grow_from_imp_to_imp():
    request = {
        "id": "r",
        "bcat": ["IAB0"],
        "imp": [
            imp("a", {"pkey": "1", "bcat": ["IAB1"], "badv": ["a.com"]}),
            imp("b", {"pkey": "2"}),
            imp("c", {"pkey": "3", "bcat": ["IAB3"]}),
        ],
    }
    _, bodies, _ = run(request)
    assert [b["bcat"] for b in bodies] == [["IAB0", "IAB1"], ["IAB0", "IAB1"], ["IAB0", "IAB1", "IAB3"]]
    assert [b["badv"] for b in bodies] == [["a.com"]] * 3
    assert [b["imp"][0]["tagid"] for b in bodies] == ["1", "2", "3"]


@pytest.mark.parametrize(
    ("source", "version", "want"),
    [
        (None, "", {"ext": {"str": "10.0", "version": ""}}),
        (
            {"tid": "t", "ext": {"schain": {"ver": "1.0"}}},
            "3.1",
            {"tid": "t", "ext": {"schain": {"ver": "1.0"}, "str": "10.0", "version": "3.1"}},
        ),
        ({"ext": "not an object"}, "", {"ext": {"str": "10.0", "version": ""}}),
        ({"ext": {"str": "old"}}, "", {"ext": {"str": "10.0", "version": ""}}),
    ],
)
def test_source_ext_carries_versions(source, version, want):
    request: dict[str, Any] = {"id": "r", "imp": [imp()]}
    if source is not None:
        request["source"] = source
    _, bodies, _ = run(request, version)
    assert bodies[0]["source"] == want


@pytest.mark.parametrize(
    ("fields", "want_floor", "want_cur"),
    [
        ({"bidfloor": 1.5, "bidfloorcur": "EUR"}, 3.0, "USD"),
        ({"bidfloor": 1.5, "bidfloorcur": "usd"}, 1.5, "usd"),
        ({"bidfloor": 1.5}, 1.5, None),
        ({"bidfloor": 0, "bidfloorcur": "GBP"}, 0, "GBP"),
    ],
)
def test_floor_converted_to_usd(fields, want_floor, want_cur):
    _, bodies, errors = run({"id": "r", "imp": [imp(**fields)]})
    assert errors == []
    sent = bodies[0]["imp"][0]
    assert sent.get("bidfloor") == want_floor
    assert sent.get("bidfloorcur") == want_cur


def test_failed_conversion_drops_every_call():
    calls, _, errors = run({"id": "r", "imp": [imp("a"), imp("b", bidfloor=1, bidfloorcur="JPY"), imp("c")]})
    assert calls == []
    assert errors == ["Currency conversion rate not found: 'JPY' => 'USD'"]


@pytest.mark.parametrize(
    ("bad", "want_error"),
    [
        (imp("x", audio={"mimes": ["a"]}), "Invalid MediaType. Sharethrough only supports Banner, Video and Native."),
        (imp("x", ext="aaa"), 'expect { or n, but found "'),
        (imp("x", {"pkey": 5}), 'cannot unmarshal openrtb_ext.ExtImpSharethrough.Pkey: expects " or n, but found 5'),
        (imp("x", ext={}), "expect { or n, but found \x00"),
    ],
)
def test_bad_imp_is_skipped_with_an_error(bad, want_error):
    calls, _, errors = run({"id": "r", "imp": [bad, imp("ok")]})
    assert errors == [want_error]
    assert [call.imp_ids for call in calls] == [["ok"]]


def test_empty_pkey_drops_tagid_and_zero_test_is_left_out():
    _, bodies, _ = run({"id": "r", "test": 0, "imp": [imp(params={"pkey": ""}, tagid="old")]})
    assert "tagid" not in bodies[0]["imp"][0]
    assert "test" not in bodies[0]


def test_headers():
    calls, _, _ = run({"id": "r", "imp": [imp()]})
    assert dict(calls[0].headers) == {"Content-Type": "application/json;charset=utf-8", "Accept": "application/json"}


def bids_of(body: Any, status: int = 200):
    return bids_for(build(AdapterConfig("sharethrough", ENDPOINT)), {"id": "r", "imp": []}, body, status)


@pytest.mark.parametrize(
    ("ext", "want_type", "want_error"),
    [
        ({"prebid": {"type": "video"}}, "video", None),
        ({"prebid": {"type": "native"}}, "native", None),
        ({"prebid": {"type": "nonsense"}}, "", "invalid BidType: nonsense"),
        ({"other": 1}, "", 'Failed to parse bid mediatype for impression "i1"'),
        (None, "", 'Failed to parse bid mediatype for impression "i1"'),
    ],
)
def test_bid_type_from_ext_prebid_type(ext, want_type, want_error):
    bid: dict[str, Any] = {"id": "b", "impid": "i1", "price": 1}
    if ext is not None:
        bid["ext"] = ext
    response, errors = bids_of({"cur": "EUR", "seatbid": [{"bid": [bid]}]})
    assert response is not None
    assert response.currency == "USD"
    assert [(typed.bid_type, typed.bid) for typed in response.bids] == [(want_type, bid)]
    assert [e.message for e in errors] == ([want_error] if want_error else [])


@pytest.mark.parametrize(
    ("status", "want_message", "want_code"),
    [
        (400, "Unexpected status code: 400. Run with request.debug = 1 for more info", ErrorCode.BAD_INPUT),
        (500, "unexpected status code: 500. Run with request.debug = 1 for more info", ErrorCode.UNKNOWN),
    ],
)
def test_failure_statuses(status, want_message, want_code):
    response, errors = bids_of(b"", status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == [(want_message, want_code)]


def test_no_content_is_no_response():
    assert bids_of(b"", 204) == (None, [])
