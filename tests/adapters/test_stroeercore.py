"""Ströer Core's own rules: each imp's sid as its tagid (an imp that does not decode still sent), and
its own answer format turned into OpenRTB bids (mtype text, dsa moved into ext, EUR)."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.stroeercore import build
from tests.adapters.helpers import bids_for, requests_of

ADAPTER = build(AdapterConfig("stroeerCore", "https://s.example/s2sdsh"))


@pytest.mark.parametrize(
    ("imp", "tagid", "error"),
    [
        ({"id": "1", "tagid": "old", "ext": {"bidder": {"sid": "s1"}}}, "s1", None),
        ({"id": "1", "tagid": "old", "ext": {"bidder": {"sid": ""}}}, None, None),  # omitempty: none left
        ({"id": "1", "tagid": "old", "ext": {"bidder": {"sid": 5}}}, "old", "ExtImpStroeerCore.Sid"),
        ({"id": "1", "ext": {"bidder": "x"}}, None, "expect { or n"),
    ],
)
def test_each_imp_is_tagged_by_its_sid_or_sent_as_it_came(imp, tagid, error):
    calls, bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": [imp]}, RequestInfo("stroeerCore"))
    assert len(calls) == 1 and calls[0].uri == "https://s.example/s2sdsh" and calls[0].imp_ids == ["1"]
    assert calls[0].headers["Content-Type"] == "application/json;charset=utf-8"
    assert bodies[0]["imp"][0].get("tagid") == tagid
    assert [error in e.message for e in errors] == ([True] if error else [])


def test_bids_are_read_from_the_own_format():
    answer = {"bids": [
        {"id": "a", "bidId": "1", "cpm": 2.5, "width": 300, "height": 250, "ad": "<a>", "crid": "c",
         "mtype": "video", "adomain": ["x.com"], "dsa": {"behalf": "A"}, "ext": {"k": 1}},
        {"id": "b", "bidId": "2", "cpm": 1, "mtype": "native"},
        {"id": "c", "bidId": "3", "cpm": 1, "mtype": "banner"},
    ]}  # fmt: skip
    response, errors = bids_for(ADAPTER, {}, answer)
    assert response.currency == "EUR"
    first, second = response.bids
    assert first.bid == {"id": "a", "impid": "1", "price": 2.5, "adm": "<a>", "adomain": ["x.com"], "crid": "c",
                         "w": 300, "h": 250, "mtype": 2, "ext": {"dsa": {"behalf": "A"}, "k": 1}}  # fmt: skip
    assert (first.bid_type, second.bid_type, second.bid) == (
        "video",
        "banner",
        {"id": "c", "impid": "3", "price": 1, "mtype": 1},
    )
    assert [(e.message, e.code) for e in errors] == [
        ('Bid media type error: unable to determine media type for bid with id "2"', ErrorCode.BAD_SERVER_RESPONSE)
    ]


@pytest.mark.parametrize(
    ("status", "body", "error"),
    [
        (500, b"", "Unexpected http status code: 500."),
        (204, b"", "Unexpected http status code: 204."),
        (200, b"[]", "expect { or n, but found ["),
        (200, b'{"bids": [{"cpm": "1"}]}', "stroeerCore.bidResponse.CPM"),
    ],
)
def test_a_failed_answer_is_one_error(status, body, error):
    response, errors = bids_for(ADAPTER, {}, body, status)
    assert response is None and len(errors) == 1 and error in errors[0].message


def test_a_null_answer_has_no_bids():
    response, errors = bids_for(ADAPTER, {}, b"null")
    assert response.bids == [] and not errors
