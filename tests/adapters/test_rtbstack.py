"""RTBStack adapter: grouping by route, the endpoint from the route's region and query, the imp's
tagid and ext and the site domain from its page
(bid typing and the answer are recipe steps, tested there)."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.rtbstack import build, go_query_get
from tests.adapters.helpers import imp_with, requests_of

ENDPOINT = "https://{{.Region}}.x/pbs?ssp={{.SspID}}&endpoint={{.ZoneID}}&client={{.PartnerId}}"
ADAPTER = build(AdapterConfig("rtbstack", ENDPOINT))
INFO = RequestInfo(bidder="rtbstack")
ROUTE = "https://p.us-adx-admixer.rtb-stack.com/prebid?client=c&endpoint=1&ssp=2"


def imp(imp_id: str = "i", route: str = ROUTE, **params: Any) -> dict:
    return imp_with(imp_id, {"route": route, **params}, {}, {"banner": {"w": 1, "h": 1}})


@pytest.mark.parametrize(
    ("route", "want"),
    [
        (ROUTE, "https://us.x/pbs?ssp=2&endpoint=1&client=c"),
        (
            "https://a.EU-adx-admixer.b:8080/p?ssp=3&client=x%20y&endpoint=4",
            "https://eu.x/pbs?ssp=3&endpoint=4&client=x y",
        ),
        (
            "https://p.xx-adx-admixer.b/p?client=c&endpoint=1&ssp=2",
            "unable to extract valid region from route URL hostname",
        ),
        (
            "https://p.sg-adx-admixer.b/p?client=c&endpoint=1",
            "route URL must contain client, endpoint, and ssp query parameters",
        ),
        (
            "https://p.sg-adx-admixer.b/p?client=c;&endpoint=1&ssp=2",
            "route URL must contain client, endpoint, and ssp query parameters",
        ),
    ],
)
def test_endpoint_from_route(route, want):
    calls, _bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": [imp(route=route)]}, INFO)
    assert [c.uri for c in calls] + [e.message for e in errors] == [want]
    assert all(e.code is ErrorCode.BAD_INPUT for e in errors)


def test_grouped_by_route_and_imp_rewritten():
    other = ROUTE.replace("us-", "eu-")
    request = {
        "id": "r",
        "imp": [
            imp("a", tagId="t", customParams={"k": 1}),
            imp("b", other),
            imp("c"),
            {"id": "d", "ext": {"bidder": "x"}},
        ],
    }
    calls, bodies, errors = requests_of(ADAPTER, request, INFO)
    assert [e.message for e in errors] == ["Wrong RTBStack bidder ext"]
    assert [c.imp_ids for c in calls] == [["a", "c"], ["b"]]
    first = bodies[0]["imp"][0]
    assert (first["tagid"], first["ext"], bodies[0]["imp"][1]["ext"]) == ("t", {"customParams": {"k": 1}}, {})


@pytest.mark.parametrize(
    ("site", "want"),
    [
        ({"page": "https://Www.Example.com:8080/a"}, "Www.Example.com"),
        ({"page": "not a url"}, "not a url"),
        ({"page": "https://e.com", "domain": "d.com"}, "d.com"),
        ({}, None),
    ],
)
def test_site_domain(site, want):
    _calls, bodies, _errors = requests_of(ADAPTER, {"id": "r", "imp": [imp()], "site": site}, INFO)
    assert bodies[0]["site"].get("domain") == want


@pytest.mark.parametrize(("query", "want"), [("a=1&b=2", "2"), ("b=x+y&b=3", "x y"), ("a=1", ""), ("b=%zz&b=4", "4")])
def test_query_get(query, want):
    assert go_query_get(f"https://h/p?{query}#b=9", "b") == want
