"""RTB House adapter: floors and their currency, tag ids, PAAPI and pmp removal, the publisher id,
whole-request failures, bid typing, price macros and native adm unwrapping."""

from __future__ import annotations

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestData, RequestInfo, ResponseData
from hbserver.adapters.rtbhouse import BAD_PARAMS, NO_EXT, build, native_adm
from tests.adapters.helpers import converter, requests_of

ENDPOINT = "http://localhost/prebid_server"
ADAPTER = build(AdapterConfig("rtbhouse", ENDPOINT))
INFO = RequestInfo(bidder="rtbhouse", convert_currency=converter("EUR", 2.0))


def _send(imp_fields, params=None, **top):
    imp = {"id": "i", "banner": {"w": 1, "h": 1}, "ext": {"bidder": params or {}}, **imp_fields}
    return requests_of(ADAPTER, {"id": "r", "imp": [imp], **top}, INFO)


@pytest.mark.parametrize(
    ("imp", "params", "cur", "want"),
    [
        ({"bidfloor": 1.5, "bidfloorcur": "USD"}, {}, None, (1.5, "USD")),
        ({"bidfloor": 1.5, "bidfloorcur": "EUR"}, {"bidfloor": 9}, None, (3.0, "USD")),
        ({}, {"bidfloor": 2.5}, None, (2.5, "USD")),
        ({}, {"bidfloor": 2.5}, ["EUR"], (5.0, "USD")),
        ({"bidfloor": 1.5}, {}, None, (1.5, None)),  # no currency: left as it is
        ({"bidfloor": 1.5, "bidfloorcur": "usd"}, {}, None, (1.5, "usd")),  # not converted, not rewritten
        ({}, {}, None, (None, None)),
    ],
)
def test_floor(imp, params, cur, want):
    _, bodies, errors = _send(imp, params, **({"cur": cur} if cur else {}))
    assert errors == []
    sent = bodies[0]["imp"][0]
    assert (sent.get("bidfloor"), sent.get("bidfloorcur")) == want
    assert bodies[0]["cur"] == ["USD"]


def test_floor_without_rate_fails_the_request():
    calls, _, errors = _send({"bidfloor": 1, "bidfloorcur": "JPY"})
    assert calls == []
    assert [e.message for e in errors] == ["Currency conversion rate not found: 'JPY' => 'USD'"]


@pytest.mark.parametrize(
    ("imp", "want"),
    [
        ({"tagid": "own", "ext": {"bidder": {}, "gpid": "g"}}, "own"),
        ({"ext": {"bidder": {}, "gpid": "g", "data": {"pbadslot": "p"}}}, "g"),
        ({"ext": {"bidder": {}, "data": {"adserver": {"adslot": "a"}, "pbadslot": "p"}}}, "a"),
        ({"ext": {"bidder": {}, "data": {"pbadslot": "p"}}}, "p"),
        ({"ext": {"bidder": {}, "gpid": 5}}, "i"),
    ],
)
def test_tagid(imp, want):
    _, bodies, _ = _send(imp)
    assert bodies[0]["imp"][0]["tagid"] == want


def test_paapi_pmp_and_unknown_keys_removed():
    imp = {"ext": {"bidder": {}, "ae": 1, "igs": {}, "paapi": {}, "other": 1}, "pmp": {"deals": []}}
    _, bodies, _ = _send(imp, debug=1)
    assert bodies[0]["imp"][0]["ext"] == {"bidder": {}, "other": 1}
    assert "pmp" not in bodies[0]["imp"][0] and "debug" not in bodies[0]


