"""Yieldlab's own rules: the GET's path and query (sizes, GDPR, supply chain, DSA), and Yieldlab's
answer made OpenRTB bids (price in cents, creative id, script or VAST ad, DSA ext)."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.yieldlab import build, joined_path, split_size, supply_chain
from tests.adapters.helpers import bids_for, requests_of

ADAPTER = build(AdapterConfig("yieldlab", "https://ad.example/yp/?x=1"))
ADAPTER.cache_buster = lambda: "cb"
ADAPTER.week = lambda: "7"
INFO = RequestInfo("yieldlab")
PARAMS = {"adslotId": "11", "supplyId": "22", "targeting": {"k": "v"}, "extId": "e"}


def _imp(imp_id: str, params: Any = PARAMS, **media: Any) -> dict[str, Any]:
    return {"id": imp_id, **(media or {"banner": {"format": [{"w": 300, "h": 250}, {"w": 1, "h": 2}]}}),
            "ext": {"bidder": params}}  # fmt: skip


def _query(request: dict[str, Any]) -> dict[str, str]:
    calls, _, errors = requests_of(ADAPTER, request, INFO)
    assert not errors and calls[0].method == "GET" and calls[0].body is None
    return {key: values[0] for key, values in parse_qs(urlsplit(calls[0].uri).query).items()}


def test_the_call_names_every_adslot_and_the_banner_only_sizes():
    video = _imp("v", {**PARAMS, "adslotId": "33", "targeting": {"k": "w", "j": "x"}}, video={"mimes": []})
    request = {"id": "r", "imp": [_imp("b"), video, _imp("bad", 5)], "user": {"buyeruid": "u"}}
    calls, _, _ = requests_of(ADAPTER, request, INFO)
    assert calls[0].uri.startswith("https://ad.example/yp/11,33?")
    assert calls[0].headers == {"Accept": "application/json", "Cookie": "id=u"}
    query = _query(request)
    assert query["sizes"] == "11:300x250|1x2,:300x250|1x2" and query["t"] == "j=x&k=w" and query["ids"] == "ylid:u"
    assert (query["x"], query["ts"], query["content"], query["pvid"]) == ("1", "cb", "json", "true")


DSA = {"dsarequired": 3, "transparency": [{"domain": "a", "dsaparams": [1, 2]}, {"dsaparams": [3]}, {"domain": "b"}]}


@pytest.mark.parametrize(
    ("regs", "user_ext", "expected"),
    [
        ({"ext": {"gdpr": 1}}, {"consent": "c"}, {"gdpr": "1", "gdpr_consent": "c"}),
        ({"ext": {"gdpr": 2}}, None, {}),
        ({"ext": {"gdpr": 0, "dsa": DSA}}, None, {"gdpr": "0", "dsarequired": "3", "dsatransparency": "a~1_2~~~~b"}),
    ],
)
def test_gdpr_and_dsa_in_the_query(regs, user_ext, expected):
    request = {"id": "r", "imp": [_imp("b")], "regs": regs, "user": {"ext": user_ext}}
    query = _query(request)
    assert {key: query[key] for key in query if key.startswith(("gdpr", "dsa"))} == expected


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"user": {"ext": {"consent": 1}}}, "failed to parse ExtUser in Yieldlab GDPR check: "),
        ({"regs": {"ext": {"dsa": "x"}}}, "failed to parse Regs.Ext object from Yieldlab response: "),
        ({"imp": []}, "invalid request"),
    ],
)
def test_an_ext_that_does_not_decode_refuses_the_request(fields, error):
    calls, _, errors = requests_of(ADAPTER, {"id": "r", "imp": [_imp("b")], **fields}, INFO)
    assert calls == [] and errors[0].message.startswith(error)


def test_supply_chain():
    node = {"asi": "a b", "sid": "1!", "hp": 1, "ext": {"x": "<"}}
    source = {"ext": {"schain": {"ver": "1.0", "complete": 1, "nodes": [node, {"asi": "c", "ext": "t"}]}}}
    assert supply_chain({"source": source}) == "1.0,1!a+b,1%21,1,,,,%7B%22x%22%3A%22%5Cu003c%22%7D!c,,,,,,%22t%22"
    assert supply_chain({"source": {"ext": {"schain": {"nodes": []}}}}) == ""
    assert supply_chain({"source": {"ext": {"schain": {"nodes": [{"hp": "x"}]}}}}) == ""


def test_path_join():
    assert joined_path("https://h/a/?q=1", "1,2") == "https://h/a/1,2"
    assert joined_path("https://h", "") == "https://h"


@pytest.mark.parametrize(("size", "expected"), [("300x250", (300, 250)), ("", (0, 0)), ("1x2x3", (0, 0))])
def test_split_size(size, expected):
    assert split_size(size) == expected


REQUEST = {"id": "r", "imp": [_imp("b"), _imp("v", {**PARAMS, "adslotId": "33"}, video={"mimes": []})],
           "user": {"buyeruid": "u"}}  # fmt: skip


def _bid(**fields: Any) -> dict[str, Any]:
    return {"id": 11, "price": 150, "advertiser": "adv", "adsize": "300x250", "pid": 9, "pvid": "p", **fields}


def test_bids_made_openrtb():
    answer, errors = bids_for(ADAPTER, REQUEST, [_bid(), _bid(id=33, dsa={"paid": "x", "transparency": [{}]})])
    assert not errors and answer is not None and answer.currency == "EUR"
    banner, video = answer.bids
    assert banner.bid_type == "banner" and banner.bid["price"] == 1.5 and banner.bid["crid"] == "1197"
    assert (
        banner.bid["adm"]
        == '<script src="https://ad.yieldlab.net/d/11/22/300x250?id=e&ids=ylid%3Au&pvid=p&ts=cb"></script>'
    )
    assert (banner.bid["dealid"], banner.bid["adomain"], "ext" not in banner.bid) == ("9", ["adv"], True)
    assert video.bid_type == "video" and video.bid["adm"].startswith('<VAST version="2.0"><Ad id="33">')
    assert video.bid["nurl"].startswith("https://ad.yieldlab.net/d/33/22/") and video.bid["ext"] == {
        "dsa": {"paid": "x", "transparency": [{}]}
    }


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ([_bid(adsize="axb")], 200, 'failed to parse yieldlab adsize: strconv.ParseUint: parsing "a": invalid syntax'),
        (
            [_bid(id=44)],
            200,
            "failed to find yieldlab request for adslotID 44. This is most likely a programming issue",
        ),
        ({"id": 1}, 200, "failed to parse bids response from yieldlab: decode slice: expect [ or n, but found {"),
        (b"", 204, "failed to resolve bids from yieldlab response: Unexpected response code 204"),
    ],
)
def test_answers_that_fail(body, status, message):
    answer, errors = bids_for(ADAPTER, REQUEST, body, status=status)
    assert answer is None and [error.message for error in errors] == [message]
    if status != 200 or message.startswith("failed to parse bids"):
        assert errors[0].code == ErrorCode.BAD_SERVER_RESPONSE
