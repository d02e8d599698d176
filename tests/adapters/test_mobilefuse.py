"""MobileFuse's own call over its recipe: tagid from placement_id (carried over from earlier imps), the
ext cut to skadn, imps without banner/video/native left out, params errors (mtype typing and the bid
ext dropped are recipe steps, tested there)."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.mobilefuse import build
from tests.adapters.helpers import requests_of

ENDPOINT = "http://mfx.mobilefuse.com/openrtb"
ADAPTER = build(AdapterConfig("mobilefuse", ENDPOINT))
INFO = RequestInfo(bidder="mobilefuse")


def imp(imp_id: str, params: Any, media: str = "banner", **ext: Any) -> dict[str, Any]:
    return {"id": imp_id, media: {"w": 1}, "ext": {"bidder": params, **ext}}


def test_imps_as_sent():
    request = {
        "id": "r",
        "imp": [
            imp("a", {"placement_id": 1}, gpid="g", skadn={"v": 1}),
            imp("b", {}, "video"),
            imp("c", {"placement_id": 3}, "audio"),
            imp("d", {"placement_id": 4}, "native"),
        ],
    }
    calls, bodies, errors = requests_of(ADAPTER, request, INFO)
    assert errors == []
    assert [(c.uri, c.imp_ids) for c in calls] == [(ENDPOINT, ["a", "b", "d"])]
    assert bodies[0]["imp"] == [
        {"id": "a", "banner": {"w": 1}, "tagid": "1", "ext": {"skadn": {"v": 1}}},
        {"id": "b", "video": {"w": 1, "mimes": None}, "tagid": "1"},
        {"id": "d", "native": {"request": ""}, "tagid": "4"},
    ]


@pytest.mark.parametrize(
    ("imps", "errors"),
    [
        ([{"id": "a", "ext": "x"}, imp("b", {"placement_id": 1})], ['expect { or n, but found "']),
        ([imp("a", "x"), imp("b", "y")], ['expect { or n, but found "'] * 2),
        (
            [imp("a", {"placement_id": 1}), imp("b", {"placement_id": "2"})],
            ["cannot unmarshal openrtb_ext.ExtImpMobileFuse.PlacementId: unexpected character: \ufffd"],
        ),
        ([imp("a", {"placement_id": 1}, "audio")], ["No valid imps"]),
        ([], ["No valid imps"]),
    ],
)
def test_refused(imps, errors):
    calls, _, got = requests_of(ADAPTER, {"id": "r", "imp": imps}, INFO)
    assert calls == []
    assert [e.message for e in got] == errors
