"""Outbrain adapter: params shared across imps, the publisher, bcat/badv, swallowed params errors,
status texts, bid typing and the native markup rewrite."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.outbrain import build
from tests.adapters.helpers import bids_for, imp_with, requests_of

ENDPOINT = "http://example.com/bid"
INFO = RequestInfo(bidder="outbrain")
PUB = {"publisher": {"id": "p"}}


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    return imp_with(imp_id, PUB if params is None else params, fields, {"banner": {"format": [{"w": 1, "h": 1}]}})


def run(request: dict):
    calls, bodies, errors = requests_of(build(AdapterConfig("outbrain", ENDPOINT)), request, INFO)
    assert errors == []  # PBS-Go's adapter never reports a request error
    assert [(call.uri, dict(call.headers)) for call in calls] == [(ENDPOINT, {})]
    return calls[0], bodies[0]


def bids(request: dict, body: Any, status: int = 200):
    return bids_for(build(AdapterConfig("outbrain", ENDPOINT)), request, body, status)


@pytest.mark.parametrize(
    ("imps", "want_tagids", "want_publisher"),
    [
        ([imp(params={"publisher": {"id": "p"}, "tagid": "t"})], ["t"], {"id": "p"}),
        ([imp(params=PUB, tagid="own")], ["own"], {"id": "p"}),  # no tagid param: the imp keeps its own
        ([imp(params={**PUB, "tagid": "t"}, tagid="own")], ["t"], {"id": "p"}),
        # one struct for all imps: a later imp keeps an earlier imp's tagid and publisher fields
        (
            [imp("a", {**PUB, "tagid": "t"}), imp("b", {"publisher": {"name": "n"}})],
            ["t", "t"],
            {"id": "p", "name": "n"},
        ),
        ([imp("a", {**PUB, "tagid": "t"}), imp("b", {**PUB, "tagid": None})], ["t", None], {"id": "p"}),
        (
            [imp("a", {"publisher": {"id": "a"}}), imp("b", {"publisher": {"id": "b", "domain": "d"}})],
            [None, None],
            {"id": "b", "domain": "d"},
        ),
        ([imp(params={"PUBLISHER": {"ID": "x"}, "TagId": "t"})], ["t"], {"id": "x"}),  # keys match ignoring case
        ([imp(params={"publisher": None})], [None], {}),
    ],
)
def test_params_of_all_imps_are_read_into_one_set(imps, want_tagids, want_publisher):
    call, body = run({"id": "r", "imp": imps, "site": {"page": "pg"}})
    assert [i.get("tagid") for i in body["imp"]] == want_tagids
    assert body["site"] == {"page": "pg", "publisher": want_publisher}
    assert call.imp_ids == [i["id"] for i in imps]


SITE_WITH_PUBLISHER = {"page": "pg", "publisher": {"id": "old", "cat": ["c"]}}


@pytest.mark.parametrize(
    ("places", "want"),
    [
        ({"site": SITE_WITH_PUBLISHER}, {"site": {"page": "pg", "publisher": {"id": "p"}}}),
        ({"app": {"bundle": "b", "publisher": {"id": "old"}}}, {"app": {"bundle": "b", "publisher": {"id": "p"}}}),
        (
            {"site": {"page": "pg"}, "app": {"bundle": "b"}},
            {"site": {"page": "pg", "publisher": {"id": "p"}}, "app": {"bundle": "b"}},
        ),
        ({}, {}),
    ],
)
def test_publisher_replaces_the_site_else_the_app_publisher(places, want):
    _, body = run({"id": "r", "imp": [imp()], **places})
    assert {key: body[key] for key in ("site", "app") if key in body} == want


@pytest.mark.parametrize(
    ("params", "want"),
    [
        (PUB, {"bcat": ["rb"], "badv": ["ra"]}),
        ({**PUB, "bcat": ["c"], "badv": ["a"]}, {"bcat": ["c"], "badv": ["a"]}),
        ({**PUB, "bcat": [], "badv": None}, {"badv": ["ra"]}),  # [] empties it (left out); null keeps it
    ],
)
def test_bcat_and_badv_params_replace_the_requests(params, want):
    _, body = run({"id": "r", "imp": [imp(params=params)], "bcat": ["rb"], "badv": ["ra"]})
    assert {key: body[key] for key in ("bcat", "badv") if key in body} == want


@pytest.mark.parametrize(
    ("bad", "want_publisher", "want_tagid", "want_bcat"),
    [
        ({}, {"id": "p"}, "t", ["b"]),  # no ext.bidder: nothing read
        ({"ext": {"bidder": {"publisher": {"id": "q"}, "tagid": "u"}, "prebid": 5}}, {"id": "p"}, "t", ["b"]),
        # read up to the faulty value, which a string field takes as "" and a list or object ignores
        ({"ext": {"bidder": {"publisher": {"id": "q"}, "tagid": 5, "bcat": ["x"]}}}, {"id": "q"}, None, ["b"]),
        ({"ext": {"bidder": {"tagid": "u", "bcat": "x", "publisher": {"id": "q"}}}}, {"id": "p"}, "u", ["b"]),
        ({"ext": {"bidder": {"publisher": {"name": "n", "id": 1}, "tagid": "u"}}}, {"name": "n"}, "t", ["b"]),
        ({"ext": {"bidder": {"publisher": [], "tagid": "u"}}}, {"id": "p"}, "t", ["b"]),
        ({"ext": {"bidder": {"bcat": ["x", None, 1, "y"]}}}, {"id": "p"}, "t", ["x", "", ""]),
    ],
)
def test_unreadable_params_are_sent_unchanged_without_error(bad, want_publisher, want_tagid, want_bcat):
    first = imp("a", {**PUB, "tagid": "t", "bcat": ["b"]})
    faulty = {"id": "b", "banner": {}, "tagid": "own", **bad}
    _, body = run({"id": "r", "imp": [first, faulty, imp("c", {})], "site": {}})
    assert body["imp"][1] == faulty
    assert body["imp"][2].get("tagid") == want_tagid  # what the faulty imp left for the next one
    assert body["site"]["publisher"] == want_publisher
    assert body["bcat"] == want_bcat


@pytest.mark.parametrize(
    ("status", "message", "code"),
    [
        (400, "Unexpected status code: 400. Bad request from publisher. Run with request.debug = 1 for more info.",
         ErrorCode.BAD_INPUT),
        (418, "Unexpected status code: 418. Run with request.debug = 1 for more info.", ErrorCode.BAD_SERVER_RESPONSE),
        (500, "Unexpected status code: 500. Run with request.debug = 1 for more info.", ErrorCode.BAD_SERVER_RESPONSE),
    ],
)  # fmt: skip
def test_failure_status(status, message, code):
    response, errors = bids({"imp": [imp()]}, b"{}", status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == [(message, code)]


def test_no_content_is_no_bids():
    assert bids({"imp": [imp()]}, b"", 204) == (None, [])


def test_body_that_is_no_object_fails_in_json_iterator_words():
    response, errors = bids({"imp": [imp()]}, b"[]")
    assert response is None
    assert [(e.message, e.code) for e in errors] == [("expect { or n, but found [", ErrorCode.UNKNOWN)]


@pytest.mark.parametrize(
    ("media", "want"),
    [
        ({"banner": {}, "video": {}, "native": {"request": "{}"}}, "native"),
        ({"banner": {}, "video": {}}, "banner"),
        ({"video": {}}, "video"),
    ],
)
def test_bids_typed_by_imp_native_first(media, want):
    adm = "{}" if want == "native" else "<ad>"
    body = {"cur": "EUR", "seatbid": [{"bid": [{"id": "b", "impid": "i", "price": 1, "adm": adm}]}]}
    response, errors = bids({"imp": [imp(**media)]}, body)
    assert errors == []
    assert response.currency == "EUR"
    assert [b.bid_type for b in response.bids] == [want]


def test_bid_for_an_unknown_or_audio_imp_is_an_error_and_the_rest_stay():
    body = {"seatbid": [{"bid": [{"id": "1", "impid": "x", "price": 1}, {"id": "2", "impid": "a", "price": 1},
                                 {"id": "3", "impid": "i", "price": 1}]}]}  # fmt: skip
    response, errors = bids({"imp": [imp(), imp("a", audio={})]}, body)
    assert [b.bid["id"] for b in response.bids] == ["3"]
    assert response.currency == "USD"
    assert [(e.message, e.code) for e in errors] == [
        ('Failed to find native/banner/video impression "x" ', ErrorCode.BAD_INPUT),
        ('Failed to find native/banner/video impression "a" ', ErrorCode.BAD_INPUT),
    ]


NATIVE_IMP = imp(native={"request": "{}"})


@pytest.mark.parametrize(
    ("adm", "want"),
    [
        # impression trackers: image -> imptrackers (after those given), script -> jstracker (the last
        # one); other events dropped with the rest of eventtrackers
        ('{"imptrackers":["a"],"eventtrackers":[{"event":1,"method":1,"url":"i"},{"event":1,"method":2,"url":"j1"},'
         '{"event":1,"method":2,"url":"j2"},{"event":2,"method":1,"url":"x"},{"event":1,"method":3,"url":"y"}],'
         '"link":{"url":"l"}}',
         '{"link":{"url":"l"},"imptrackers":["a","i"],'
         '"jstracker":"\\u003cscript src=\\"j2\\"\\u003e\\u003c/script\\u003e"}'),
        # PBS-Go's field order and omitempty rules; asset id 0 kept (a pointer); link always written
        ('{"privacy":"p","assets":[{"data":{"value":"v","type":0},"required":0,"id":0},{"img":{}},{"title":{}}],'
         '"ver":"1.2"}',
         '{"ver":"1.2","assets":[{"id":0,"data":{"value":"v"}},{"img":{"url":""}},{"title":{"text":""}}],'
         '"link":{"url":""},"privacy":"p"}'),
        ("{}", '{"link":{"url":""}}'),
        ("null", '{"link":{"url":""}}'),
        # keys ignoring case, unknown keys dropped, ext kept, HTML characters escaped
        ('{"VER":"1.1","foo":1,"Link":{"URL":"http://x?a=1&b=<2>","clicktrackers":[],"ext":{"k":"&"}}}',
         '{"ver":"1.1","link":{"url":"http://x?a=1\\u0026b=\\u003c2\\u003e","ext":{"k":"\\u0026"}}}'),
        ('{"assets":[{"id":1,"video":{"vasttag":"<VAST/>"},"link":{"url":"u","fallback":"f"}}],"dcourl":"d"}',
         '{"assets":[{"id":1,"video":{"vasttag":"\\u003cVAST/\\u003e"},"link":{"url":"u","fallback":"f"}}],'
         '"dcourl":"d","link":{"url":""}}'),
    ],
)  # fmt: skip
def test_native_markup_is_rewritten(adm, want):
    body = {"seatbid": [{"bid": [{"id": "b", "impid": "i", "price": 1, "adm": adm}]}]}
    response, errors = bids({"imp": [NATIVE_IMP]}, body)
    assert errors == []
    assert [(b.bid_type, b.bid["adm"]) for b in response.bids] == [("native", want)]


@pytest.mark.parametrize(
    ("adm", "message"),
    [
        ("<div>", "expect { or n, but found <"),
        (None, "expect { or n, but found \x00"),  # no adm at all
        ('{"ver":1}', 'cannot unmarshal response.Response.Ver: expects " or n, but found 1'),
        ('{"link":{"url":true}}', 'cannot unmarshal response.Link.URL: expects " or n, but found t'),
        ('{"assets":{}}', "cannot unmarshal response.Response.Assets: decode slice: expect [ or n, but found {"),
        ('{"assets":[1]}', "cannot unmarshal []response.Asset: expect { or n, but found 1"),
        ('{"assets":[{"required":300}]}', "cannot unmarshal ReadInt8: 300"),
        ('{"assets":[{"id":1.5}]}', "cannot unmarshal response.Asset.ID: can not decode float as int"),
        ('{"imptrackers":[1]}', 'cannot unmarshal []string: expects " or n, but found 1'),
        ('{"assets":[{"title":[]}]}', "cannot unmarshal response.Asset.Title: expect { or n, but found ["),
    ],
)
def test_native_markup_that_does_not_decode_drops_the_bid(adm, message):
    bad = {"id": "bad", "impid": "i", "price": 1, **({} if adm is None else {"adm": adm})}
    body = {"seatbid": [{"bid": [bad, {"id": "ok", "impid": "i", "price": 1, "adm": "{}"}]}]}
    response, errors = bids({"imp": [NATIVE_IMP]}, body)
    assert [b.bid["id"] for b in response.bids] == ["ok"]
    assert [(e.message, e.code) for e in errors] == [(message, ErrorCode.UNKNOWN)]
