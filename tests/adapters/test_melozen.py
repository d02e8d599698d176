"""MeloZen's own rule over its recipe: one call per imp and media type (the params, endpoint,
floors and the answer are recipe steps)."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.melozen import build, media_copies
from tests.adapters.helpers import requests_of

ADAPTER = build(AdapterConfig("melozen", "https://m.example/?p={{.PublisherID}}"))
B, V, N, A = {"w": 1, "h": 1}, {"mimes": ["v"]}, {"request": "{}"}, {"mimes": ["a"]}


@pytest.mark.parametrize(
    ("imp", "copies"),
    [
        ({"id": "1", "audio": A}, []),
        ({"id": "1", "banner": B, "x": 1}, [{"id": "1", "banner": B, "x": 1}]),
        (
            {"native": N, "video": V, "banner": B, "audio": A},
            [{"banner": B, "audio": A}, {"video": V, "audio": A}, {"native": N, "audio": A}],
        ),
        ({"banner": None, "video": V}, [{"video": V}]),
    ],
)
def test_media_copies(imp, copies):
    assert media_copies(imp) == copies


def test_one_call_per_imp_and_medium():
    imps = [
        {"id": "a", "banner": B, "video": V, "ext": {"bidder": {"pubId": "p1"}}},
        {"id": "b", "audio": A, "ext": {"bidder": {"pubId": "p2"}}},
        {"id": "c", "native": N, "ext": {"bidder": {"pubId": "p3"}}},
    ]
    calls, bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": imps}, RequestInfo("melozen"))
    assert [e.message for e in errors] == ["Invalid MediaType. MeloZen only supports Banner, Video and Native."]
    assert [c.uri for c in calls] == ["https://m.example/?p=p1"] * 2 + ["https://m.example/?p=p3"]
    assert [sorted(set(b["imp"][0]) & {"banner", "video", "native"}) for b in bodies] == [
        ["banner"],
        ["video"],
        ["native"],
    ]
    assert [c.imp_ids for c in calls] == [["a"], ["a"], ["c"]]
