"""The recipe engine (hbserver.adapters.recipe): a recipe file's data read into a Recipe (unknown
keys, step names and shapes refused, naming the problem) and a RecipeAdapter run from it: calls per
imp or for all imps, the errors of a request without calls or an answer without seatbids, untyped
bids and the currency."""

from __future__ import annotations

import re
from typing import Any

import pytest

from hbserver.adapters import RECIPE_DIR
from hbserver.adapters.base import JSON_HEADERS, AdapterConfig, ConversionError, ErrorCode, RequestInfo
from hbserver.adapters.recipe import Recipe, RecipeAdapter, RecipeError, load_recipe
from tests.adapters.helpers import bids_for, converter, requests_of

ENDPOINT = "https://x.example.com/{{.Host}}"
INFO = RequestInfo(bidder="x")
PARAMS = {"struct": "openrtb_ext.ExtX", "fields": {"host": ["Host", "string"]}}


def adapter(**data: Any) -> RecipeAdapter:
    return RecipeAdapter(Recipe.of({"params": PARAMS, **data}), AdapterConfig("x", ENDPOINT))


def imp(imp_id: str, params: Any) -> dict[str, Any]:
    return {"id": imp_id, "banner": {"w": 1}, "ext": {"bidder": params}}


def errors_of(errors: list) -> list[tuple[str, ErrorCode]]:
    return [(e.message, e.code) for e in errors]


# --- loading ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"parms": {}}, "unknown recipe keys ['parms']"),
        ({"split": "each"}, "split: unknown value 'each'"),
        ({"imp_ext": "rewrite"}, "imp_ext: unknown value 'rewrite'"),
        ({"headers": ["json", "cookies"]}, "headers: unknown step 'cookies'"),
        ({"untyped": "ignore"}, "untyped: unknown value 'ignore'"),
        ({"currency": "eur"}, "currency: unknown value 'eur'"),
        ({"params": {"fields": {"a": ["A", "text"]}}}, "params.fields.a"),
        ({"endpoint": {"macros": ["Host"]}}, "endpoint.macros"),
        ({"no_calls_error": 5}, "no_calls_error: expected a text or {text, class}"),
        ({"params_error": {"text": "t", "class": "fatal"}}, "params_error: unknown error class 'fatal'"),
        ({"empty_seatbid_error": {"class": "generic"}}, "empty_seatbid_error: expected a text"),
        ({"answer": {"body_class": "x"}}, "answer.body_class"),
        ({"bid_type": {"source": "adm"}}, "bid_type.source: unknown 'adm'"),
        ({"on_bad_imp": "skip"}, "on_bad_imp: unknown value 'skip'"),
        ({"floors": "eur"}, "floors: unknown value 'eur'"),
        ({"checks": {"rule": "nonempty"}}, "checks: expected a list"),
        ({"checks": [{"rule": "positive", "error": "e"}]}, "checks: expected {rule, params, error}"),
        ({"bid_rewrites": "auction_price"}, "bid_rewrites: expected a list of names"),
        ({"bid_rewrites": ["clearing_price"]}, "bid_rewrites: unknown step 'clearing_price'"),
        ({"bid_video": "duration"}, "bid_video: unknown value 'duration'"),
        ({"empty_answer": "empty"}, "empty_answer: unknown value 'empty'"),
        ({"params": "all"}, "params: expected a mapping or none"),
        ({"params_error": "bad {imp}: {}"}, "params_error: 'bad {imp}: {}' has a placeholder other than {}, {index}"),
        ({"no_calls_error": {"text": "{0} {1}"}}, "no_calls_error: '{0} {1}' has a placeholder other than"),
        (
            {"bid_type": {"error": "{bidid}"}},
            "bid_type.error: '{bidid}' has a placeholder other than {impid}, {mtype}, {id}",
        ),
        ({"bid_type": {"ext_error": "{"}}, "bid_type.ext_error: '{' has a placeholder"),
        ({"bid_type": {"no_imp_error": "{x}"}}, "bid_type.no_imp_error: '{x}' has a placeholder"),
        (
            {"request_checks": [{"rule": "imp", "error": "e"}]},
            "request_checks: expected {rule, error} with rule one of",
        ),
        ({"call_imp_ids": "all"}, "call_imp_ids: unknown value 'all'"),
        (
            {"endpoint": {"format": "{endpoint}/{site}"}},
            "endpoint.format: '{endpoint}/{site}' has a placeholder other than {endpoint} ('site')",
        ),
        ({"answer": {"statuses": {503: "{code}"}}}, "answer.status: '{code}' has a placeholder other than {}"),
        ({"answer": {"body_text": "{body}"}}, "answer.body_text: '{body}' has a placeholder"),
    ],
)
def test_a_bad_recipe_is_refused_naming_the_problem(data, problem):
    with pytest.raises(RecipeError, match=re.escape(problem)):
        Recipe.of(data)


