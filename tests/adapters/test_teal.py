"""Teal's own call over its recipe: account and placement checks, one account per request, the
stored-request id, the publisher rewrite and ``ext.bids`` (bid typing is a recipe step, tested there)."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.teal import build
from tests.adapters.helpers import imp_with, requests_of

ENDPOINT = "https://test.example.com/bid"
ADAPTER = build(AdapterConfig("teal", ENDPOINT))
INFO = RequestInfo(bidder="teal")


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    return imp_with(imp_id, {"account": "acc"} if params is None else params, fields, {"banner": {}})


def run(request: dict):
    calls, bodies, errors = requests_of(ADAPTER, request, INFO)
    return calls, bodies, [(e.message, e.code) for e in errors]


@pytest.mark.parametrize(
    ("the_imp", "want"),
    [
        (imp(params={"account": "  "}), "account parameter failed validation"),
        (imp(params={"account": "a", "placement": "\t"}), "placement parameter failed validation"),
        (imp(params={"account": 1}), "Error parsing imp.ext.bidder for impression i"),
        (imp(params="x"), "Error parsing imp.ext.bidder for impression i"),
        (imp(ext="x"), "Error parsing imp.ext for impression i"),
        (imp(ext={"prebid": 1, "bidder": {"account": "a"}}), "Error parsing imp.ext for impression i"),
    ],
)
def test_imp_dropped(the_imp, want):
    calls, _, errors = run({"id": "r", "imp": [the_imp]})
    assert calls == []
    assert errors == [(want, ErrorCode.BAD_INPUT)]


def test_later_imp_with_another_account_is_dropped():
    request = {"id": "r", "imp": [imp("a"), imp("b", {"account": "other"}), imp("c")], "site": {"id": "s"}}
    calls, bodies, errors = run(request)
    assert errors == [
        ('mixed-account requests are not supported: imp "b" account "other" differs from request account "acc"',
         ErrorCode.BAD_INPUT),
    ]  # fmt: skip
    assert calls[0].imp_ids == ["a", "c"]
    assert bodies[0]["site"] == {"id": "s", "publisher": {"id": "acc"}}


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"bidder": {"account": "a", "placement": "p"}},
         {"bidder": {"account": "a", "placement": "p"}, "prebid": {"storedrequest": {"id": "p"}}}),
        ({"bidder": {"account": "a", "placement": "p"}, "prebid": {"k": 1, "storedrequest": {"id": "x", "o": 2}}},
         {"bidder": {"account": "a", "placement": "p"}, "prebid": {"k": 1, "storedrequest": {"id": "p", "o": 2}}}),
        ({"bidder": {"account": "a", "placement": None}}, {"bidder": {"account": "a", "placement": None}}),
        ({"bidder": {"account": "a"}}, {"bidder": {"account": "a"}}),
    ],
)  # fmt: skip
def test_placement_is_the_stored_request(ext, want):
    _, bodies, errors = run({"id": "r", "imp": [imp(ext=ext)]})
    assert errors == []
    assert bodies[0]["imp"][0]["ext"] == want


@pytest.mark.parametrize(
    ("top", "want"),
    [
        ({"site": {"publisher": {"id": "p", "name": "n"}}}, {"site": {"publisher": {"id": "acc", "name": "n"}}}),
        ({"app": {"id": "x"}}, {"app": {"id": "x", "publisher": {"id": "acc"}}}),
        ({"ext": {"bids": {"old": 1}, "k": 2}}, {"ext": {"bids": {"pbs": 1}, "k": 2}}),
        ({}, {"ext": {"bids": {"pbs": 1}}}),
    ],
)
def test_request_rewrite(top, want):
    _, bodies, errors = run({"id": "r", "imp": [imp()], **top})
    assert errors == []
    assert {key: bodies[0].get(key) for key in want} == want
