"""SmartyAds' own rules: the last imp's params fill the endpoint, its host must be safe, the first
bad imp fails the request, and any 2xx answer but 204 is read."""

from __future__ import annotations

import orjson

from hbserver.adapters.base import AdapterConfig, RequestInfo, ResponseData
from hbserver.adapters.smartyads import build

ADAPTER = build(AdapterConfig("smartyads", "http://{{.Host}}.s.example/bid?seat={{.SourceId}}&key={{.AccountID}}"))
INFO = RequestInfo("smartyads")


def _imp(imp_id, params):
    return {"id": imp_id, "banner": {}, "ext": {"bidder": params}}


def test_the_last_imp_fills_the_endpoint_and_every_ext_goes():
    imps = [_imp("a", {"host": "x", "sourceid": "1", "accountid": "k"}), _imp("b", {"host": "y", "sourceid": "2"})]
    calls, errors = ADAPTER.make_requests({"imp": imps}, INFO)
    assert not errors and calls[0].uri == "http://y.s.example/bid?seat=2&key="
    assert [imp.get("ext") for imp in orjson.loads(calls[0].body)["imp"]] == [None, None]


def test_an_unsafe_last_host_or_a_bad_imp_fails_the_request():
    imps = [_imp("a", {"host": "x"}), _imp("b", {"host": "a/b"})]
    assert [e.message for e in ADAPTER.make_requests({"imp": imps}, INFO)[1]] == ["Invalid Host"]
    imps = [_imp("a", {"host": 1}), _imp("b", {"host": []})]
    assert [e.message for e in ADAPTER.make_requests({"imp": imps}, INFO)[1]] == ["ext.bidder not provided"]


def test_any_2xx_but_204_is_read():
    body = orjson.dumps({"seatbid": [{"bid": [{"id": "1", "impid": "a", "price": 1}]}]})
    result, errors = ADAPTER.make_bids({"imp": [_imp("a", {})]}, None, ResponseData(201, body))
    assert not errors and result.bids[0].bid_type == "banner"
    assert ADAPTER.make_bids({}, None, ResponseData(204, b""))[1][0].message == "No bid response"
