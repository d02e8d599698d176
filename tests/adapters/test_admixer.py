"""Admixer adapter: tagid, floor and ext from params, any failing imp failing the request, status
wording by range, the no-content check and bid typing by imp."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.admixer import build
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "http://inv-nets.admixer.net/pbs.aspx"
ADAPTER = build(AdapterConfig("admixer", ENDPOINT))
INFO = RequestInfo(bidder="admixer")
ZONE = "2eb6bd58-865c-47ce-af7f-a918108c3fd2"


def imp(imp_id: str = "i", **fields: Any) -> dict[str, Any]:
    params = {"zone": ZONE, **fields.pop("params", {})}
    return {"id": imp_id, "banner": {"w": 1}, "ext": {"bidder": params, "gpid": "g"}, **fields}


@pytest.mark.parametrize(
    ("the_imp", "want"),
    [
        (imp(), {"tagid": ZONE}),
        (imp(params={"customFloor": 0.2}), {"tagid": ZONE, "bidfloor": 0.2}),
        (imp(bidfloor=0.5, params={"customFloor": 0.2}), {"tagid": ZONE, "bidfloor": 0.5}),
        (imp(params={"customParams": {"a": [1]}}), {"tagid": ZONE, "ext": {"customParams": {"a": [1]}}}),
        (imp(params={"customParams": {}}), {"tagid": ZONE, "ext": {"customParams": {}}}),
    ],
)
def test_imp_as_sent(the_imp, want):
    calls, bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": [the_imp]}, INFO)
    assert errors == []
    assert [(c.uri, c.imp_ids) for c in calls] == [(ENDPOINT, ["i"])]
    sent = bodies[0]["imp"][0]
    assert {key: sent[key] for key in ("tagid", "bidfloor", "ext") if key in sent} == want


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        (imp("b", params={"zone": "short"}), "ZoneId must be UUID/GUID"),
        (imp("b", params={"zone": 1}), "Wrong Admixer bidder ext"),
        (imp("b", params={"customParams": [1]}), "Wrong Admixer bidder ext"),
        ({"id": "b", "ext": "x"}, 'expect { or n, but found "'),
    ],
)
def test_one_bad_imp_fails_the_request(bad, error):
    calls, _, errors = requests_of(ADAPTER, {"id": "r", "imp": [imp("a"), bad]}, INFO)
    assert calls == []
    assert [(e.message, e.code) for e in errors] == [(error, ErrorCode.BAD_INPUT)]


def test_no_imps():
    calls, _, errors = requests_of(ADAPTER, {"id": "r", "imp": []}, INFO)
    assert (calls, [e.message for e in errors]) == ([], ["No impressions in request"])


@pytest.mark.parametrize(
    ("status", "text", "code"),
    [
        (503, "Unexpected status code: 503. Dsp server internal error", ErrorCode.BAD_SERVER_RESPONSE),
        (404, "Unexpected status code: 404. Bad request to dsp", ErrorCode.BAD_INPUT),
        (301, "Unexpected status code: 301", ErrorCode.BAD_SERVER_RESPONSE),
    ],
)
def test_status(status, text, code):
    response, errors = bids_for(ADAPTER, {}, b"", status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == [(text, code)]


@pytest.mark.parametrize("answer", [{"id": "r"}, {"id": "r", "seatbid": [{"bid": []}, {"bid": [{"id": "b"}]}]}])
def test_no_bids(answer):
    assert bids_for(ADAPTER, {}, answer) == (None, [])


@pytest.mark.parametrize(
    ("media", "kind"),
    [({"banner": {}, "video": {}}, "banner"), ({"video": {}}, "video"), ({"native": {}}, "native"),
     ({"audio": {}}, "audio"), ({}, "banner")],
)
def test_bid_type(media, kind):
    answer = {"id": "r", "seatbid": [{"bid": [{"id": "b", "impid": "i", "price": 1}]}]}
    response, errors = bids_for(ADAPTER, {"imp": [{"id": "i", **media}]}, answer)
    assert errors == [] and response is not None
    assert [t.bid_type for t in response.bids] == [kind]
