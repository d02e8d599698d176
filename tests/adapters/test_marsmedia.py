"""Marsmedia's own rule over its recipe: the imps' media checked once the params pass (the call,
params wording, banner sizing and the answer are recipe steps)."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.marsmedia import build
from tests.adapters.helpers import requests_of

ADAPTER = build(AdapterConfig("marsmedia", "https://m.example/?bid=x"))
PARAMS = {"bidder": {"zoneId": 7}}
NO_FORMAT = "No valid banner format in the bid request"
NO_IMP = "No valid impression in the bid request"


@pytest.mark.parametrize(
    ("media", "error"),
    [
        ([{"banner": {"format": [{"w": 3, "h": 4}]}}], None),
        ([{"banner": {"w": 3, "h": 4}}], None),
        ([{"banner": {"w": 3}}], NO_FORMAT),
        ([{"banner": {"format": []}}], NO_FORMAT),
        ([{"video": {"w": 1}}, {"banner": {}}], NO_FORMAT),
        ([{"native": {"request": "{}"}}], NO_IMP),
        ([{"native": {"request": "{}"}}, {"video": {}}], None),
    ],
)
def test_media_checks(media, error):
    imps = [{"id": f"i{n}", **fields, "ext": PARAMS} for n, fields in enumerate(media)]
    calls, bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": imps}, RequestInfo("marsmedia"))
    assert [e.message for e in errors] == ([] if error is None else [error])
    assert [c.uri for c in calls] == ([] if error else ["https://m.example/?bid=x&zone=7"])
    if not error:
        assert bodies[0]["at"] == 1


def test_params_fail_before_media():
    imps = [{"id": "i", "native": {}, "ext": {"bidder": {"zoneId": ""}}}]
    _, _, errors = requests_of(ADAPTER, {"imp": imps}, RequestInfo("marsmedia"))
    assert [e.message for e in errors] == ["zoneId is empty"]