@pytest.mark.parametrize(
    ("data", "field", "want"),
    [
        ({}, "split", "per_imp"),
        ({}, "headers", ("json",)),
        ({"headers": ["content_type", "device"]}, "headers", ("content_type", "device")),
        ({"split": "all"}, "split", "all"),
        ({"untyped": "bid"}, "untyped", "bid"),
        ({"currency": "usd"}, "currency", "usd"),
        ({}, "no_calls_error", None),
        ({}, "on_bad_imp", "drop"),
        ({}, "errors_with_calls", True),
        ({}, "bid_video", ""),
        ({"headers": []}, "headers", ()),
        ({"bid_rewrites": ["auction_price"]}, "bid_rewrites", ("auction_price",)),
        ({"split": "by_params", "on_bad_imp": "abort"}, "split", "by_params"),
    ],
)
def test_recipe_defaults_and_values(data, field, want):
    assert getattr(Recipe.of(data), field) == want


def test_a_built_in_recipe_loads_and_an_unknown_code_has_none():
    assert load_recipe("teqblaze") is not None
    assert load_recipe("no-such-bidder") is None


# --- calls -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("split", "calls"),
    [
        ("per_imp", [("https://x.example.com/a", ["1"]), ("https://x.example.com/b", ["3"])]),
        ("all", [("https://x.example.com/a", ["1", "3"])]),  # the first imp's endpoint
    ],
)
def test_split(split, calls):
    request = {"id": "r", "imp": [imp("1", {"host": "a"}), imp("2", {"host": 1}), imp("3", {"host": "b"})]}
    made, bodies, errors = requests_of(
        adapter(split=split, endpoint={"macros": {"Host": "host"}}, params_error="bad: {}"), request, INFO
    )
    assert [(call.uri, call.imp_ids) for call in made] == calls
    assert [[i["id"] for i in body["imp"]] for body in bodies] == [ids for _, ids in calls]
    assert errors_of(errors) == [
        ('bad: cannot unmarshal openrtb_ext.ExtX.Host: expects " or n, but found 1', ErrorCode.UNKNOWN)
    ]


@pytest.mark.parametrize(
    ("recipe", "imps", "want"),
    [
        ({}, [], []),
        ({"no_calls_error": "no imps"}, [], [("no imps", ErrorCode.UNKNOWN)]),
        (
            {"no_calls_error": {"text": "nothing", "class": "bad_input"}, "params_error": "p: {}"},
            [imp("1", [])],
            [("p: expect { or n, but found [", ErrorCode.UNKNOWN), ("nothing", ErrorCode.BAD_INPUT)],
        ),
        (
            {"imp_ext_error": {"text": "ext: {}", "class": "bad_input"}},
            [{"id": "1", "ext": 1}],
            [("ext: expect { or n, but found 1", ErrorCode.BAD_INPUT)],
        ),
        ({"no_calls_error": "none"}, [imp("1", {})], None),  # a call: no error
    ],
)
def test_no_calls_error(recipe, imps, want):
    calls, _, errors = requests_of(adapter(**recipe), {"id": "r", "imp": imps}, INFO)
    if want is None:
        assert len(calls) == 1
        assert errors == []
    else:
        assert calls == []
        assert errors_of(errors) == want


BAD = 'bad: cannot unmarshal openrtb_ext.ExtX.Host: expects " or n, but found 1'


@pytest.mark.parametrize(
    ("recipe", "calls", "errors"),
    [
        ({}, [["1"], ["3"], ["4"]], [BAD]),
        ({"on_bad_imp": "abort"}, [], [BAD]),  # no call, that error alone
        ({"on_bad_imp": "ignore"}, [["1"], ["3"], ["4"]], []),  # the bad imp let go silently
        ({"errors_with_calls": False}, [["1"], ["3"], ["4"]], []),
        ({"split": "by_params"}, [["1", "4"], ["3"]], [BAD]),  # one call per distinct params
        ({"split": "all"}, [["1", "3", "4"]], [BAD]),
        ({"split": "first_imp"}, [["1", "2", "3", "4"]], []),  # the first imp's params alone are read
        (
            {"params_error": "#{index}: {}"},
            [["1"], ["3"], ["4"]],
            ['#1: cannot unmarshal openrtb_ext.ExtX.Host: expects " or n, but found 1'],
        ),
    ],
)
def test_bad_imps_and_splits(recipe, calls, errors):
    imps = [imp("1", {"host": "a"}), imp("2", {"host": 1}), imp("3", {"host": "b"}), imp("4", {"host": "a"})]
    made, _, got = requests_of(adapter(**{"params_error": "bad: {}", **recipe}), {"id": "r", "imp": imps}, INFO)
    assert [call.imp_ids for call in made] == calls
    assert [e.message for e in got] == errors


