"""Zentotem's own calls: one per imp, each carrying the whole request (the answer is recipe steps)."""

from __future__ import annotations

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.zentotem import build
from tests.adapters.helpers import bids_for, requests_of

ADAPTER = build(AdapterConfig("zentotem", "http://z.example/bid"))


def test_one_call_per_imp_each_with_the_whole_request():
    imps = [{"id": "a", "banner": {}}, {"id": "b", "video": {"mimes": ["video/mp4"]}}]
    calls, bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": imps}, RequestInfo("zentotem"))
    assert not errors and [call.imp_ids for call in calls] == [["a"], ["b"]]
    assert [[imp["id"] for imp in body["imp"]] for body in bodies] == [["a", "b"], ["a", "b"]]
    assert all(call.headers == {} and call.uri == "http://z.example/bid" for call in calls)


def test_bids_typed_by_mtype():
    answer = {
        "cur": "EUR",
        "seatbid": [
            {
                "bid": [
                    {"id": "1", "impid": "a", "price": 1, "mtype": 4},
                    {"id": "2", "impid": "b", "price": 1, "mtype": 3},
                ]
            }
        ],
    }
    response, errors = bids_for(ADAPTER, {"id": "r", "imp": []}, answer)
    assert response is not None and response.currency == "EUR" and [b.bid_type for b in response.bids] == ["native"]
    assert [error.message for error in errors] == ["could not define media type for impression: b"]
