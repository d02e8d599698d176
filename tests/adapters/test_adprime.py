"""Adprime's own rules over its recipe: each call's imp ext names the tag twice, and a site request
takes the imp's keywords (site.keywords) and audiences (user.customdata)."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, RequestInfo
from tests.adapters.helpers import requests_of

ENDPOINT = "http://delta.adprime.com/pserver"


def run(request: dict[str, Any]) -> tuple[list, list, list]:
    adapter = build_adapter("adprime", AdapterConfig("adprime", ENDPOINT))
    return requests_of(adapter, request, RequestInfo(bidder="adprime"))


def imp(imp_id: str, params: Any) -> dict[str, Any]:
    return {"id": imp_id, "banner": {"w": 1, "h": 1}, "ext": {"bidder": params}}


@pytest.mark.parametrize(
    ("params", "tag"),
    [({"TagID": "t1"}, "t1"), ({"tagid": "t2"}, "t2"), ({}, "")],
)
def test_imp_ext_and_tagid(params, tag):
    _, bodies, errors = run({"id": "r", "imp": [imp("a", params)]})
    assert errors == []
    sent = bodies[0]["imp"][0]
    assert sent["ext"] == {"bidder": {"TagID": tag, "placementId": tag}}
    assert sent.get("tagid") == (tag or None)


@pytest.mark.parametrize(
    ("top", "params", "want_site", "want_user"),
    [
        ({"site": {"page": "p"}}, {"keywords": ["a", "b"]}, {"page": "p", "keywords": "a,b"}, None),
        ({"site": {"page": "p"}}, {"audiences": ["x", "y"]}, {"page": "p"}, {"customdata": "x,y"}),
        (
            {"site": {"page": "p"}, "user": {"id": "u"}},
            {"audiences": ["x"], "keywords": []},
            {"page": "p"},
            {"id": "u", "customdata": "x"},
        ),
        ({"app": {"id": "a"}}, {"keywords": ["a"], "audiences": ["x"]}, None, None),  # an app request: neither
    ],
)
def test_keywords_and_audiences_on_site_requests(top, params, want_site, want_user):
    _, bodies, _ = run({"id": "r", "imp": [imp("a", {"TagID": "t", **params})], **top})
    assert bodies[0].get("site") == want_site
    assert bodies[0].get("user") == want_user


def test_each_call_has_its_own_imp_params():
    request = {
        "id": "r",
        "site": {"page": "p"},
        "imp": [imp("a", {"TagID": "1", "keywords": ["k"]}), imp("b", {"TagID": "2"})],
    }
    calls, bodies, _ = run(request)
    assert [c.imp_ids for c in calls] == [["a"], ["b"]]
    assert [b["site"] for b in bodies] == [{"page": "p", "keywords": "k"}, {"page": "p"}]
