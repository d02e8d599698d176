"""ResetDigital adapter: one imp only, pid in the URL, tagid from placement_id, cur filtered to
ISO 4217, 4xx as bad input, zero prices dropped, mtype then imp typing, seat and currency fallbacks."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.resetdigital import build
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "https://example.com"
ADAPTER = build(AdapterConfig("resetdigital", ENDPOINT))
INFO = RequestInfo(bidder="resetdigital")


def imp(placement: Any = "p", **fields: Any) -> dict[str, Any]:
    return {"id": "i", "banner": {"w": 1, "h": 1}, "ext": {"bidder": {"placement_id": placement}}, **fields}


def test_the_call():
    request = {"id": "r", "imp": [imp()], "site": {"page": "x"}, "allimps": 1, "bapp": ["a"], "test": 0, "badv": []}
    calls, bodies, errors = requests_of(ADAPTER, request, INFO)
    assert errors == []
    assert [(c.uri, c.imp_ids, dict(c.headers)) for c in calls] == [
        (
            "https://example.com?pid=p",
            ["i"],
            {"Content-Type": "application/json", "Accept": "application/json", "X-OpenRTB-Version": "2.6"},
        )
    ]
    assert bodies[0] == {"id": "r", "imp": [{**imp(), "tagid": "p"}], "site": {"page": "x"}, "cur": ["USD"]}


@pytest.mark.parametrize(
    ("cur", "want"),
    [(None, ["USD"]), (["eur", " gbp "], ["EUR", "GBP"]), (["XYZ", ""], ["USD"]), (["VES", "JPY"], ["JPY"])],
)
def test_currencies(cur, want):
    _, bodies, _ = requests_of(ADAPTER, {"id": "r", "imp": [imp()], "cur": cur}, INFO)
    assert bodies[0]["cur"] == want


@pytest.mark.parametrize(
    ("imps", "error"),
    [
        ([], "ResetDigital adapter supports only one impression per request"),
        ([imp(), imp()], "ResetDigital adapter supports only one impression per request"),
        ([{"id": "i", "ext": "x"}], "Error parsing bidderExt from imp.ext: "),
        ([{"id": "i", "ext": {"bidder": 1}}], "Error parsing resetDigitalExt from bidderExt.bidder: "),
        ([imp(placement=5)], "Error parsing resetDigitalExt from bidderExt.bidder: "),
    ],
)
def test_refused(imps, error):
    calls, _, errors = requests_of(ADAPTER, {"id": "r", "imp": imps}, INFO)
    assert calls == []
    assert [(e.message.startswith(error), e.code) for e in errors] == [(True, ErrorCode.BAD_INPUT)]


def test_existing_tagid_is_kept():
    _, bodies, _ = requests_of(ADAPTER, {"id": "r", "imp": [imp(tagid="t")]}, INFO)
    assert bodies[0]["imp"][0]["tagid"] == "t"


@pytest.mark.parametrize(
    ("bid", "media", "want", "error"),
    [
        ({"mtype": 3}, {"banner": {}}, "audio", None),
        ({}, {"video": {}, "banner": {}}, "video", None),
        ({}, {"native": {}}, "native", None),
        ({}, {"banner": {}}, "banner", None),
        ({"impid": "other"}, {"banner": {}}, None, "no matching impression found for ImpID: other"),
        ({"price": 0}, {"banner": {}}, None, "price 0.000000 <= 0 filtered out"),
    ],
)
def test_bids(bid, media, want, error):
    the_bid = {"id": "b", "impid": "i", "price": 1.5, **bid}
    request = {"imp": [{"id": "i", **media}]}
    response, errors = bids_for(ADAPTER, request, {"id": "r", "seatbid": [{"bid": [the_bid]}]})
    assert response is not None
    assert [(t.bid_type, t.seat) for t in response.bids] == ([(want, "resetdigital")] if want else [])
    assert [e.message for e in errors] == ([error] if error else [])


@pytest.mark.parametrize(
    ("answer_cur", "seat", "request_cur", "want"),
    [
        ("EUR", "s", None, ("EUR", "s")),
        ("", "", ["gbp"], ("GBP", "resetdigital")),
        ("", "", None, ("USD", "resetdigital")),
    ],
)
def test_currency_and_seat(answer_cur, seat, request_cur, want):
    answer = {"id": "r", "cur": answer_cur, "seatbid": [{"seat": seat, "bid": [{"id": "b", "impid": "i", "price": 1}]}]}
    response, _ = bids_for(ADAPTER, {"imp": [{"id": "i", "banner": {}}], "cur": request_cur}, answer)
    assert response is not None
    assert (response.currency, response.bids[0].seat) == want


@pytest.mark.parametrize(
    ("status", "body", "code"),
    [
        (204, b"", None),
        (404, b"", ErrorCode.BAD_INPUT),
        (500, b"", ErrorCode.BAD_SERVER_RESPONSE),
        (200, b"[]", ErrorCode.BAD_SERVER_RESPONSE),
        (200, b'{"id": "r"}', None),
    ],
)
def test_no_answer(status, body, code):
    response, errors = bids_for(ADAPTER, {"imp": []}, body, status)
    assert response is None
    assert [e.code for e in errors] == ([code] if code else [])