def test_first_imp_rewrites_the_first_imp_alone():
    imps = [imp("1", {"host": "a"}), imp("2", {"host": "b"})]
    made, bodies, _ = requests_of(
        adapter(split="first_imp", imp_ext="drop", endpoint={"macros": {"Host": "host"}}), {"imp": imps}, INFO
    )
    assert [call.uri for call in made] == ["https://x.example.com/a"]
    assert bodies[0]["imp"] == [{"id": "1", "banner": {"w": 1}}, imps[1]]


@pytest.mark.parametrize(
    ("recipe", "params", "want_imp", "want_errors"),
    [
        ({"tagid": "host"}, {"host": "t1"}, {"tagid": "t1"}, []),
        ({"tagid": "host"}, {"host": ""}, {}, []),  # omitempty: an empty tagid is left out
        ({"tagid": "host"}, {}, {}, []),
        (
            {"checks": [{"rule": "nonempty", "params": ["host"], "error": "host is required"}]},
            {"host": ""},
            None,
            [("host is required", ErrorCode.BAD_INPUT)],
        ),
        (
            {"checks": [{"rule": "safe_host", "params": ["host"], "error": "Invalid Host"}]},
            {"host": "a/b"},
            None,
            [("Invalid Host", ErrorCode.BAD_INPUT)],
        ),
        ({"checks": [{"rule": "safe_host", "params": ["host"], "error": "Invalid Host"}]}, {"host": "a.b"}, {}, []),
    ],
)
def test_tagid_and_checks(recipe, params, want_imp, want_errors):
    made, bodies, errors = requests_of(adapter(**recipe), {"imp": [imp("1", params)]}, INFO)
    assert errors_of(errors) == want_errors
    if want_imp is None:
        assert made == []
    else:
        sent = bodies[0]["imp"][0]
        assert {k: v for k, v in sent.items() if k == "tagid"} == want_imp


@pytest.mark.parametrize(
    ("imps", "kinds", "want_ids", "want_errors"),
    [
        ([imp("1", {"host": "a"}), imp("2", {"host": "b"})], (), ["1", "2"], []),
        (
            [imp("1", {"host": 1}), imp("2", {"host": "b"})],
            (),
            ["2"],
            [('cannot unmarshal openrtb_ext.ExtX.Host: expects " or n, but found 1', ErrorCode.UNKNOWN)],
        ),
        ([{"id": "1", "native": {}, "ext": {"bidder": {"host": 1}}}, imp("2", {})], ("banner", "video"), ["2"], []),
        ([], ("banner",), [], []),
    ],
    ids=["all-read", "bad-params-reported", "other-kind-let-go", "no-imps"],
)
def test_imps_with_params(imps, kinds, want_ids, want_errors):
    errors: list = []
    got = list(adapter().imps_with_params({"imp": imps}, errors, kinds))
    assert [(one.get("id"), params.get("host")) for one, params in got] == [
        (one["id"], one["ext"]["bidder"].get("host", "")) for one in imps if one["id"] in want_ids
    ]
    assert errors_of(errors) == want_errors


@pytest.mark.parametrize(
    ("floors", "imp_fields", "want", "error"),
    [
        ("usd", {"bidfloor": 2, "bidfloorcur": "EUR"}, {"bidfloor": 4, "bidfloorcur": "USD"}, None),
        ("usd", {"bidfloor": 2, "bidfloorcur": "GBP"}, None, "Currency conversion rate not found: 'GBP' => 'USD'"),
        ("usd", {"bidfloor": 2, "bidfloorcur": "USD"}, {"bidfloor": 2, "bidfloorcur": "USD"}, None),
        ("keep", {"bidfloor": 2, "bidfloorcur": "EUR"}, {"bidfloor": 2, "bidfloorcur": "EUR"}, None),
    ],
)
def test_floors(floors, imp_fields, want, error):
    info = RequestInfo(bidder="x", convert_currency=converter("EUR"))
    made, bodies, errors = requests_of(adapter(floors=floors), {"imp": [{**imp("1", {}), **imp_fields}]}, info)
    assert [e.message for e in errors] == ([] if error is None else [error])
    if want is None:
        assert made == []
    else:
        assert {k: bodies[0]["imp"][0][k] for k in want} == want


def _halved(imp: dict[str, Any], info: RequestInfo) -> dict[str, Any]:
    if imp.get("bidfloorcur") == "GBP":
        raise ConversionError("no GBP")
    return {**imp, "bidfloor": imp.get("bidfloor", 0) / 2}


class _HalvingAdapter(RecipeAdapter):
    floor_rule = staticmethod(_halved)


