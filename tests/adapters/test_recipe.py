"""The recipe engine (hbserver.adapters.recipe): a recipe file's data read into a Recipe (unknown
keys, step names and shapes refused, naming the problem) and a RecipeAdapter run from it: calls per
imp or for all imps, the errors of a request without calls or an answer without seatbids, untyped
bids and the currency."""

from __future__ import annotations

import re
from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.recipe import Recipe, RecipeAdapter, RecipeError, load_recipe
from tests.adapters.helpers import bids_for, requests_of

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
        ({"headers": ["json", "cookies"]}, "headers: unknown header set 'cookies'"),
        ({"untyped": "skip"}, "untyped: unknown value 'skip'"),
        ({"currency": "eur"}, "currency: unknown value 'eur'"),
        ({"params": {"fields": {"a": ["A", "text"]}}}, "params.fields.a"),
        ({"endpoint": {"macros": ["Host"]}}, "endpoint.macros"),
        ({"no_calls_error": 5}, "no_calls_error: expected a text or {text, class}"),
        ({"params_error": {"text": "t", "class": "fatal"}}, "params_error: unknown error class 'fatal'"),
        ({"empty_seatbid_error": {"class": "generic"}}, "empty_seatbid_error: expected a text"),
        ({"answer": {"body_class": "x"}}, "answer.body_class"),
        ({"bid_type": {"source": "adm"}}, "bid_type.source: unknown 'adm'"),
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
    ],
)
def test_empty_seatbid_error(recipe, body, want_bids, want_errors):
    response, errors = bids_for(adapter(**recipe), REQUEST, body)
    assert errors_of(errors) == want_errors
    assert (None if response is None else [b.bid["id"] for b in response.bids]) == want_bids


@pytest.mark.parametrize(
    ("untyped", "want_bids", "want_errors"),
    [
        ("answer", None, [("Unsupported MType 9", ErrorCode.UNKNOWN)]),
        ("bid", ["a", "c"], [("Unsupported MType 9", ErrorCode.UNKNOWN)]),
    ],
)
def test_an_untyped_bid_costs_the_answer_or_itself(untyped, want_bids, want_errors):
    body = {"seatbid": [{"bid": [bid(id="a", mtype=1), bid(id="b", mtype=9)]}, {"bid": [bid(id="c", mtype=2)]}]}
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
