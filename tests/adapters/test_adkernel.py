"""AdKernel adapter: one call per zone, multi-format imps split, publisher dropped, zone errors,
the single-seatbid rule, mtype typing and the multi-format suffix taken off bids."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.adkernel import build
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from tests.adapters.helpers import bids_for, imp_with, requests_of

ENDPOINT = "http://pbs.adksrv.com/hb?zone={{.ZoneID}}"
INFO = RequestInfo(bidder="adkernel")


def imp(imp_id: str = "i", zone: Any = 1, **fields: Any) -> dict:
    return imp_with(imp_id, {"zoneId": zone}, fields, {"banner": {}})


def run(request: dict):
    calls, bodies, errors = requests_of(build(AdapterConfig("adkernel", ENDPOINT)), request, INFO)
    return calls, bodies, [(e.message, e.code) for e in errors]


def bids(request: dict, body: Any, status: int = 200):
    return bids_for(build(AdapterConfig("adkernel", ENDPOINT)), request, body, status)


def answer(*bids_: dict) -> dict:
    return {"cur": "EUR", "seatbid": [{"bid": list(bids_)}]}


def test_one_call_per_zone_with_headers():
    calls, bodies, errors = run({"id": "r", "imp": [imp("a", 5), imp("b", 6), imp("c", 5)]})
    assert errors == []
    assert [(call.uri, call.imp_ids) for call in calls] == [
        ("http://pbs.adksrv.com/hb?zone=5", ["a", "c"]),
        ("http://pbs.adksrv.com/hb?zone=6", ["b"]),
    ]
    assert all("ext" not in sent for body in bodies for sent in body["imp"])
    assert dict(calls[0].headers) == {
        "Content-Type": "application/json;charset=utf-8",
        "Accept": "application/json",
        "X-Openrtb-Version": "2.5",
    }


@pytest.mark.parametrize(
    ("media", "ids"),
    [
        ({"banner": {}}, ["i"]),
        ({"audio": {"mimes": ["a"]}}, ["i"]),
        ({"video": {"mimes": ["v"]}, "banner": {}}, ["ib__mf", "iv__mf"]),
        (
            {"audio": {}, "native": {"request": "{}"}, "video": {}, "banner": {}},
            ["ib__mf", "iv__mf", "in__mf", "ia__mf"],
        ),
    ],
)
def test_multi_format_imp_split_by_type(media, ids):
    calls, bodies, _ = run({"imp": [imp("i", 1, **media)]})
    sent = bodies[0]["imp"]
    assert [s["id"] for s in sent] == ids == calls[0].imp_ids
    assert all(sum(kind in s for kind in ("banner", "video", "audio", "native")) == 1 for s in sent)


@pytest.mark.parametrize("holder", ["site", "app"])
def test_publisher_dropped(holder):
    request = {holder: {"id": "s", "publisher": {"id": "p"}}, "imp": [imp()]}
    _, bodies, _ = run(request)
    assert bodies[0][holder] == {"id": "s"}


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (imp(zone=0), "Invalid zoneId value: 0. Ignoring imp id=i"),
        (imp(zone=-3), "Invalid zoneId value: -3. Ignoring imp id=i"),
        (imp(zone=None), "Invalid zoneId value: 0. Ignoring imp id=i"),
        (imp(zone="5"), "cannot unmarshal openrtb_ext.ExtImpAdkernel.ZoneId: unexpected character: \ufffd"),
        (imp(zone=1.5), "cannot unmarshal openrtb_ext.ExtImpAdkernel.ZoneId: can not decode float as int"),
        ({"id": "i", "banner": {}}, "expect { or n, but found \x00"),
        ({"id": "i", "banner": {}, "ext": {"bidder": []}}, "expect { or n, but found ["),
    ],
)
def test_bad_imp_is_reported_and_left_out(bad, message):
    calls, _, errors = run({"imp": [bad, imp("ok")]})
    assert [call.imp_ids for call in calls] == [["ok"]]
    assert errors == [(message, ErrorCode.BAD_INPUT)]


def test_no_imp():
    assert run({"imp": []}) == ([], [], [("No impression in the bid request", ErrorCode.BAD_INPUT)])


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (400, b"{}", "Unexpected http status code: 400"),
        (500, b"{}", "Unexpected http status code: 500"),
        (200, b"x", "Bad server response: &{%!d(string=expect { or n, but found x)}"),
        (200, b"{}", "Invalid SeatBids count: 0"),
        (200, b'{"seatbid": [{"bid": []}, {"bid": []}]}', "Invalid SeatBids count: 2"),
    ],
)
def test_failed_answer(status, body, message):
    response, errors = bids({"imp": [imp()]}, body, status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == [(message, ErrorCode.BAD_SERVER_RESPONSE)]


@pytest.mark.parametrize(("mtype", "want"), [(1, "banner"), (2, "video"), (3, "audio"), (4, "native")])
def test_bids_typed_by_mtype(mtype, want):
    response, errors = bids({"imp": [imp()]}, answer({"id": "b", "impid": "i", "price": 1, "mtype": mtype}))
    assert errors == []
    assert response.currency == "EUR"
    assert [b.bid_type for b in response.bids] == [want]


@pytest.mark.parametrize("mtype", [None, 0, 5])
def test_unknown_mtype_fails_the_answer(mtype):
    bid = {"id": "b", "impid": "i", "price": 1, "mtype": mtype}
    response, errors = bids({"imp": [imp()]}, answer({"id": "ok", "impid": "i", "price": 1, "mtype": 1}, bid))
    assert response is None
    assert [e.message for e in errors] == [f"Unsupported MType {mtype or 0}"]


@pytest.mark.parametrize(("impid", "want"), [("ib__mf", "i"), ("xyzv__mf", "xyz"), ("i", "i"), ("i__mfx", "i__mfx")])
def test_multi_format_suffix_taken_off(impid, want):
    response, _ = bids({"imp": [imp()]}, answer({"id": "b", "impid": impid, "price": 1, "mtype": 1}))
    assert response.bids[0].bid["impid"] == want