@pytest.mark.parametrize(
    ("imp_fields", "want", "error"),
    [({"bidfloor": 2}, {"bidfloor": 1}, None), ({"bidfloor": 2, "bidfloorcur": "GBP"}, None, "no GBP")],
    ids=["own-rule", "own-rule-without-rate"],
)
def test_floor_rule(imp_fields, want, error):
    own = _HalvingAdapter(Recipe.of({"params": PARAMS, "floors": "usd"}), AdapterConfig("x", ENDPOINT))
    made, bodies, errors = requests_of(own, {"imp": [{**imp("1", {}), **imp_fields}]}, INFO)
    assert [e.message for e in errors] == ([] if error is None else [error])
    assert (None if not made else {k: bodies[0]["imp"][0][k] for k in want}) == want


# --- answers ---------------------------------------------------------------------------------------

REQUEST = {"id": "r", "imp": [imp("1", {})]}


def bid(**fields: Any) -> dict[str, Any]:
    return {"id": "b", "impid": "1", "price": 1, **fields}


@pytest.mark.parametrize(
    ("recipe", "body", "want_bids", "want_errors"),
    [
        ({}, {"seatbid": []}, [], []),
        ({"empty_seatbid_error": "Empty SeatBid"}, {"seatbid": []}, None, [("Empty SeatBid", ErrorCode.UNKNOWN)]),
        (
            {"empty_seatbid_error": {"text": "none", "class": "bad_server_response"}},
            {},
            None,
            [("none", ErrorCode.BAD_SERVER_RESPONSE)],
        ),
        ({"empty_seatbid_error": "Empty SeatBid"}, {"seatbid": [{"bid": []}]}, [], []),  # a seatbid, no bids
        (
            {"empty_bids_error": "No bids"},
            {"seatbid": [{"bid": []}, {"bid": [bid(mtype=1)]}]},
            None,
            [("No bids", ErrorCode.UNKNOWN)],
        ),
        ({"empty_bids_error": "No bids"}, {"seatbid": []}, [], []),  # no seatbid: empty_seatbid_error's case
        (
            {"seatbid_count_error": {"text": "Invalid SeatBids count: {}", "class": "bad_server_response"}},
            {"seatbid": [{"bid": [bid(id="a", mtype=1)]}, {"bid": [bid(id="b", mtype=1)]}]},
            None,
            [("Invalid SeatBids count: 2", ErrorCode.BAD_SERVER_RESPONSE)],
        ),
        ({"seatbid_count_error": "count {}"}, {}, None, [("count 0", ErrorCode.UNKNOWN)]),
        ({"seatbid_count_error": "count {}"}, {"seatbid": [{"bid": [bid(id="a", mtype=1)]}]}, ["a"], []),
    ],
)
def test_empty_seatbid_error(recipe, body, want_bids, want_errors):
    response, errors = bids_for(adapter(**recipe), REQUEST, body)
    assert errors_of(errors) == want_errors
    assert (None if response is None else [b.bid["id"] for b in response.bids]) == want_bids


@pytest.mark.parametrize(
    ("answer", "status", "want"),
    [
        ({}, 204, None),  # no answer
        ({"no_content": "response"}, 204, []),  # an empty response (thetradedesk)
        ({"no_content": "response"}, 200, ["a"]),
        ({"no_content": "response"}, 500, None),
    ],
)
def test_no_content_answer(answer, status, want):
    body = b"" if status == 204 else {"seatbid": [{"bid": [bid(id="a", mtype=1)]}]}
    response, _ = bids_for(adapter(answer=answer), REQUEST, body, status=status)
    assert (None if response is None else [b.bid["id"] for b in response.bids]) == want


UNTYPED_ERROR = ("Unsupported MType 9", ErrorCode.UNKNOWN)


@pytest.mark.parametrize(
    ("untyped", "want_bids", "want_errors"),
    [
        ("answer", None, [UNTYPED_ERROR]),  # the first untyped bid's error alone
        ("bid", ["a", "c"], [UNTYPED_ERROR] * 2),
        ("skip", ["a", "c"], []),  # dropped silently
        ("answer_all", None, [UNTYPED_ERROR] * 2),  # no answer, every untyped bid's error
    ],
)
def test_an_untyped_bid_costs_the_answer_or_itself(untyped, want_bids, want_errors):
    body = {
        "seatbid": [
            {"bid": [bid(id="a", mtype=1), bid(id="b", mtype=9)]},
            {"bid": [bid(id="c", mtype=2), bid(id="d", mtype=9)]},
        ]
    }
    response, errors = bids_for(adapter(untyped=untyped), REQUEST, body)
    assert errors_of(errors) == want_errors
    assert (None if response is None else [b.bid["id"] for b in response.bids]) == want_bids


