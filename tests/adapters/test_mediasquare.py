"""Mediasquare's rules: the codes and facts of its call, its answer read into bids."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.mediasquare import bid_dsa, build, consent_string, go_sprint, media_of
from tests.adapters.helpers import bids_for, requests_of

ADAPTER = build(AdapterConfig("mediasquare", "https://msq.example/p", {"pbs_version": "3.1"}))
PARAMS = {"bidder": {"owner": "o", "code": "c"}}


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("x", "x"),
        (1, "1"),
        (1.5, "1.5"),
        (1e21, "1e+21"),
        (True, "true"),
        ([1, "a"], "[1 a]"),
        ({"b": 1, "a": 2}, "map[a:2 b:1]"),
    ],
)
def test_go_sprint(value, text):
    assert go_sprint(value) == text


@pytest.mark.parametrize(
    ("user", "consent"),
    [
        (None, ""),
        ({"consent": "cs", "ext": {"consent": "x"}}, "cs"),
        ({"ext": {"consent": "x", "gdpr": "y"}}, "x"),
        ({"ext": {"GDPR": 1}}, "1"),
        ({"ext": "not an object"}, ""),
    ],
)
def test_consent_string(user, consent):
    assert consent_string({} if user is None else {"user": user}) == consent


@pytest.mark.parametrize(
    ("imp", "media"),
    [
        ({"native": {"request": ""}}, None),
        ({"banner": {"w": 3}}, None),
        (
            {"banner": {"w": 3, "h": 4}, "bidfloor": 1.5},
            ({"banner": {"sizes": [[3, 4]]}}, {"3x4": {"floor": 1.5}}),
        ),
        (
            {"banner": {"format": [{"w": 1, "h": 2}], "w": 3, "h": 4}, "bidfloorcur": "EUR"},
            ({"banner": {"sizes": [[1, 2]]}}, {"1x2": {"currency": "EUR"}}),
        ),
        (
            {"video": {"w": 5, "h": 6}, "native": {"request": "r"}},
            ({"video": {"mimes": None, "w": 5, "h": 6}, "native_request": "r"}, {"5x6": {}, "*": {}}),
        ),
    ],
)
def test_media_and_floors(imp, media):
    assert media_of(imp) == media


def test_call_codes_errors_and_facts():
    imps = [
        {"id": "a", "tagid": "t", "banner": {"w": 1, "h": 2}, "ext": PARAMS},
        {"id": "b", "banner": {"w": 1, "h": 2}},
        {"id": "c", "banner": {"w": 1, "h": 2}, "ext": {"other": 1}},
        {"id": "d", "native": {"request": ""}, "ext": PARAMS},
    ]
    request = {"id": "r", "imp": imps, "regs": {"gdpr": 1, "ext": {"dsa": {"x": 1}}}, "user": {"buyeruid": "u"}}
    calls, bodies, errors = requests_of(ADAPTER, request, RequestInfo("mediasquare"))
    assert [e.message for e in errors] == [
        "<MakeRequests> imp[ext]: is empty.",
        "<MakeRequests> imp-bidder[ext]: is empty.",
    ]
    assert calls[0].imp_ids == ["a", "b", "c", "d"]
    body = bodies[0]
    assert [(c["bidid"], c["adunit"], c["auctionid"], c["owner"]) for c in body["codes"]] == [("a", "t", "r", "o")]
    assert body["gdpr"] == {"consent_required": True, "consent_string": ""}
    assert (body["dsa"], body["pbjs"], body["test"], body["user_uid"]) == ({"x": 1}, "3.1", False, "u")
    assert body["tech"] == {"user": {"buyeruid": "u"}}


def test_no_imps_and_no_codes():
    assert requests_of(ADAPTER, {"id": "r"}, RequestInfo("mediasquare"))[2][0].message == (
        "<MakeRequests> request: is empty."
    )
    _, bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": [], "test": 1}, RequestInfo("mediasquare"))
    assert not errors and bodies[0]["codes"] is None and bodies[0]["pbjs"] == "prebid-test-version"


@pytest.mark.parametrize(
    ("dsa", "ext"),
    [(None, None), ("x", None), ({}, {}), ({"adrender": 0, "behalf": "b", "paid": ""}, {"adrender": 0, "behalf": "b"}),
     ({"adrender": 300}, None), ({"paid": 1}, None)],
)  # fmt: skip
def test_bid_dsa(dsa, ext):
    assert bid_dsa(dsa) == ext


def test_answer_items_become_bids():
    items = [
        {"bid_id": "a", "cpm": 1, "ad": "<a>", "width": 3, "currency": "EUR", "adomain": ["d"]},
        {"bid_id": "b", "cpm": 2, "video": {"xml": "x"}, "dsa": {"paid": "p"}},
        {"bid_id": "c", "cpm": 3, "native": {}, "currency": "GBP"},
    ]
    response, errors = bids_for(ADAPTER, {}, {"responses": items})
    assert not errors and response.currency == "GBP"
    assert [(t.bid_type, t.bid["mtype"]) for t in response.bids] == [("banner", 1), ("video", 2), ("native", 4)]
    assert response.bids[0].bid == {
        "id": "",
        "impid": "a",
        "price": 1,
        "adm": "<a>",
        "w": 3,
        "adomain": ["d"],
        "mtype": 1,
    }
    assert response.bids[1].bid["ext"] == {"dsa": {"paid": "p"}}
    assert response.bids[0].bid_meta == {"mediaType": "banner", "advertiserDomains": ["d"]}


@pytest.mark.parametrize(
    ("status", "body", "error"),
    [
        (400, b"", "<MakeBids> Unexpected status code: 400."),
        (204, b"", "<MakeBids> Unexpected status code: 204. Run with request.debug = 1 for more info."),
        (200, b"null", "<MakeBids> Unexpected status code: 204. No responses found into body content."),
        (200, b'{"responses": [{"cpm": "1"}]}', "<MakeBids> Unexpected status code: 406. Bad server response: "
         "cannot unmarshal mediasquare.msqResponseBids.Cpm: invalid number."),
    ],
)  # fmt: skip
def test_failed_answers(status, body, error):
    response, errors = bids_for(ADAPTER, {}, body, status)
    assert response is None and [e.message for e in errors] == [error]
