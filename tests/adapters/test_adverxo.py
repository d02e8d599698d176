"""Adverxo's own rules over its recipe: params read in encoding/json's words, native markup
unwrapped and the price macro resolved in adm, bid by bid."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, RequestInfo
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "https://example.com/auction?id={{.AdUnit}}&auth={{.TokenID}}"


def adapter() -> Any:
    return build_adapter("adverxo", AdapterConfig("adverxo", ENDPOINT))


def request_with(ext: Any) -> dict[str, Any]:
    return {"id": "r", "imp": [{"id": "i", "banner": {"w": 1, "h": 1}, "ext": ext}]}


@pytest.mark.parametrize(
    ("ext", "uri", "error"),
    [
        ({"bidder": {"adUnitId": 5, "auth": "t"}}, "https://example.com/auction?id=5&auth=t", None),
        ({"bidder": {"ADUNITID": 5}}, "https://example.com/auction?id=5&auth=", None),
        ({"bidder": None}, "https://example.com/auction?id=0&auth=", None),
        ("bad", None, "imp i: unable to unmarshal ext"),
        ({}, None, "imp i: unable to unmarshal ext.bidder: unexpected end of JSON input"),
        (
            {"bidder": "x"},
            None,
            "imp i: unable to unmarshal ext.bidder: json: cannot unmarshal string into Go value of type "
            "openrtb_ext.ImpExtAdverxo",
        ),
        (
            {"bidder": {"adUnitId": "5", "auth": 1}},
            None,
            "imp i: unable to unmarshal ext.bidder: json: cannot unmarshal string into Go struct field "
            "ImpExtAdverxo.adUnitId of type int",
        ),
        (
            {"bidder": {"adUnitId": 1.5}},
            None,
            "imp i: unable to unmarshal ext.bidder: json: cannot unmarshal number 1.5 into Go struct field "
            "ImpExtAdverxo.adUnitId of type int",
        ),
    ],
)
def test_params_read_as_encoding_json_does(ext: Any, uri: str | None, error: str | None) -> None:
    calls, _, errors = requests_of(adapter(), request_with(ext), RequestInfo("adverxo"))
    assert [call.uri for call in calls] == ([uri] if uri else [])
    assert [e.message for e in errors] == ([error] if error else [])


def bid(mtype: int, adm: str) -> dict[str, Any]:
    return {"id": "b", "impid": "i", "price": 1.5, "mtype": mtype, "adm": adm, "nurl": "${AUCTION_PRICE}"}


@pytest.mark.parametrize(
    ("bids", "adms", "error"),
    [
        ([bid(4, '{"native":{"a":1}}')], ['{"a":1}'], None),
        ([bid(4, '{"other":1}')], ['{"other":1}'], None),
        ([bid(1, "p=${AUCTION_PRICE}")], ["p=1.5"], None),
        ([bid(4, "nope")], None, "unable to unmarshal native adm"),
        ([bid(4, '{"native":1}')], None, "unable to get native adm"),
        ([bid(0, ""), bid(4, "nope")], None, "unsupported MType 0"),  # the first bad bid rules
        ([bid(4, "nope"), bid(0, "")], None, "unable to unmarshal native adm"),
    ],
)
def test_bids(bids: list[Any], adms: list[str] | None, error: str | None) -> None:
    answer, errors = bids_for(adapter(), request_with({}), {"seatbid": [{"bid": bids}], "cur": "EUR"})
    if error:
        assert answer is None and [e.message for e in errors] == [error]
        return
    assert errors == [] and answer is not None and answer.currency == "EUR"
    assert [typed.bid["adm"] for typed in answer.bids] == adms
    assert all(typed.bid["nurl"] == "${AUCTION_PRICE}" for typed in answer.bids)  # adm alone
