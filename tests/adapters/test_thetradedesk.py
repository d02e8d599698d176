"""The Trade Desk adapter: the builder's checks of ``extra_info`` and the endpoint template, the
supply id in the endpoint, the publisher id, banner sizes, params errors, headers, bid typing by
``mtype``, price macros and status texts."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import JSON_HEADERS, AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.golike import ABSENT_OBJECT
from hbserver.adapters.thetradedesk import build
from tests.adapters.helpers import bids_for, imp_with, requests_of

ENDPOINT = "https://direct.adsrvr.org/bid/bidder/{{.SupplyId}}"
INFO = RequestInfo(bidder="thetradedesk")


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    return imp_with(imp_id, {"publisherId": "p"} if params is None else params, fields, {"banner": {"w": 1, "h": 2}})


def adapter(endpoint: str = ENDPOINT, extra_info: str = "ttd"):
    return build(AdapterConfig("thetradedesk", endpoint, {"extra_info": extra_info}))


def run(request: dict, endpoint: str = ENDPOINT, extra_info: str = "ttd"):
    return requests_of(adapter(endpoint, extra_info), request, INFO)


def bids(body: Any, status: int = 200):
    return bids_for(adapter(), {"id": "r", "imp": [imp()]}, body, status)


@pytest.mark.parametrize("extra_info", ["", "ttd", "abc", "1a", "A-b_c"])
def test_extra_info_ending_in_a_lower_case_letter_is_accepted(extra_info):
    assert adapter(extra_info=extra_info) is not None


@pytest.mark.parametrize("extra_info", ["12365217635", "abc1", "TTD", "ttd/", "ttd\n", "é"])
def test_other_extra_info_fails_the_build(extra_info):
    with pytest.raises(ValueError) as caught:
        adapter(extra_info=extra_info)
    assert str(caught.value) == "ExtraAdapterInfo must be a simple string provided by TheTradeDesk"


@pytest.mark.parametrize(
    ("endpoint", "message"),
    [
        (
            "{{Malformed}}",
            'unable to parse endpoint url template: template: endpointTemplate:1: function "Malformed" not defined',
        ),
        (
            "http://h/{{.SupplyId",
            "unable to parse endpoint url template: template: endpointTemplate:1: unclosed action",
        ),
        (
            "http://h/{{.Nope}}",
            'unable to resolve endpoint macros: template: endpointTemplate:1:11: executing "endpointTemplate" '
            "at <.Nope>: can't evaluate field Nope in type macros.EndpointTemplateParams",
        ),
        (
            "http://hé/{{.SupplyId}}/{{ .Nope }}",  # the column counts bytes, up to the field
            'unable to resolve endpoint macros: template: endpointTemplate:1:28: executing "endpointTemplate" '
            "at <.Nope>: can't evaluate field Nope in type macros.EndpointTemplateParams",
        ),
        (
            "http://h/{{.Nope}}/{{Bad}}",
            'unable to parse endpoint url template: template: endpointTemplate:1: function "Bad" not defined',
        ),
        ("http://h/{{- .SupplyId}}", "unable to parse endpoint url template: unsupported action {{- .SupplyId}}"),
        ("http://h/{{print}}", "unable to parse endpoint url template: unsupported action {{print}}"),
    ],
)
def test_endpoint_template_go_refuses_fails_the_build(endpoint, message):
    with pytest.raises(ValueError) as caught:
        adapter(endpoint)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("endpoint", "extra_info", "imps", "want"),
    [
        (ENDPOINT, "ttd", [imp()], "https://direct.adsrvr.org/bid/bidder/ttd"),
        (ENDPOINT, "", [imp()], "https://direct.adsrvr.org/bid/bidder/"),
        (ENDPOINT, "ttd", [imp(params={"supplySourceId": "a b?c"})], "https://direct.adsrvr.org/bid/bidder/a b?c"),
        (
            ENDPOINT,
            "ttd",
            [imp("a", {"supplySourceId": ""}), imp("b", {"supplysourceid": "s2"}), imp("c", {"supplySourceId": "s3"})],
            "https://direct.adsrvr.org/bid/bidder/s2",
        ),
        ("https://{{.Host}}x.org/{{.SupplyId}}/{{ .SupplyId }}", "d", [imp()], "https://x.org/d/d"),
    ],
)
def test_supply_id_fills_the_endpoint(endpoint, extra_info, imps, want):
    calls, _, errors = run({"id": "r", "imp": imps}, endpoint, extra_info)
    assert errors == []
    assert [call.uri for call in calls] == [want]


def test_no_endpoint_at_all_is_an_error():
    calls, _, errors = run({"id": "r", "imp": [imp()]}, "{{.SupplyId}}", "")
    assert calls == []
    assert [(e.message, e.code) for e in errors] == [
        ("Either supplySourceId or a default endpoint must be provided", ErrorCode.UNKNOWN)
    ]


@pytest.mark.parametrize(
    ("request_top", "publisher_id", "want"),
    [
        (
            {"site": {"id": "s", "publisher": {"id": "old", "name": "n"}}},
            "p",
            {"site": {"id": "s", "publisher": {"id": "p", "name": "n"}}},
        ),
        ({"site": {"publisher": {"id": "old"}}}, "", {"site": {"publisher": {"id": "old"}}}),
        ({"site": {"id": "s"}}, "p", {"site": {"id": "s", "publisher": {"id": "p"}}}),
        ({"site": {"id": "s"}}, "", {"site": {"id": "s", "publisher": {}}}),
        ({"site": {"id": "s", "publisher": None}}, "", {"site": {"id": "s", "publisher": {}}}),
        ({"app": {"bundle": "b", "publisher": {"id": "old"}}}, "p", {"app": {"bundle": "b", "publisher": {"id": "p"}}}),
        ({"app": {"bundle": "b"}}, "", {"app": {"bundle": "b", "publisher": {}}}),
        ({"dooh": {"id": "d"}}, "p", {"dooh": {"id": "d"}}),
    ],
)
def test_publisher_id_goes_to_site_else_app(request_top, publisher_id, want):
    _, bodies, errors = run({"id": "r", **request_top, "imp": [imp(params={"publisherId": publisher_id})]})
    assert errors == []
    assert {key: value for key, value in bodies[0].items() if key not in ("id", "imp")} == want


def test_first_non_empty_publisher_id_wins():
    imps = [imp("a", {"publisherId": ""}), imp("b", {"publisherId": "p2"}), imp("c", {"publisherId": "p3"})]
    _, bodies, _ = run({"id": "r", "site": {}, "imp": imps})
    assert bodies[0]["site"] == {"publisher": {"id": "p2"}}


@pytest.mark.parametrize(
    ("banner", "want"),
    [
        ({"w": 1, "h": 2}, {"w": 1, "h": 2}),
        ({"format": [{"w": 300, "h": 250}, {"w": 728, "h": 90}], "w": 1, "h": 2}, {"w": 300, "h": 250}),
        ({"format": [{"h": 250}]}, {"w": 0, "h": 250}),
        ({"format": []}, {}),
    ],
)
def test_banner_takes_its_first_format_size(banner, want):
    _, bodies, _ = run({"id": "r", "imp": [imp(banner=banner)]})
    sent = bodies[0]["imp"][0]["banner"]
    assert {key: sent[key] for key in ("w", "h") if key in sent} == want


def test_body_is_written_as_go_types_with_ext_unchanged_and_json_headers():
    ext = {"bidder": {"publisherId": "p", "x": 1}, "gpid": "g"}
    request = {"id": "r", "at": 0, "imp": [imp(video={"mimes": ["v"], "minduration": 0}, bidfloor=0, ext=ext)]}
    calls, bodies, _ = run(request)
    assert dict(calls[0].headers) == dict(JSON_HEADERS)
    assert calls[0].imp_ids == ["i"]
    assert bodies[0] == {"id": "r", "imp": [{"id": "i", "video": {"mimes": ["v"]}, "ext": ext}]}


@pytest.mark.parametrize(
    ("imps", "message"),
    [
        ([{"id": "a", "banner": {}}], ABSENT_OBJECT),
        ([{"id": "a", "banner": {}, "ext": {"prebid": {}}}], ABSENT_OBJECT),
        ([imp(ext={"bidder": []})], "expect { or n, but found ["),
        (
            [imp(params={"publisherId": 123456})],
            'cannot unmarshal openrtb_ext.ExtImpTheTradeDesk.PublisherId: expects " or n, but found 1',
        ),
        (
            [imp(params={"supplySourceId": 55555})],
            'cannot unmarshal openrtb_ext.ExtImpTheTradeDesk.SupplySourceId: expects " or n, but found 5',
        ),
        ([imp("a", {"publisherId": "p"}), {"id": "b", "banner": {}}], ABSENT_OBJECT),  # supply id not found yet
    ],
)
def test_bad_imp_read_fails_the_request(imps, message):
    calls, _, errors = run({"id": "r", "imp": imps})
    assert calls == []
    assert [(e.message, e.code) for e in errors] == [(message, ErrorCode.UNKNOWN)]


def test_imps_after_both_params_are_found_are_not_read():
    imps = [imp("a", {"publisherId": "p", "supplySourceId": "s"}), {"id": "b", "banner": {}, "ext": {"bidder": 5}}]
    calls, _, errors = run({"id": "r", "imp": imps})
    assert errors == []
    assert [(call.uri, call.imp_ids) for call in calls] == [("https://direct.adsrvr.org/bid/bidder/s", ["a", "b"])]


@pytest.mark.parametrize(("mtype", "want"), [(1, "banner"), (2, "video"), (3, "audio"), (4, "native")])
def test_bid_typed_by_mtype(mtype, want):
    response, errors = bids(
        {"cur": "EUR", "seatbid": [{"bid": [{"id": "b", "impid": "i", "price": 1, "mtype": mtype}]}]}
    )
    assert errors == []
    assert response.currency == "EUR"
    assert [b.bid_type for b in response.bids] == [want]


@pytest.mark.parametrize(("mtype", "shown"), [(None, 0), (0, 0), (5, 5), (-1, -1)])
def test_bid_without_a_known_mtype_fails_the_answer(mtype, shown):
    bad = {"id": "b", "impid": "i", "price": 1, **({} if mtype is None else {"mtype": mtype})}
    response, errors = bids({"seatbid": [{"bid": [{"id": "ok", "impid": "i", "price": 1, "mtype": 1}, bad]}]})
    assert response is None
    assert [(e.message, e.code) for e in errors] == [(f"unsupported mtype: {shown}", ErrorCode.UNKNOWN)]


@pytest.mark.parametrize(
    ("price", "text"), [(1.5, "1.5"), (2, "2"), (0.0000001, "0.0000001"), (1e21, "1000000000000000000000"), (0, "0")]
)
def test_auction_price_macro_is_replaced_in_adm_nurl_and_burl(price, text):
    bid = {
        "id": "b", "impid": "i", "price": price, "mtype": 1, "adm": "a=${AUCTION_PRICE}&b=${AUCTION_PRICE}",
        "nurl": "n=${AUCTION_PRICE}", "burl": "u=${AUCTION_PRICE}", "lurl": "l=${AUCTION_PRICE}",
    }  # fmt: skip
    response, _ = bids({"seatbid": [{"bid": [bid]}]})
    got = response.bids[0].bid
    assert (got["adm"], got["nurl"], got["burl"], got["lurl"]) == (
        f"a={text}&b={text}",
        f"n={text}",
        f"u={text}",
        "l=${AUCTION_PRICE}",
    )


def test_no_content_is_an_empty_response_in_usd():
    response, errors = bids(b"", 204)
    assert errors == []
    assert (response.bids, response.currency) == ([], "USD")


def test_answer_without_cur_is_usd():
    response, _ = bids({"seatbid": [{"bid": [{"id": "b", "impid": "i", "price": 1, "mtype": 1}]}]})
    assert response.currency == "USD"


@pytest.mark.parametrize(
    ("status", "code"),
    [(400, ErrorCode.BAD_INPUT), (500, ErrorCode.BAD_SERVER_RESPONSE), (201, ErrorCode.BAD_SERVER_RESPONSE)],
)
def test_failure_status(status, code):
    response, errors = bids(b"", status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == [
        (f"Unexpected status code: {status}. Run with request.debug = 1 for more info", code)
    ]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", "expect { or n, but found \x00"),
        (b"[]", "expect { or n, but found ["),
        (b'{"cur": 1}', 'cannot unmarshal openrtb2.BidResponse.Cur: expects " or n, but found 1'),
    ],
)
def test_answer_that_does_not_decode_is_an_unclassified_error(body, message):
    response, errors = bids(body)
    assert response is None
    assert [(e.message, e.code) for e in errors] == [(message, ErrorCode.UNKNOWN)]