@pytest.mark.parametrize(
    ("top", "want_place", "want_publisher"),
    [
        ({}, "site", {"ext": {"prebid": {"publisherId": "p1"}}}),
        (
            {"site": {"publisher": {"id": "x", "ext": {"other": 1}}}, "app": {}},
            "site",
            {"id": "x", "ext": {"prebid": {"publisherId": "p1"}}},
        ),
        ({"app": {"bundle": "b"}}, "app", {"ext": {"prebid": {"publisherId": "p1"}}}),
    ],
)
def test_publisher(top, want_place, want_publisher):
    request = {
        "id": "r",
        "imp": [
            {"id": "a", "banner": {}, "ext": {"bidder": {}}},
            {"id": "b", "banner": {}, "ext": {"bidder": {"publisherId": "p1"}}},
            {"id": "c", "banner": {}, "ext": {"bidder": {"publisherId": "p2"}}},
        ],
        **top,
    }
    calls, bodies, _ = requests_of(ADAPTER, request, INFO)
    assert calls[0].imp_ids == ["a", "b", "c"]
    assert bodies[0][want_place]["publisher"] == want_publisher


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        (..., NO_EXT),
        ("x", NO_EXT),
        ({"prebid": 1, "bidder": {}}, NO_EXT),
        ({"bidder": {"publisherId": 5}}, BAD_PARAMS),
        ({"bidder": "x"}, BAD_PARAMS),
        ({}, BAD_PARAMS),
        (None, BAD_PARAMS),
    ],
)
def test_bad_imp_fails_the_request(ext, want):
    bad = {"id": "b", "banner": {}} if ext is ... else {"id": "b", "banner": {}, "ext": ext}
    request = {"id": "r", "imp": [{"id": "a", "banner": {}, "ext": {"bidder": {}}}, bad]}
    calls, _, errors = requests_of(ADAPTER, request, INFO)
    assert calls == [] and [(e.code, e.message) for e in errors] == [(ErrorCode.BAD_INPUT, want)]


def _bids(bids, status=200):
    body = orjson.dumps({"id": "r", "cur": "EUR", "seatbid": [{"bid": bids}]})
    return ADAPTER.make_bids({}, RequestData("POST", ENDPOINT), ResponseData(status, body))


@pytest.mark.parametrize(
    ("bid", "want_type", "want_adm", "error"),
    [
        ({"mtype": 1, "adm": "a=${AUCTION_PRICE}", "nurl": "n=${AUCTION_PRICE}"}, "banner", "a=1.25", None),
        ({"mtype": 4, "adm": '{"native": {"ver": "1.2"}}'}, "native", '{"ver": "1.2"}', None),
        ({"mtype": 4, "adm": '{"ver":"1.2"}'}, "native", '{"ver":"1.2"}', None),
        ({"mtype": 4, "adm": '{"native":"x"}'}, None, None, "unable to get native adm"),
        ({"mtype": 4, "adm": '{"ver"'}, None, None, "unable to unmarshal native adm"),
        ({"mtype": 2, "adm": "a"}, None, None, "unrecognized bid type in response from rtbhouse for bid i"),
        ({"adm": "a"}, None, None, "unrecognized bid type in response from rtbhouse for bid i"),
    ],
)
def test_bids(bid, want_type, want_adm, error):
    response, errors = _bids([{"id": "b", "impid": "i", "price": 1.25, **bid}])
    assert response is not None and response.currency == "USD"
    if error:
        assert response.bids == [] and [(e.code, e.message) for e in errors] == [(ErrorCode.UNKNOWN, error)]
        return
    assert errors == [] and [(t.bid_type, t.bid["adm"]) for t in response.bids] == [(want_type, want_adm)]
    if "nurl" in bid:
        assert response.bids[0].bid["nurl"] == "n=1.25"


def test_native_adm_keeps_the_raw_text():
    assert native_adm('{"a": [1, {"native": 2}], "native" : { "x" :1 } , "b":2}') == '{ "x" :1 }'
    assert native_adm("null") == "null"


@pytest.mark.parametrize(
    ("status", "body", "want"),
    [
        (204, b"", None),
        (200, b'{"id": "r"}', None),  # no seatbid: PBS-Go fails on it, no bids
        (400, b"{}", (ErrorCode.BAD_INPUT, "Unexpected status code: 400. Run with request.debug = 1 for more info")),
        (
            418,
            b"{}",
            (ErrorCode.BAD_SERVER_RESPONSE, "Unexpected status code: 418. Run with request.debug = 1 for more info"),
        ),
        (200, b'"x"', (ErrorCode.UNKNOWN, 'expect { or n, but found "')),
    ],
)
def test_no_answer(status, body, want):
    response, errors = ADAPTER.make_bids({}, RequestData("POST", ENDPOINT), ResponseData(status, body))
    assert response is None
    assert [(e.code, e.message) for e in errors] == ([want] if want else [])
