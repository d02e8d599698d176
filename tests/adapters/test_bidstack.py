"""Bidstack's own call: the first imp's publisherId as a bearer token and every imp's floor in USD
(the params' and the answer's wording are recipe steps, tested there)."""

from __future__ import annotations

import orjson

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.bidstack import build
from tests.adapters.helpers import converter

ADAPTER = build(AdapterConfig("bidstack", "http://b.example"))
INFO = RequestInfo("bidstack", convert_currency=converter("EUR"))


def _imp(imp_id, publisher, **floor):
    return {"id": imp_id, "video": {"mimes": ["video/mp4"]}, **floor, "ext": {"bidder": {"publisherId": publisher}}}


def test_one_call_authorised_by_the_first_imp_with_floors_in_usd():
    imps = [_imp("a", "p1"), _imp("b", "p2", bidfloor=1.0, bidfloorcur="EUR"), _imp("c", "p3", bidfloor=2.0)]
    calls, errors = ADAPTER.make_requests({"imp": imps}, INFO)
    assert not errors and len(calls) == 1 and calls[0].imp_ids == ["a", "b", "c"]
    assert calls[0].headers == {"Content-Type": "application/json", "Authorization": "Bearer p1"}
    sent = orjson.loads(calls[0].body)["imp"]
    assert [(imp.get("bidfloor"), imp.get("bidfloorcur")) for imp in sent] == [(None, None), (2.0, "USD"), (2.0, None)]


def test_no_rate_or_bad_params_make_no_call():
    calls, errors = ADAPTER.make_requests({"imp": [_imp("a", "p", bidfloor=1.0, bidfloorcur="GBP")]}, INFO)
    assert calls == [] and len(errors) == 1 and "GBP" in errors[0].message
    calls, errors = ADAPTER.make_requests({"imp": [_imp("a", 5)]}, INFO)
    assert calls == [] and errors[0].message.startswith("headers prepare: get bidder ext: bidder ext: ")
