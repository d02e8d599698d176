"""Beintoo's own call (the params' wording, headers and the answer are recipe steps, tested there),
and the two helpers it takes from common.py."""

from __future__ import annotations

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.beintoo import build
from hbserver.adapters.common import banner_taking_first_format, page_is_https

ADAPTER = build(AdapterConfig("beintoo", "https://ib.beintoo.example"))
INFO = RequestInfo("beintoo")
BANNER = {"format": [{"w": 300, "h": 250}]}


def _imp(params, banner=BANNER, imp_id="i"):
    return {"id": imp_id, "banner": banner, "ext": {"bidder": params}}


@pytest.mark.parametrize(
    ("params", "want"),
    [
        ({"tagid": "12", "bidfloor": "1.5"}, {"tagid": "12", "secure": 1, "bidfloor": 1.5}),
        ({"tagid": "+12", "bidfloor": "-1"}, {"tagid": "+12", "secure": 1}),
        ({"tagid": "12", "bidfloor": "x"}, {"tagid": "12", "secure": 1}),
        ({"tagid": "0"}, "ignoring imp id=i, invalid tagid must be a String of numbers"),
        ({"tagid": "1a"}, "ignoring imp id=i, invalid tagid must be a String of numbers"),
        ({"tagid": 12}, "ignoring imp id=i, invalid ImpExt"),
    ],
)
def test_imp(params, want):
    request = {"id": "r", "site": {"page": "https://p.example/x"}, "imp": [_imp(params)]}
    calls, errors = ADAPTER.make_requests(request, INFO)
    if isinstance(want, str):
        assert calls == []
        assert [e.message for e in errors] == [want, f"Error in preprocess of Imp, err: [{want}]"]
        return
    imp = orjson.loads(calls[0].body)["imp"][0]
    assert {k: v for k, v in imp.items() if k in ("tagid", "secure", "bidfloor")} == want
    assert "ext" not in imp and imp["banner"] == {"w": 300, "h": 250}


def test_the_first_bad_imp_stops_the_request():
    imps = [_imp({"tagid": "1"}, None, "a"), _imp({"tagid": "1"}, {}, "b")]
    calls, errors = ADAPTER.make_requests({"imp": imps}, INFO)
    assert calls == [] and errors[0].message == "Request needs to include a Banner object" and len(errors) == 2


def test_no_imps():
    assert [e.message for e in ADAPTER.make_requests({"imp": []}, INFO)[1]] == ["No Imps in Bid Request"]


@pytest.mark.parametrize(
    ("banner", "want"),
    [
        ({"format": [{"w": 1, "h": 2}, {"w": 3, "h": 4}]}, {"w": 1, "h": 2, "format": [{"w": 3, "h": 4}]}),
        ({"format": [{"w": 1}]}, {"w": 1, "h": 0}),
        ({"w": 5, "format": []}, {"w": 5, "format": []}),  # a size given: kept as it is
        ({"format": []}, None),
        ({}, None),
    ],
)
def test_banner_taking_first_format(banner, want):
    assert banner_taking_first_format(banner) == want


@pytest.mark.parametrize(
    ("site", "want"),
    [({"page": "https://a.example"}, True), ({"page": "HTTPS://a"}, True), ({"page": "http://a"}, False),
     ({"page": ""}, False), ({}, False), (None, False), ({"page": "https://a\x7f"}, False)],
)  # fmt: skip
def test_page_is_https(site, want):
    assert page_is_https({"site": site}) is want