@pytest.mark.parametrize(
    ("currency", "cur", "want"),
    [
        ("answer", "EUR", "EUR"),
        ("answer", "", "USD"),
        ("answer", None, "USD"),
        ("usd", "EUR", "USD"),
    ],
)
def test_currency(currency, cur, want):
    body = {"cur": cur, "seatbid": [{"bid": [bid(mtype=1)]}]}
    response, errors = bids_for(adapter(currency=currency), REQUEST, body)
    assert errors == []
    assert response.currency == want


@pytest.mark.parametrize(
    ("recipe", "bids", "want"),
    [
        ({}, [bid(mtype=9)], None),  # the answer fails
        ({"untyped": "bid"}, [bid(mtype=9)], []),  # an empty response
        ({"untyped": "bid", "empty_answer": "none"}, [bid(mtype=9)], "none"),  # no response
        ({"empty_answer": "none"}, [], "none"),
        ({"empty_answer": "none"}, [bid(mtype=1)], ["b"]),
        ({"empty_answer": "first_seatbid"}, [], "none"),
        ({"empty_answer": "no_seatbid"}, [], []),  # a seatbid without bids: an empty response
        ({"empty_answer": "no_seatbid"}, "no seatbid", "none"),
        ({"empty_answer": "quiet", "untyped": "bid"}, [bid(mtype=9)], "quiet"),  # no response, no error
        ({"empty_answer": "quiet", "untyped": "bid"}, [bid(mtype=9), bid(mtype=1)], ["b"]),
        ({"empty_answer": "first_seatbid"}, [bid(mtype=1)], ["b"]),
        ({"empty_answer": "first_seatbid", "untyped": "bid"}, [bid(mtype=9)], []),
        ({"empty_answer": "first_seatbid"}, "second", "none"),  # bids in a later seatbid alone
    ],
)
def test_empty_answer(recipe, bids, want):
    if isinstance(bids, str):  # bids in a later seatbid alone, or no seatbid at all
        seatbids = [{"bid": []}, {"bid": [bid(mtype=1)]}] if bids == "second" else []
    else:
        seatbids = [{"bid": bids}]
    response, errors = bids_for(adapter(**recipe), REQUEST, {"seatbid": seatbids})
    if want == "quiet":
        assert errors == []
    if want in ("none", "quiet", None):
        assert response is None
    else:
        assert [b.bid["id"] for b in response.bids] == want


@pytest.mark.parametrize(
    ("recipe", "answer_bid", "want_bid", "want_video"),
    [
        ({}, bid(mtype=2, adm="${AUCTION_PRICE}"), bid(mtype=2, adm="${AUCTION_PRICE}"), None),
        ({"bid_rewrites": ["auction_price"]}, bid(mtype=2, adm="${AUCTION_PRICE}"), bid(mtype=2, adm="1"), None),
        (
            {"bid_video": "cat_dur"},
            bid(mtype=2, cat=["IAB2"], dur=15),
            bid(mtype=2, cat=["IAB2"], dur=15),
            {"primary_category": "IAB2", "duration": 15},
        ),
    ],
)
def test_bid_rewrites_and_video(recipe, answer_bid, want_bid, want_video):
    response, errors = bids_for(adapter(**recipe), REQUEST, {"seatbid": [{"bid": [answer_bid]}]})
    assert errors == []
    assert [(b.bid, b.bid_video) for b in response.bids] == [(want_bid, want_video)]


@pytest.mark.parametrize(
    ("split", "imps"),
    [
        ("per_imp", [{**imp("1", {"host": "a"}), "mtype": 3}]),
        ("all", [{**imp("1", {"host": "a"}), "mtype": 3}]),
        ("first_imp", [imp("1", {"host": "a"}), {**imp("2", {"host": "b"}), "mtype": 3}]),
    ],
)
def test_imps_and_request_go_as_gos_typed_structs(split, imps):
    request = {"id": "r", "imp": imps, "unknown": 1, "test": 0, "tmax": 500}
    _, bodies, _ = requests_of(adapter(split=split), request, INFO)
    assert set(bodies[0]) == {"id", "imp", "tmax"}  # fields outside openrtb2.BidRequest and zero omitempty dropped
    assert all("mtype" not in sent for sent in bodies[0]["imp"])  # openrtb2.Imp has no mtype


@pytest.mark.parametrize(
    ("rewrites", "banner"),
    [([], {"format": [{"w": 3, "h": 4}]}), (["banner_size"], {"format": [{"w": 3, "h": 4}], "w": 3, "h": 4})],
)
def test_imp_rewrites_apply_after_the_ext(rewrites, banner):
    one = {"id": "1", "banner": {"format": [{"w": 3, "h": 4}]}, "ext": {"bidder": {"host": "a"}}}
    _, bodies, _ = requests_of(adapter(imp_rewrites=rewrites, imp_ext="drop"), {"id": "r", "imp": [one]}, INFO)
    assert bodies[0]["imp"][0]["banner"] == banner
    assert "ext" not in bodies[0]["imp"][0]


