"""Globalsun's own rule over its recipe: the placementId read with jsonparser (its words when the
path is missing or no string; the first such imp stops the request), the ext rewritten as a
publisher placement, an empty placementId left out."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, RequestInfo
from tests.adapters.helpers import requests_of

ENDPOINT = "https://globalsun.example.com/pbs"


def imp(imp_id: str, ext: Any) -> dict[str, Any]:
    return {"id": imp_id, "banner": {"w": 1, "h": 1}, "ext": ext}


@pytest.mark.parametrize(
    ("ext", "want_ext", "want_error"),
    [
        ({"bidder": {"placementId": "p1"}}, {"bidder": {"type": "publisher", "placementId": "p1"}}, None),
        ({"bidder": {"placementId": ""}}, {"bidder": {"type": "publisher"}}, None),
        ({"bidder": {}}, None, "Key path not found"),
        ({"bidder": {"placementId": 5}}, None, "Value is not a string: 5"),
        ("x", None, "Key path not found"),
    ],
)
def test_placement_id(ext, want_ext, want_error):
    request = {"id": "r", "imp": [imp("a", ext), imp("b", {"bidder": {"placementId": "p2"}})]}
    adapter = build_adapter("globalsun", AdapterConfig("globalsun", ENDPOINT))
    calls, bodies, errors = requests_of(adapter, request, RequestInfo(bidder="globalsun"))
    if want_error is None:
        assert errors == []
        assert [body["imp"][0]["ext"] for body in bodies] == [
            want_ext,
            {"bidder": {"type": "publisher", "placementId": "p2"}},
        ]
    else:
        assert calls == []  # the first bad imp stops the request
        assert [error.message for error in errors] == [want_error]
