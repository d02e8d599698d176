"""Audience Network adapter: its own rules (the fixtures cover the rest): the one format an imp is
sent as, placement and publisher ids, banner heights, the routing token and authentication id, the
host settings it needs, Meta's markup and status errors."""

from __future__ import annotations

import hashlib
import hmac

import orjson
import pytest

from hbserver.adapters.audiencenetwork import (
    NO_APP_SECRET,
    NO_PLATFORM_ID,
    build,
    drop_first_key,
    resolve_imp_type,
)
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestData, RequestInfo, ResponseData
from tests.adapters.helpers import requests_of

ENDPOINT = "https://an.facebook.com/placementbid.ortb"
SETTINGS = {"platform_id": "pid", "app_secret": "secret"}
ADAPTER = build(AdapterConfig("audienceNetwork", ENDPOINT, SETTINGS))
INFO = RequestInfo(bidder="audienceNetwork")
PARAMS = {"placementId": "456", "publisherId": "123"}


def request_with(imp: dict, **top) -> dict:
    base = {"id": "r", "imp": [{"id": "i", "ext": {"bidder": PARAMS}, **imp}], "app": {"id": "a"}}
    return {**base, "user": {"buyeruid": "token"}, **top}


@pytest.mark.parametrize(
    ("imp", "want"),
    [
        ({"banner": {}, "video": {}}, "video"),
        ({"banner": {}, "native": {}}, "native"),
        ({"banner": {}, "video": {}, "native": {}}, "video"),
        ({"banner": {}, "native": {}, "instl": 1}, "banner"),
        ({"video": {}, "native": {}, "instl": 1}, "video"),
        ({"banner": {}, "audio": {}}, "banner"),
        ({"audio": {}}, "audio"),
        ({"native": {}, "instl": True}, "native"),
        ({}, "banner"),
    ],
)
def test_resolve_imp_type(imp, want):
    assert resolve_imp_type(imp) == want


@pytest.mark.parametrize(
    ("params", "want"),
    [
        ({"placementId": "456", "publisherId": "123"}, ("123_456", {"id": "123"})),
        ({"placementid": "123_456"}, ("123_456", {"id": "123"})),
        ({"placementId": "123_456", "publisherId": "999"}, ("123_456", {"id": "123"})),
        ({"placementId": "_456"}, ("_456", {})),
        ({"placementId": "456"}, "Missing publisherId param"),
        ({"publisherId": "123"}, "Missing placementId param"),
        ({"placementId": "1_2_3", "publisherId": "p"}, "Invalid placementId param '1_2_3' and publisherId param 'p'"),
        ({"placementId": 456}, 'cannot unmarshal openrtb_ext.ExtImpFacebook.PlacementId: expects " or n, but found 4'),
        ("x", 'expect { or n, but found "'),
    ],
)
def test_tag_id_and_publisher(params, want):
    request = request_with({"banner": {"h": 50}, "ext": {"bidder": params}})
    calls, bodies, errors = requests_of(ADAPTER, request, INFO)
    if isinstance(want, str):
        assert (calls, [(e.code, e.message) for e in errors]) == ([], [(ErrorCode.BAD_INPUT, want)])
        return
    assert errors == []
    assert (bodies[0]["imp"][0]["tagid"], bodies[0]["app"]["publisher"]) == want


@pytest.mark.parametrize(
    ("banner", "instl", "want"),
    [
        ({"w": 320, "h": 50}, 0, {"w": -1, "h": 50}),
        ({"format": [{"w": 640, "h": 480}, {"w": 300, "h": 250}, {"w": 320, "h": 50}]}, 0, {"w": -1, "h": 250}),
        ({"h": 480, "format": [{"w": 300, "h": 250}]}, 0, "imp #i: only banner heights 50 and 250 are supported"),
        ({"h": 0}, 0, "imp #i: only banner heights 50 and 250 are supported"),
        ({"format": [{"w": 640, "h": 480}]}, 0, "imp #i: banner height required"),
        ({}, 0, "imp #i: banner height required"),
        ({"w": 1, "h": 1, "format": [{"w": 1, "h": 1}]}, 1, {"w": 0, "h": 0}),
    ],
)
def test_banner_sizes(banner, instl, want):
    calls, bodies, errors = requests_of(ADAPTER, request_with({"banner": banner, "instl": instl}), INFO)
    if isinstance(want, str):
        assert (calls, [(e.code, e.message) for e in errors]) == ([], [(ErrorCode.BAD_INPUT, want)])
        return
    assert errors == []
    assert bodies[0]["imp"][0]["banner"] == want


@pytest.mark.parametrize(
    ("imp", "want_imp"),
    [
        (
            {"video": {"mimes": ["m"], "w": 9}, "rwdd": 1},
            {"video": {"mimes": ["m"], "w": 0, "h": 0, "ext": {"videotype": "rewarded"}}, "rwdd": 1},
        ),
        (
            {
                "video": {"mimes": ["m"], "ext": {"a": 1}},
                "ext": {"bidder": PARAMS, "prebid": {"is_rewarded_inventory": 1}},
                "instl": 1,
            },
            {
                "video": {"mimes": ["m"], "w": 0, "h": 0, "ext": {"a": 1, "videotype": "rewarded_interstitial"}},
                "rwdd": 1,
                "instl": 1,
            },
        ),
        (
            {"video": {"mimes": ["m"]}, "ext": {"bidder": PARAMS, "prebid": {"is_rewarded_inventory": "1"}}},
            {"video": {"mimes": ["m"], "w": 0, "h": 0}},
        ),
        ({"video": {"mimes": ["m"]}, "instl": 1}, {"banner": {"w": 0, "h": 0}, "instl": 1}),
        (
            {"native": {"request": "{}", "ver": "1.1", "api": [3]}, "banner": {"h": 50}},
            {"native": {"api": [3], "w": -1, "h": -1}},
        ),
        ({"audio": {"mimes": ["m"]}}, {"audio": {"mimes": ["m"]}}),
    ],
)
def test_the_one_format_sent(imp, want_imp):
    _calls, bodies, errors = requests_of(ADAPTER, request_with(imp), INFO)
    assert errors == []
    assert bodies[0]["imp"] == [{"id": "i", "tagid": "123_456", **want_imp}]