@pytest.mark.parametrize(
    ("worded", "ext", "want"),
    [
        ({"text": "bad: {}", "absent": "ext required"}, None, "ext required"),  # no ext at all
        ({"text": "bad: {}", "absent": "ext required"}, [1], "bad: expect { or n, but found ["),
        ({"text": "bad: {}"}, None, "bad: expect { or n, but found \x00"),
    ],
)
def test_an_absent_ext_has_its_own_text(worded, ext, want):
    one = {"id": "1", "banner": {}} if ext is None else {"id": "1", "banner": {}, "ext": ext}
    _, _, errors = requests_of(adapter(imp_ext_error=worded), {"id": "r", "imp": [one]}, INFO)
    assert [e.message for e in errors] == [want]


@pytest.mark.parametrize(
    ("imp_fields", "want"),
    [
        ({"native": {}}, ["media"]),  # the imp check comes before the params
        ({"banner": {}}, ["host"]),
        ({"banner": {}, "ext": {"bidder": {"host": "h"}}}, []),
    ],
)
def test_imp_checks_come_before_params(imp_fields, want):
    recipe = {
        "imp_checks": [{"rule": "banner_or_video", "error": "media"}],
        "checks": [{"rule": "nonempty", "params": ["host"], "error": "host"}],
    }
    one = {"id": "1", "ext": {"bidder": {}}, **imp_fields}
    _, _, errors = requests_of(adapter(**recipe), {"id": "r", "imp": [one]}, INFO)
    assert [e.message for e in errors] == want


@pytest.mark.parametrize(
    ("split", "want"),
    [
        ("per_imp", [("a", {"X-P": "a"}), ("b", {"X-P": "b"})]),  # each call its own imp's params
        ("first_imp", [("a", {"X-P": "a"})]),
        ("all", [("a", {"X-P": "a"})]),
    ],
)
def test_publisher_id_and_param_headers(split, want):
    recipe = {"split": split, "publisher_id": "host", "param_headers": {"X-P": "host"}, "headers": []}
    request = {"id": "r", "imp": [imp("1", {"host": "a"}), imp("2", {"host": "b"})], "app": {"id": "x"}}
    calls, bodies, _ = requests_of(adapter(**recipe), request, INFO)
    assert [
        (body["app"]["publisher"]["id"], dict(call.headers)) for call, body in zip(calls, bodies, strict=True)
    ] == want


@pytest.mark.parametrize(("body", "want"), [("typed", {"deviceType": 4}), ("go_typed", {"devicetype": 4})])
def test_body_typed_all_the_way_down(body, want):
    request = {"id": "r", "imp": [imp("1", {"host": "a"})], "device": {"deviceType": 4}}
    _, bodies, _ = requests_of(adapter(body=body), request, INFO)
    assert bodies[0]["device"] == want


@pytest.mark.parametrize(
    ("ext", "want_bids", "want_errors"),
    [
        ({"prebid": {"meta": {"m": 1}, "video": {"duration": 5}}}, [({"duration": 5}, {"m": 1})], []),
        (None, [(None, None)], []),
        (
            {"prebid": {"meta": 1}},
            [],
            ["ext: cannot unmarshal openrtb_ext.ExtBidPrebid.Meta: expect { or n, but found 1"],
        ),
    ],
)
def test_bid_meta_and_video_from_ext(ext, want_bids, want_errors):
    recipe = {"bid_video": "ext_prebid", "bid_meta": "ext_prebid", "bid_ext_error": "ext: {}"}
    answer_bid = bid(mtype=2) if ext is None else bid(mtype=2, ext=ext)
    response, errors = bids_for(adapter(**recipe), REQUEST, {"seatbid": [{"bid": [answer_bid]}]})
    assert [(b.bid_video, b.bid_meta) for b in response.bids] == want_bids
    assert [e.message for e in errors] == want_errors


def test_imp_rewrites_apply_to_every_imp_of_first_imp():
    formats = {"format": [{"w": 3, "h": 4}]}
    imps = [{**imp("1", {"host": "a"}), "banner": formats}, {**imp("2", "bad"), "banner": formats}]
    _, bodies, _ = requests_of(adapter(split="first_imp", imp_rewrites=["banner_size"]), {"id": "r", "imp": imps}, INFO)
    assert [sent["banner"] for sent in bodies[0]["imp"]] == [{**formats, "w": 3, "h": 4}] * 2


