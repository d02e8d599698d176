"""Jixie's own reading of the bids over its recipe: the impid becomes the bid's id, the type comes
from the markup (XML or VAST: video, else banner), the currency is the answer's or USD."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, RequestData, ResponseData

ENDPOINT = "https://jixie.example.com/hbsvrpost"
REQUEST = {"id": "r", "imp": [{"id": "i", "banner": {}, "ext": {"bidder": {"unit": "u"}}}]}


def answer(bid: dict[str, Any], cur: str | None = None) -> bytes:
    return orjson.dumps({"seatbid": [{"bid": [bid]}], **({"cur": cur} if cur else {})})


@pytest.mark.parametrize(
    ("adm", "want"),
    [
        ("<?xml version='1.0'?><VAST/>", "video"),
        ("<VAST version='3.0'></VAST>", "video"),
        ("<div>ad</div>", "banner"),
        (None, "banner"),
    ],
)
def test_bid_type_from_the_markup(adm, want):
    bid = {"id": "b1", "impid": "i", "price": 1, **({"adm": adm} if adm is not None else {})}
    adapter = build_adapter("jixie", AdapterConfig("jixie", ENDPOINT))
    response, errors = adapter.make_bids(REQUEST, RequestData("POST", ENDPOINT), ResponseData(200, answer(bid)))
    assert errors == []
    assert [(typed.bid_type, typed.bid["impid"]) for typed in response.bids] == [(want, "b1")]  # impid: the bid's id
    assert response.currency == "USD"


def test_currency_of_the_answer():
    bid = {"id": "b1", "impid": "i", "price": 1}
    adapter = build_adapter("jixie", AdapterConfig("jixie", ENDPOINT))
    response, _ = adapter.make_bids(REQUEST, RequestData("POST", ENDPOINT), ResponseData(200, answer(bid, "EUR")))
    assert response.currency == "EUR"
