"""MadSense's own rules: a call per banner imp then one for every video imp, the company id (or test)
in the query, device and site headers, video facts on video bids alone (the wording is the recipe's)."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.madsense import build, call_groups
from tests.adapters.helpers import bids_for, requests_of

ADAPTER = build(AdapterConfig("madsense", "http://m.example/pbs"))
INFO = RequestInfo("madsense")


def _imp(imp_id, media, company="c 1"):
    return {"id": imp_id, media: {}, "ext": {"bidder": {"company_id": company}}}


@pytest.mark.parametrize(
    ("imps", "groups"),
    [
        ([_imp("v1", "video"), _imp("b1", "banner"), _imp("n", "native"), _imp("v2", "video")], [["b1"], ["v1", "v2"]]),
        ([_imp("b1", "banner"), _imp("b2", "banner")], [["b1"], ["b2"]]),
        ([{"id": "x", "banner": {}, "video": {}}], [["x"]]),
        ([_imp("n", "native")], []),
    ],
)
def test_call_groups(imps, groups):
    assert [[imp["id"] for imp in group] for group in call_groups(imps)] == groups


def test_calls_uri_and_headers():
    request = {
        "imp": [_imp("b1", "banner"), _imp("v1", "video", 5)],
        "device": {"ua": "UA", "ip": "1.2.3.4", "ipv6": "::1"},
        "site": {"domain": "d.com", "ref": "r"},
    }
    calls, _, errors = requests_of(ADAPTER, request, INFO)
    assert [error.message for error in errors] == [
        "Error while decoding bidderExt.Bidder, err: cannot unmarshal openrtb_ext.ExtImpMadSense.CompanyId: "
        'expects " or n, but found 5'
    ]
    assert [(call.uri, call.imp_ids) for call in calls] == [("http://m.example/pbs?company_id=c+1", ["b1"])]
    headers = calls[0].headers
    assert (headers["X-Forwarded-For"], headers["Origin"], headers["Referer"]) == ("::1", "d.com", "r")
    assert (headers["User-Agent"], headers["X-Openrtb-Version"]) == ("UA", "2.6")
    calls, _, _ = requests_of(ADAPTER, {**request, "test": 1}, INFO)
    assert calls[0].uri == "http://m.example/pbs?company_id=test"


def test_video_facts_on_video_bids_alone():
    bids = [
        {"id": "a", "impid": "b1", "price": 1, "mtype": 1, "cat": ["IAB1"]},
        {"id": "b", "impid": "v1", "price": 1, "mtype": 2, "cat": ["IAB2"], "dur": 30},
        {"id": "c", "impid": "v1", "price": 1, "mtype": 4},
    ]
    result, errors = bids_for(ADAPTER, {"imp": []}, {"seatbid": [{"bid": bids}]})
    assert [error.message for error in errors] == ["MType 4 not supported"]
    assert [(bid.bid_type, bid.bid_video) for bid in result.bids] == [
        ("banner", None),
        ("video", {"primary_category": "IAB2", "duration": 30}),
    ]
