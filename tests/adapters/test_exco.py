"""EXCO's own rule over its recipe: the last imp's publisherId becomes the publisher id of the
request's app and site, each only when present; tagids come from each imp's tagId."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, RequestInfo
from tests.adapters.helpers import requests_of

ENDPOINT = "https://exco.example.com/pbs"


def imp(imp_id: str, publisher: Any, tag: str = "tag") -> dict[str, Any]:
    params = {"accountId": "acc", "publisherId": publisher, "tagId": tag}
    return {"id": imp_id, "banner": {"w": 1, "h": 1}, "ext": {"bidder": params}}


@pytest.mark.parametrize(
    ("places", "imps", "want"),
    [
        ({"site": {"page": "p"}}, [imp("a", "pub")], {"site": {"page": "p", "publisher": {"id": "pub"}}}),
        ({"app": {"publisher": {"id": "old", "name": "n"}}}, [imp("a", "pub")],
         {"app": {"publisher": {"id": "pub", "name": "n"}}}),
        ({"site": {}, "app": {}}, [imp("a", "p1"), imp("b", "p2")],
         {"site": {"publisher": {"id": "p2"}}, "app": {"publisher": {"id": "p2"}}}),  # the last imp's
        ({}, [imp("a", "pub")], {}),  # neither: none is made
        ({"site": {"publisher": {"id": "old", "name": "n"}}}, [imp("a", None)],
         {"site": {"publisher": {"name": "n"}}}),  # an empty id is left out
    ],
)  # fmt: skip
def test_publisher_id_goes_into_app_and_site(places, imps, want):
    request = {"id": "r", "imp": imps, **places}
    calls, bodies, errors = requests_of(
        build_adapter("exco", AdapterConfig("exco", ENDPOINT)), request, RequestInfo(bidder="exco")
    )
    assert errors == []
    assert len(calls) == 1
    assert {key: bodies[0][key] for key in ("site", "app") if key in bodies[0]} == want


@pytest.mark.parametrize(("tag", "tagid"), [("t1", "t1"), ("", None)])
def test_tagid_is_the_tag_id(tag, tagid):
    request = {"id": "r", "imp": [{**imp("a", "pub", tag), "tagid": "old"}]}
    _, bodies, _ = requests_of(
        build_adapter("exco", AdapterConfig("exco", ENDPOINT)), request, RequestInfo(bidder="exco")
    )
    assert bodies[0]["imp"][0].get("tagid") == tagid
