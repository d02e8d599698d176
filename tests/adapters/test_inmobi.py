"""InMobi's own rule over its recipe: the first imp (whose params need a plc) has its unsized
banner sized from its first format; the imps after it are sent as they are."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, RequestInfo
from tests.adapters.helpers import requests_of

ENDPOINT = "https://inmobi.example.com/prebid"
FORMATS = [{"w": 300, "h": 250}, {"w": 320, "h": 50}]


def imp(imp_id: str, banner: dict[str, Any], plc: str = "p") -> dict[str, Any]:
    return {"id": imp_id, "banner": banner, "ext": {"bidder": {"plc": plc}}}


@pytest.mark.parametrize(
    ("banner", "want"),
    [
        ({"format": FORMATS}, {"format": FORMATS, "w": 300, "h": 250}),
        ({"w": 0, "h": 90, "format": FORMATS}, {"format": FORMATS, "w": 300, "h": 250}),
        ({"w": 728, "h": 90, "format": FORMATS}, {"format": FORMATS, "w": 728, "h": 90}),
        ({"w": 0, "h": 0}, {"w": 0, "h": 0}),  # no format: as it is
    ],
)
def test_only_the_first_imp_is_sized(banner, want):
    request = {"id": "r", "imp": [imp("a", banner), imp("b", {"format": FORMATS})]}
    adapter = build_adapter("inmobi", AdapterConfig("inmobi", ENDPOINT))
    calls, bodies, errors = requests_of(adapter, request, RequestInfo(bidder="inmobi"))
    assert errors == []
    assert len(calls) == 1
    assert [one["banner"] for one in bodies[0]["imp"]] == [want, {"format": FORMATS}]


@pytest.mark.parametrize(
    ("imps", "message"),
    [
        ([], "No impression in the request"),
        ([imp("a", {}, plc="")], "'plc' is a required attribute for InMobi's bidder ext"),
        ([{"id": "a", "banner": {}, "ext": {"bidder": {"plc": 1}}}], "bad InMobi bidder ext"),
    ],
)
def test_refusals(imps, message):
    adapter = build_adapter("inmobi", AdapterConfig("inmobi", ENDPOINT))
    calls, _, errors = requests_of(adapter, {"id": "r", "imp": imps}, RequestInfo(bidder="inmobi"))
    assert calls == []
    assert [error.message for error in errors] == [message]
