"""Rediads's own call: imps lose prebid/bidder from their ext and take their slot; a bad imp goes as
it is with its error; the last good imp's account_id becomes the publisher id and its endpoint the
first label of the endpoint's host."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.rediads import endpoint_for
from tests.adapters.helpers import requests_of

ENDPOINT = "https://bidding.rediads.com/openrtb2/auction"


def run(request: dict[str, Any]) -> tuple[list, list, list]:
    adapter = build_adapter("rediads", AdapterConfig("rediads", ENDPOINT))
    calls, bodies, errors = requests_of(adapter, request, RequestInfo(bidder="rediads"))
    return calls, bodies, [(e.message, e.code) for e in errors]


def imp(imp_id: str, params: Any, **ext: Any) -> dict[str, Any]:
    return {"id": imp_id, "banner": {"w": 1}, "ext": {"bidder": params, "prebid": {}, **ext}}


@pytest.mark.parametrize(
    ("imps", "want_imps", "want_errors"),
    [
        ([imp("a", {"account_id": "1", "slot": "s"}, gpid="g")], [{"tagid": "s", "ext": {"gpid": "g"}}], []),
        ([{**imp("a", {"account_id": "1"}), "tagid": "t"}], [{"tagid": "t", "ext": {}}], []),  # no slot: kept
        (
            [{"id": "a", "banner": {"w": 1}, "ext": "x"}, imp("b", {"account_id": "1"})],
            [{"ext": "x"}, {"ext": {}}],
            [("Invalid Ext format in impression a", ErrorCode.BAD_INPUT)],
        ),
        (
            [imp("a", {"account_id": 5})],
            [{"ext": {"bidder": {"account_id": 5}, "prebid": {}}}],  # sent as it was
            [("Invalid bidder params in impression a", ErrorCode.BAD_INPUT)],
        ),
    ],
)
def test_imps(imps, want_imps, want_errors):
    calls, bodies, errors = run({"id": "r", "site": {"page": "p"}, "imp": imps})
    assert errors == want_errors
    assert len(calls) == 1
    got = [{k: v for k, v in sent.items() if k in ("tagid", "ext")} for sent in bodies[0]["imp"]]
    assert got == want_imps


@pytest.mark.parametrize(
    ("top", "want"),
    [
        ({"site": {"page": "p"}}, {"site": {"page": "p", "publisher": {"id": "2"}}}),
        ({"site": {"publisher": {"id": "x", "name": "n"}}}, {"site": {"publisher": {"id": "2", "name": "n"}}}),
        ({"app": {"bundle": "b"}}, {"app": {"bundle": "b", "publisher": {"id": "2"}}}),
        ({"site": {}, "app": {}}, {"site": {"publisher": {"id": "2"}}, "app": {}}),
    ],
)
def test_the_last_account_id_is_the_publisher(top, want):
    _, bodies, _ = run({"id": "r", "imp": [imp("a", {"account_id": "1"}), imp("b", {"account_id": "2"})], **top})
    assert {k: bodies[0][k] for k in want} == want


@pytest.mark.parametrize(
    ("template", "subdomain", "uri"),
    [
        (ENDPOINT, "", ENDPOINT),
        (ENDPOINT, "eu", "https://eu.rediads.com/openrtb2/auction"),
        (
            "https://bidding.rediads.com:8080/x?h=bidding.rediads.com",
            "us",
            "https://us.rediads.com:8080/x?h=bidding.rediads.com",
        ),
    ],
)
def test_endpoint_for(template, subdomain, uri):
    assert endpoint_for(template, subdomain) == uri


@pytest.mark.parametrize(("endpoint", "ok"), [("eu", True), ("e/u", False), ("", True)])
def test_the_endpoint_param_must_be_a_safe_host(endpoint, ok):
    calls, _, errors = run({"id": "r", "imp": [imp("a", {"endpoint": endpoint})]})
    assert (len(calls), errors) == ((1, []) if ok else (0, [("Invalid endpoint", ErrorCode.BAD_INPUT)]))