def test_call_carries_token_ids_and_auth():
    request = request_with(
        {"banner": {"h": 250}}, user={"buyeruid": "tok", "ext": {"consented_providers_settings": {}}}
    )
    calls, bodies, errors = requests_of(ADAPTER, request, INFO)
    assert errors == []
    assert [(c.uri, c.headers.get("X-Fb-Pool-Routing-Token"), c.imp_ids) for c in calls] == [(ENDPOINT, "tok", ["i"])]
    auth = hmac.new(b"secret", b"i", hashlib.sha256).hexdigest()
    assert bodies[0]["id"] == "i"
    assert bodies[0]["ext"] == {"platformid": "pid", "authentication_id": auth}
    assert bodies[0]["user"] == {"buyeruid": "tok", "ext": {}}


@pytest.mark.parametrize(
    ("settings", "bid_request", "want"),
    [
        ({"app_secret": "s"}, request_with({"banner": {"h": 50}}), (ErrorCode.UNKNOWN, NO_PLATFORM_ID)),
        ({"platform_id": "p"}, request_with({"banner": {"h": 50}}), (ErrorCode.UNKNOWN, NO_APP_SECRET)),
        (SETTINGS, {**request_with({}), "imp": []}, (ErrorCode.BAD_INPUT, "No impressions provided")),
        (
            SETTINGS,
            request_with({"banner": {"h": 50}}, user={"id": "u"}),
            (ErrorCode.BAD_INPUT, "Missing bidder token in 'user.buyeruid'"),
        ),
        (
            SETTINGS,
            request_with({"banner": {"h": 50}}, site={"page": "p"}),
            (ErrorCode.BAD_INPUT, "Site impressions are not supported."),
        ),
        (
            SETTINGS,
            request_with({"native": {"request": "{}"}, "instl": 1}),
            (ErrorCode.BAD_INPUT, "imp #i: interstitial imps are only supported for banner and video"),
        ),
    ],
)
def test_refused(settings, bid_request, want):
    adapter = build(AdapterConfig("audienceNetwork", ENDPOINT, settings))
    calls, errors = adapter.make_requests(bid_request, INFO)
    assert (calls, [(e.code, e.message) for e in errors]) == ([], [want])


def test_drop_first_key_removes_one_occurrence():
    body = {"a": [{"k": 1}], "b": {"k": 2}}
    assert drop_first_key(body, "k") is True
    assert body == {"a": [{}], "b": {"k": 2}}
    assert drop_first_key({"a": "k"}, "k") is False


ANSWER_REQUEST = {"imp": [{"id": "i", "video": {}, "instl": 1}]}


def answer(**bid) -> bytes:
    return orjson.dumps({"cur": "EUR", "seatbid": [{"bid": [{"id": "b", "impid": "i", "price": 1, **bid}]}]})


@pytest.mark.parametrize(
    ("bid", "want"),
    [
        ({"adm": '{"bid_id":"x"}'}, ("video", "x")),
        ({"adm": ""}, (ErrorCode.BAD_SERVER_RESPONSE, "Bid b missing 'adm'")),
        ({"adm": "markup"}, (ErrorCode.BAD_SERVER_RESPONSE, "expect { or n, but found m")),
        ({"adm": '{"bid_id":""}'}, (ErrorCode.BAD_SERVER_RESPONSE, "bid b missing 'bid_id' in 'adm'")),
        ({"adm": "null"}, (ErrorCode.BAD_SERVER_RESPONSE, "bid b missing 'bid_id' in 'adm'")),
        (
            {"adm": '{"bid_id":1}'},
            (
                ErrorCode.BAD_SERVER_RESPONSE,
                'cannot unmarshal audienceNetwork.facebookAdMarkup.BidID: expects " or n, but found 1',
            ),
        ),
        (
            {"adm": '{"bid_id":"x"}', "impid": "other"},
            (ErrorCode.BAD_SERVER_RESPONSE, "bid b 'impid' other does not match any imp in the bid request"),
        ),
    ],
)
def test_bids(bid, want):
    response, errors = ADAPTER.make_bids(
        ANSWER_REQUEST, RequestData("POST", ENDPOINT), ResponseData(200, answer(**bid))
    )
    assert response is not None and response.currency == "EUR"
    if isinstance(want[0], ErrorCode):
        assert (response.bids, [(e.code, e.message) for e in errors]) == ([], [want])
        return
    assert errors == []
    assert [(t.bid_type, t.bid["adid"], t.bid["crid"]) for t in response.bids] == [(want[0], want[1], want[1])]


@pytest.mark.parametrize(
    ("status", "headers", "want"),
    [
        (204, {}, []),
        (
            500,
            {"x-fb-an-errors": "boom"},
            [(ErrorCode.BAD_INPUT, "Unexpected status code 500 with error message 'boom'")],
        ),
        (400, {}, [(ErrorCode.BAD_INPUT, "Unexpected status code 400 with error message ''")]),
    ],
)
def test_status(status, headers, want):
    response, errors = ADAPTER.make_bids(
        ANSWER_REQUEST, RequestData("POST", ENDPOINT), ResponseData(status, b"", headers)
    )
    assert response is None
    assert [(e.code, e.message) for e in errors] == want
