"""Zmaticoo's own rule over its recipe: native requests wrapped, one that does not decode refusing the
request after the params' checks (the wrapping itself is the shared step, tested in test_steps.py)."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.zmaticoo import build
from tests.adapters.helpers import bids_for, requests_of

ADAPTER = build(AdapterConfig("zmaticoo", "https://z.example/bid"))
INFO = RequestInfo("zmaticoo")
PARAMS = {"pubId": "p", "zoneId": "z"}


def _native(request_text: str, params: Any = PARAMS) -> dict[str, Any]:
    return {"id": "n", "native": {"request": request_text}, "ext": {"bidder": params}}


def test_native_request_wrapped_in_the_call():
    calls, bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": [_native('{"ver":"1.2"}')]}, INFO)
    assert not errors and len(calls) == 1
    assert bodies[0]["imp"][0]["native"]["request"] == '{"native":{"ver":"1.2"}}'


@pytest.mark.parametrize(
    ("imp", "message"),
    [
        (_native("x"), "expect { or n, but found x"),
        (_native("x", {"pubId": "p"}), "imp.ext.pubId or imp.ext.zoneId required"),  # the params first
    ],
)
def test_refusals(imp, message):
    calls, _, errors = requests_of(ADAPTER, {"id": "r", "imp": [imp]}, INFO)
    assert calls == [] and [error.message for error in errors] == [message]


def test_any_failure_status_is_bad_input():
    answer, errors = bids_for(ADAPTER, {"id": "r", "imp": []}, b"", status=500)
    assert answer is None and [(e.message, e.code) for e in errors] == [
        ("Unexpected status code: 500.", ErrorCode.BAD_INPUT)
    ]
