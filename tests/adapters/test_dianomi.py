"""Dianomi's own rule over its recipe: the first priceType the imps name becomes the request's
ext.pt, the ext re-encoded as Go's ExtRequest; each imp's tagid is its smartadId."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, RequestInfo
from tests.adapters.helpers import requests_of

ENDPOINT = "https://www-dianomi.example.com/cgi-bin/smartads_prebid.pl"


def imp(imp_id: str, params: Any) -> dict[str, Any]:
    return {"id": imp_id, "banner": {"w": 1, "h": 1}, "ext": {"bidder": params}}


@pytest.mark.parametrize(
    ("ext", "imps", "want_ext"),
    [
        (None, [imp("a", {"smartadId": 1})], None),  # no price type: the ext as it was
        (None, [imp("a", {"smartadId": 1, "priceType": "net"})], {"prebid": {}, "pt": "net"}),
        (
            None,
            [imp("a", {"smartadId": 1}), imp("b", {"priceType": "gross"}), imp("c", {"priceType": "net"})],
            {"prebid": {}, "pt": "gross"},  # the first one named
        ),
        (
            {"prebid": {"debug": True}, "other": 1, "pt": "old"},
            [imp("a", {"priceType": "net"})],
            {"prebid": {"debug": True}, "pt": "net"},  # fields outside ExtRequest dropped
        ),
        (
            {"schain": {"ver": "1.0"}},
            [imp("a", {"priceType": "net"})],
            {"prebid": {}, "schain": {"ver": "1.0"}, "pt": "net"},
        ),
        ({"prebid": 5}, [imp("a", {"priceType": "net"})], {"prebid": 5}),  # does not decode: left as it was
    ],
)
def test_price_type_goes_into_the_request_ext(ext, imps, want_ext):
    request = {"id": "r", "imp": imps, **({} if ext is None else {"ext": ext})}
    calls, bodies, errors = requests_of(
        build_adapter("dianomi", AdapterConfig("dianomi", ENDPOINT)), request, RequestInfo(bidder="dianomi")
    )
    assert errors == []
    assert len(calls) == 1
    assert bodies[0].get("ext") == want_ext


@pytest.mark.parametrize(("smartad", "tagid"), [(9526, "9526"), ("9526", "9526"), (None, None), ("", None)])
def test_tagid_is_the_smartad_id(smartad, tagid):
    request = {"id": "r", "imp": [{**imp("a", {"smartadId": smartad}), "tagid": "old"}]}
    _, bodies, _ = requests_of(
        build_adapter("dianomi", AdapterConfig("dianomi", ENDPOINT)), request, RequestInfo(bidder="dianomi")
    )
    assert bodies[0]["imp"][0].get("tagid") == tagid