@pytest.mark.parametrize(
    ("imps", "calls", "errors"),
    [
        ([imp("1", {"host": "a"}), imp("2", 5), imp("3", 6)], 0, 2),  # every failed imp's error, no call
        ([imp("1", {"host": "a"}), imp("2", {"host": "b"})], 1, 0),
    ],
)
def test_refuse_makes_no_call_when_any_imp_fails(imps, calls, errors):
    made, _, failed = requests_of(adapter(split="all", on_bad_imp="refuse"), {"id": "r", "imp": imps}, INFO)
    assert (len(made), len(failed)) == (calls, errors)


@pytest.mark.parametrize(
    ("imp_floor", "param", "want"),
    [
        (None, 1.5, 1.5),  # an imp without a floor takes the param
        (0, 1.5, 1.5),
        (2.0, 1.5, 2.0),  # an imp's own floor wins
        (None, 0, None),  # only a positive param counts
        (None, -1, None),
    ],
)
def test_floor_param(imp_floor, param, want):
    recipe = {"params": {"fields": {"floor": ["Floor", "float64"]}}, "floor_param": "floor"}
    one = imp("1", {"floor": param}) if imp_floor is None else {**imp("1", {"floor": param}), "bidfloor": imp_floor}
    made = RecipeAdapter(Recipe.of(recipe), AdapterConfig("x", ENDPOINT))
    _, bodies, _ = requests_of(made, {"id": "r", "imp": [one]}, INFO)
    assert bodies[0]["imp"][0].get("bidfloor") == want


@pytest.mark.parametrize(
    ("recipe", "want"),
    [
        ({}, ["a", "b", "c"]),
        ({"seatbids": "first"}, ["a", "b"]),  # only the first seatbid's bids
        ({"skip_bids": ["nonpositive_price"]}, ["a", "c"]),  # let go without an error
        ({"seatbids": "first", "skip_bids": ["nonpositive_price"]}, ["a"]),
    ],
)
def test_first_seatbid_and_skipped_bids(recipe, want):
    seatbids = [{"bid": [bid(mtype=1, id="a"), bid(mtype=1, id="b", price=0)]}, {"bid": [bid(mtype=1, id="c")]}]
    response, errors = bids_for(adapter(**recipe), REQUEST, {"seatbid": seatbids})
    assert ([b.bid["id"] for b in response.bids], errors) == (want, [])


@pytest.mark.parametrize(
    ("recipe", "imp_fields", "want"),
    [
        ({"floors": "usd_first", "imp_ext_error": "ext"}, {"ext": 1}, "Currency conversion"),  # the floor first
        ({"floors": "usd", "imp_ext_error": "ext"}, {"ext": 1}, "ext"),
        ({"floors": "usd_first", "imp_ext_error": "ext {id}"}, {"ext": 1, "bidfloorcur": "USD"}, "ext 1"),
    ],
)
def test_floors_usd_first_and_the_imp_id_in_texts(recipe, imp_fields, want):
    one = {"id": "1", "banner": {}, "bidfloor": 1.0, "bidfloorcur": "EUR", **imp_fields}
    _, _, errors = requests_of(
        adapter(**recipe), {"id": "r", "imp": [one]}, RequestInfo(bidder="x", convert_currency=converter("GBP"))
    )
    assert [e.message[: len(want)] for e in errors] == [want]


@pytest.mark.parametrize(
    ("imps", "want_calls", "want_errors"),
    [
        ([], [], ["no imps"]),
        (
            [{"id": "n", "native": {}}, imp("1", {"host": "a"}), imp("2", {"host": "b"})],
            [("https://x.example.com/a", ["1", "2"])],  # the first imp that passes the checks rules
            [],  # errors let go once a call is made
        ),
        ([{"id": "n", "native": {}}], [], ["no n", "no valid imp"]),
        ([{"id": "n", "native": {}}, imp("1", 5)], [], ["expect { or n, but found 5"]),
    ],
)
def test_first_imp_after_imp_checks(imps, want_calls, want_errors):
    recipe = {
        "split": "first_imp",
        "endpoint": {"macros": {"Host": "host"}},
        "imp_checks": [{"rule": "banner_or_video", "error": "no {id}"}],
        "errors_with_calls": False,
        "no_imps_error": "no imps",
        "no_calls_error": "no valid imp",
    }
    calls, _, errors = requests_of(adapter(**recipe), {"id": "r", "imp": imps}, INFO)
    assert [(call.uri, call.imp_ids) for call in calls] == want_calls
    assert [e.message for e in errors] == want_errors


