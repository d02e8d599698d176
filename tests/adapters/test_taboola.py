"""Taboola adapter: endpoint macros, the native/display split, params shared across imps, site and app
rewriting, request.ext's pageType, params errors, status texts, bid typing and the price macro."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.taboola import build
from tests.adapters.helpers import bids_for, imp_with, requests_of

ENDPOINT = "https://{{.MediaType}}.bidder.taboola.com/OpenRTB/PS/auction?exchange={{.GvlID}}&publisher={{.PublisherID}}"
INFO = RequestInfo(bidder="taboola")
PARAMS = {"publisherId": "pub", "tagid": "tag"}
BANNER = {"banner": {"format": [{"w": 300, "h": 250}]}}
NATIVE = {"native": {"request": "{}"}}


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    return imp_with(imp_id, PARAMS if params is None else params, fields, BANNER)


def run(request: dict, gvl_id: Any = 42):
    adapter = build(AdapterConfig("taboola", ENDPOINT, {"gvl_id": gvl_id}))
    calls, bodies, errors = requests_of(adapter, request, INFO)
    assert all(dict(call.headers) == {} for call in calls)
    return calls, bodies, [(e.message, e.code) for e in errors]


def body_of(request: dict) -> dict:
    _, bodies, errors = run(request)
    assert errors == []
    assert len(bodies) == 1
    return bodies[0]


def bids(request: dict, body: Any, status: int = 200):
    return bids_for(build(AdapterConfig("taboola", ENDPOINT, {"gvl_id": 42})), request, body, status)


@pytest.mark.parametrize(
    ("request_", "gvl_id", "want"),
    [
        ({"imp": [imp()], "site": {}}, 42, [("display", "42", "pub", ["i"])]),
        ({"imp": [imp(**NATIVE)], "app": {}}, 42, [("native", "42", "pub", ["i"])]),
        ({"imp": [imp()], "site": {}}, 0, [("display", "", "pub", ["i"])]),  # no vendor id: empty
        ({"imp": [imp()], "site": {}}, None, [("display", "", "pub", ["i"])]),
        ({"imp": [imp()]}, 42, [("display", "42", "", ["i"])]),  # neither site nor app: no publisher
        ({"imp": [imp(params={"publisherId": "a b&c", "tagid": "t"})], "site": {}}, 42,
         [("display", "42", "a b&c", ["i"])]),  # fills the template as given
        # native imps in their own call, first; an imp with a banner is display; video only: no call
        ({"imp": [imp("b"), imp("n", **NATIVE), imp("bn", **BANNER, **NATIVE), imp("v", video={})], "site": {}}, 42,
         [("native", "42", "pub", ["n"]), ("display", "42", "pub", ["b", "bn"])]),
        ({"imp": [imp("v", video={}), imp("a", audio={})], "site": {}}, 42, []),
    ],
)  # fmt: skip
def test_calls_per_media_type_and_endpoint_macros(request_, gvl_id, want):
    calls, bodies, errors = run({"id": "r", **request_}, gvl_id)
    assert errors == []
    got = []
    for call, body in zip(calls, bodies, strict=True):
        assert call.imp_ids == [i["id"] for i in body["imp"]]
        got.append((call.uri, call.imp_ids))
    assert got == [
        (f"https://{media}.bidder.taboola.com/OpenRTB/PS/auction?exchange={gvl}&publisher={pub}", ids)
        for media, gvl, pub, ids in want
    ]


@pytest.mark.parametrize(
    ("imps", "want"),
    [
        # tagId before tagid; keys ignoring case, an exact match first; none: no imp.tagid at all
        ([imp(params={"publisherId": "p", "tagid": "a", "tagId": "b"})], [{"tagid": "b"}]),
        ([imp(params={"publisherId": "p", "tagid": "a", "tagId": ""})], [{"tagid": "a"}]),
        ([imp(params={"publisherId": "p", "TAGID": "a"})], [{"tagid": "a"}]),
        ([imp(params={"publisherId": "p"}, tagid="own")], [{}]),
        # bidfloor when not 0; position as banner.pos, a Go int8
        ([imp(params={**PARAMS, "bidfloor": 1.5}, bidfloor=0.1)], [{"tagid": "tag", "bidfloor": 1.5}]),
        ([imp(params={**PARAMS, "bidfloor": 0}, bidfloor=0.1)], [{"tagid": "tag", "bidfloor": 0.1}]),
        ([imp(params={**PARAMS, "position": 1})], [{"tagid": "tag", "banner": {"pos": 1}}]),
        ([imp(params={**PARAMS, "position": 0})], [{"tagid": "tag", "banner": {"pos": 0}}]),
        ([imp(params={**PARAMS, "position": 300})], [{"tagid": "tag", "banner": {"pos": 44}}]),
        ([imp(params={**PARAMS, "position": 128})], [{"tagid": "tag", "banner": {"pos": -128}}]),
        # one struct for all imps: a later imp keeps what an earlier one set
        ([imp("a", {**PARAMS, "position": 3, "bidfloor": 2}), imp("b", {"publisherId": "p"})],
         [{"tagid": "tag", "bidfloor": 2, "banner": {"pos": 3}}] * 2),
        ([imp("a", {**PARAMS, "position": 3}), imp("b", {"tagid": None, "position": None})],
         [{"tagid": "tag", "banner": {"pos": 3}}, {}]),
    ],
)  # fmt: skip
def test_imp_changes(imps, want):
    body = body_of({"id": "r", "imp": imps, "site": {}})
    for got, original, change in zip(body["imp"], imps, want, strict=True):
        expected = {key: value for key, value in original.items() if key != "tagid"}
        expected.update(
            (key, {**original[key], **value} if key == "banner" else value) for key, value in change.items()
        )
        assert got == expected


def test_position_is_not_set_on_a_native_imp():
    _, bodies, _ = run({"imp": [imp(params={**PARAMS, "position": 1}, **NATIVE)], "site": {}})
    assert bodies[0]["imp"][0]["native"] == NATIVE["native"]
    assert "banner" not in bodies[0]["imp"][0]


@pytest.mark.parametrize(
    ("params", "site", "want"),
    [
        (PARAMS, {"page": "pg", "domain": "d.com", "id": "s", "name": "n", "publisher": {"id": "x", "name": "y"}},
         {"page": "pg", "domain": "d.com", "id": "pub", "name": "pub", "publisher": {"id": "pub"}}),
        ({**PARAMS, "publisherDomain": "pd.com"}, {"domain": "d.com"},
         {"domain": "pd.com", "id": "pub", "name": "pub", "publisher": {"id": "pub"}}),
        ({"tagid": "t"}, {"id": "s", "name": "n", "page": "pg"}, {"page": "pg", "publisher": {}}),
    ],
)  # fmt: skip
def test_site_carries_the_publisher(params, site, want):
    body = body_of({"imp": [imp(params=params)], "site": site})
    assert body["site"] == want


def test_app_carries_the_publisher_id():
    body = body_of({"imp": [imp()], "app": {"id": "a", "bundle": "b", "domain": "d", "publisher": {"name": "n"}}})
    assert body["app"] == {"id": "pub", "bundle": "b", "domain": "d", "publisher": {"id": "pub"}}


@pytest.mark.parametrize(
    ("params", "want"),
    [
        (PARAMS, {"bcat": ["rb"], "badv": ["ra"]}),
        ({**PARAMS, "bcat": ["c"], "badv": ["a"]}, {"bcat": ["c"], "badv": ["a"]}),
        ({**PARAMS, "bcat": [], "badv": None}, {"badv": ["ra"]}),  # [] empties it (left out); null keeps it
    ],
)
def test_bcat_and_badv_params_replace_the_requests(params, want):
    body = body_of({"imp": [imp(params=params)], "site": {}, "bcat": ["rb"], "badv": ["ra"]})
    assert {key: body[key] for key in ("bcat", "badv") if key in body} == want


PREBID = {"integration": "pbjs"}


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        (None, {"pageType": "article"}),
        ({}, {"pageType": "article"}),
        ({"prebid": PREBID, "pageType": "old"}, {"prebid": PREBID, "pageType": "article"}),
    ],
)  # fmt: skip
def test_page_type_goes_to_request_ext(ext, want):
    request = {"imp": [imp(params={**PARAMS, "pageType": "article"})], "site": {}}
    if ext is not None:
        request["ext"] = ext
    assert body_of(request)["ext"] == want


def test_no_page_type_leaves_request_ext_alone():
    assert body_of({"imp": [imp()], "site": {}, "ext": [1]})["ext"] == [1]


NOT_A_STRING = 'expects " or n, but found '
FIELD = "cannot unmarshal openrtb_ext.ImpExtTaboola."  # then the Go field


@pytest.mark.parametrize(
    ("request_", "messages"),
    [
        ({"imp": [imp(params={"publisherId": 1})]}, [f"{FIELD}PublisherId: {NOT_A_STRING}1"]),
        ({"imp": [imp(params={**PARAMS, "TagId": True})]}, [f"{FIELD}TagId: {NOT_A_STRING}t"]),
        ({"imp": [imp(params={**PARAMS, "tagId": []})]}, [f"{FIELD}TagID: {NOT_A_STRING}["]),
        ({"imp": [imp(params={**PARAMS, "bidfloor": "1"})]}, [f"{FIELD}BidFloor: invalid number"]),
        ({"imp": [imp(params={**PARAMS, "position": 1.5})]},
         [f"{FIELD}Position: can not decode float as int"]),
        ({"imp": [imp(params={**PARAMS, "position": 2**63})]}, [f"cannot unmarshal ReadInt64: {2**63}"]),
        ({"imp": [imp(params={**PARAMS, "bcat": [1]})]}, [f"cannot unmarshal []string: {NOT_A_STRING}1"]),
        ({"imp": [imp(params={**PARAMS, "badv": "x"})]},
         [f'{FIELD}BAdv: decode slice: expect [ or n, but found "']),
        ({"imp": [{"id": "i", **BANNER}]}, ["expect { or n, but found \x00"]),  # no ext
        ({"imp": [imp(params=None, ext={"bidder": None})]}, ["expect { or n, but found \x00"]),
        ({"imp": [imp(params=None, ext={"bidder": "x"})]}, ['expect { or n, but found "']),
        # every imp's error, then request.ext's; no call at all
        ({"imp": [imp("a", {"publisherId": 1}), imp("b"), imp("c", {"pageType": 5})]},
         [f"{FIELD}PublisherId: {NOT_A_STRING}1",
          f"{FIELD}PageType: {NOT_A_STRING}5"]),
        ({"imp": [imp("a", {"publisherId": 1}), imp("b", {**PARAMS, "pageType": "p"})], "ext": [1]},
         [f"{FIELD}PublisherId: {NOT_A_STRING}1",
          "could not unmarshal request ext: expect { or n, but found ["]),
        ({"imp": [imp(params={**PARAMS, "pageType": "p"})], "ext": "x"},
         ['could not unmarshal request ext: expect { or n, but found "']),
    ],
)  # fmt: skip
def test_any_error_fails_the_whole_request(request_, messages):
    calls, _, errors = run({"id": "r", "site": {}, **request_})
    assert calls == []
    assert errors == [(message, ErrorCode.UNKNOWN) for message in messages]


@pytest.mark.parametrize(
    ("status", "message", "code"),
    [
        (400, "Unexpected status code: 400. Bad request from publisher. Run with request.debug = 1 for more info.",
         ErrorCode.BAD_INPUT),
        (302, "Unexpected status code: 302. Run with request.debug = 1 for more info.", ErrorCode.BAD_SERVER_RESPONSE),
        (500, "Unexpected status code: 500. Run with request.debug = 1 for more info.", ErrorCode.BAD_SERVER_RESPONSE),
    ],
)  # fmt: skip
def test_failure_status(status, message, code):
    response, errors = bids({"imp": [imp()]}, b"{}", status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == [(message, code)]


def test_no_content_is_no_bids():
    assert bids({"imp": [imp()]}, b"", 204) == (None, [])


@pytest.mark.parametrize(
    ("imps", "want"),
    [
        ([imp(**BANNER, **NATIVE)], "banner"),
        ([imp(**NATIVE)], "native"),
        ([imp(video={}), imp(**NATIVE)], "native"),  # an imp of that id with neither is passed over
    ],
)
def test_bids_typed_by_imp_banner_first(imps, want):
    body = {"cur": "EUR", "seatbid": [{"bid": [{"id": "b", "impid": "i", "price": 1}]}]}
    response, errors = bids({"imp": imps}, body)
    assert errors == []
    assert response.currency == "EUR"
    assert [b.bid_type for b in response.bids] == [want]


def test_bid_for_an_imp_without_banner_or_native_is_an_error_and_the_rest_stay():
    body = {"seatbid": [{"bid": [{"id": "1", "impid": "v", "price": 1}, {"id": "2", "impid": "i", "price": 1}]}]}
    response, errors = bids({"imp": [imp(), imp("v", video={})]}, body)
    assert [b.bid["id"] for b in response.bids] == ["2"]
    assert response.currency == "USD"
    assert [(e.message, e.code) for e in errors] == [
        ('Failed to find banner/native impression "v" ', ErrorCode.BAD_INPUT)
    ]


@pytest.mark.parametrize(
    ("price", "text"),
    [(2.1, "2.1"), (3, "3"), (0.0000001, "0.0000001"), (12345678.5, "12345678.5"), (0, "0")],
)
def test_price_macro_in_nurl_adm_and_burl(price, text):
    macro = "${AUCTION_PRICE}"
    bid = {"id": "b", "impid": "i", "price": price, "nurl": f"n?p={macro}", "adm": f"<a>{macro}{macro}</a>",
           "burl": f"b?p={macro}", "lurl": f"l?p={macro}"}  # fmt: skip
    response, errors = bids({"imp": [imp()]}, {"seatbid": [{"bid": [bid]}]})
    assert errors == []
    got = response.bids[0].bid
    assert (got["nurl"], got["adm"], got["burl"], got["lurl"]) == (
        f"n?p={text}",
        f"<a>{text}{text}</a>",
        f"b?p={text}",
        f"l?p={macro}",  # lurl is left alone
    )
