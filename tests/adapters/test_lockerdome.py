"""LockerDome's own call: banner imps with an adUnitId; with any invalid, as many imps as are valid
taken from the front, the errors let go; none valid, no call (the wording is the recipe's)."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.lockerdome import build
from tests.adapters.helpers import requests_of

ADAPTER = build(AdapterConfig("lockerdome", "http://l.example"))
INFO = RequestInfo("lockerdome")
GOOD = {"id": "g", "banner": {"w": 1, "h": 1}, "ext": {"bidder": {"adUnitId": "u"}}}
VIDEO = {"id": "v", "video": {"mimes": ["video/mp4"]}, "ext": {"bidder": {"adUnitId": "u"}}}
EMPTY = {"id": "e", "banner": {"w": 1, "h": 1}, "ext": {"bidder": {"adUnitId": ""}}}


@pytest.mark.parametrize(
    ("imps", "sent"),
    [
        ([GOOD, {**GOOD, "id": "h"}], ["g", "h"]),
        ([VIDEO, GOOD], ["v"]),  # one valid: the first imp goes, whatever it is
        ([EMPTY, GOOD, VIDEO], ["e"]),
    ],
)
def test_the_call_takes_as_many_imps_as_are_valid_from_the_front(imps, sent):
    calls, bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": imps}, INFO)
    assert errors == [] and calls[0].imp_ids == sent and [imp["id"] for imp in bodies[0]["imp"]] == sent
    assert calls[0].headers["X-Openrtb-Version"] == "2.5"


@pytest.mark.parametrize(
    ("imps", "messages"),
    [
        ([], ["No valid impressions in the bid request."]),
        (
            [VIDEO, EMPTY, {"id": "x", "banner": {}}],
            [
                "LockerDome does not currently support non-banner types.",
                "ext.bidder.adUnitId is empty.",
                "ext was not provided.",
                "No valid or supported impressions in the bid request.",
            ],
        ),
    ],
)
def test_no_valid_imp_makes_no_call(imps, messages):
    calls, _, errors = requests_of(ADAPTER, {"id": "r", "imp": imps}, INFO)
    assert calls == [] and [error.message for error in errors] == messages