@pytest.mark.parametrize(
    ("recipe", "request_", "want"),
    [
        ({}, {}, [["1"], ["2"]]),
        ({"call_imp_ids": "request"}, {}, [["1", "2"], ["1", "2"]]),  # every imp id of the request
        ({"request_checks": [{"rule": "device", "error": "no device"}]}, {"device": {}}, [["1"], ["2"]]),
        ({"request_checks": [{"rule": "device", "error": "no device"}]}, {}, "no device"),
    ],
)
def test_request_checks_and_call_imp_ids(recipe, request_, want):
    request = {"id": "r", "imp": [imp("1", {"host": "a"}), imp("2", {"host": "b"})], **request_}
    calls, _, errors = requests_of(adapter(**recipe), request, INFO)
    assert ([c.imp_ids for c in calls] if calls else errors[0].message) == want


def test_request_sets():
    _, bodies, _ = requests_of(adapter(request_sets={"cur": ["USD"]}), {"id": "r", "imp": [imp("1", {})]}, INFO)
    assert bodies[0]["cur"] == ["USD"]


@pytest.mark.parametrize(("endpoint", "ok"), [("", False), ("https://x", True)])
def test_a_required_endpoint_is_refused_empty(endpoint, ok):
    recipe = Recipe.of({"params": PARAMS, "endpoint": {"required": True}})
    if ok:
        assert RecipeAdapter(recipe, AdapterConfig("x", endpoint)).endpoint == endpoint
    else:
        with pytest.raises(ValueError, match="endpoint is empty"):
            RecipeAdapter(recipe, AdapterConfig("x", endpoint))


@pytest.mark.parametrize("path", sorted(RECIPE_DIR.glob("*.yaml")), ids=lambda path: path.stem)
def test_every_recipe_file_loads(path):
    assert load_recipe(path.stem) is not None


@pytest.mark.parametrize(("code", "ok"), [("teqblaze", True), ("no-such-bidder", False)])
def test_of_code(code, ok):
    if ok:
        assert RecipeAdapter.of_code(code, AdapterConfig(code, ENDPOINT)).recipe is load_recipe(code)
    else:
        with pytest.raises(LookupError, match="no recipe for 'no-such-bidder'"):
            RecipeAdapter.of_code(code, AdapterConfig(code, ENDPOINT))


MIXED = {"same_param": "host", "mixed_params_error": {"text": "one host only", "class": "bad_input"}}


@pytest.mark.parametrize(
    ("recipe", "hosts", "calls", "errors"),
    [
        ({**MIXED, "split": "all"}, ["a", "a"], [["1", "2"]], []),
        ({**MIXED, "split": "all"}, ["a", "b", "a"], [["1", "3"]], [("one host only", ErrorCode.BAD_INPUT)]),
        ({**MIXED, "split": "all", "on_bad_imp": "abort"}, ["a", "b", 5], [], [("one host only", ErrorCode.BAD_INPUT)]),
        (
            {**MIXED, "split": "all", "on_bad_imp": "abort"},
            ["a", 5, "b"],
            [],
            [(BAD[:-1] + "5", ErrorCode.UNKNOWN)],
        ),  # in order
        ({"same_param": "host", "split": "all"}, ["a", "b"], [["1"]], [("b", ErrorCode.UNKNOWN)]),  # {}: its value
    ],
)
def test_same_param_across_imps(recipe, hosts, calls, errors):
    """``same_param``: an imp whose param differs from the first sent imp's fails (``mixed_params_error``)."""
    imps = [imp(str(n), {"host": host}) for n, host in enumerate(hosts, 1)]
    made, _, got = requests_of(adapter(params_error="bad: {}", **recipe), {"id": "r", "imp": imps}, INFO)
    assert [call.imp_ids for call in made] == calls
    assert errors_of(got) == errors


def test_mixed_params_error_is_worded():
    with pytest.raises(RecipeError, match="mixed_params_error"):
        Recipe.of({"params": PARAMS, "mixed_params_error": 5})


@pytest.mark.parametrize(
    ("headers", "values", "want"),
    [
        (["json"], {"Prebid-Adapter-Ver": "1.0.0"}, {**JSON_HEADERS, "Prebid-Adapter-Ver": "1.0.0"}),
        ([], {"X-A": "1", "X-B": "two"}, {"X-A": "1", "X-B": "two"}),
        (["json"], {"Accept": "*/*"}, {**JSON_HEADERS, "Accept": "*/*"}),  # after the sets: a value replaces
    ],
)
def test_header_values(headers, values, want):
    """``header_values``: fixed headers every call carries (smarthub's adapter version)."""
    calls, _, _ = requests_of(adapter(headers=headers, header_values=values), {"id": "r", "imp": [imp("1", {})]}, INFO)
    assert dict(calls[0].headers) == want


@pytest.mark.parametrize("values", [["X-A"], {"X-A": 1}])
def test_header_values_are_texts(values):
    with pytest.raises(RecipeError, match="header_values"):
        Recipe.of({"params": PARAMS, "header_values": values})
