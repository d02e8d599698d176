"""MinuteMedia adapter: the first imp's ``org`` in the URL (trimmed, escaped), the test endpoint,
params errors, the unchanged body, bid typing by ``mtype`` and status texts."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.minutemedia import TEST_ENDPOINT, build
from tests.adapters.helpers import bids_for, imp_with, requests_of

ENDPOINT = "https://pbs.minutemedia-prebid.com/pbs-mm"
INFO = RequestInfo(bidder="minutemedia")


def imp(imp_id: str = "i", org: Any = "72721", **fields: Any) -> dict:
    return imp_with(imp_id, {"org": org}, fields, {"banner": {"format": [{"w": 300, "h": 250}]}})


def run(request: dict):
    calls, bodies, errors = requests_of(build(AdapterConfig("minutemedia", ENDPOINT)), request, INFO)
    return calls, bodies, [(e.message, e.code) for e in errors]


@pytest.mark.parametrize(
    ("imps", "test", "uri"),
    [
        ([imp(org="72721")], None, f"{ENDPOINT}?publisher_id=72721"),
        ([imp(org=" \t72721\u3000\n")], None, f"{ENDPOINT}?publisher_id=72721"),  # Go's TrimSpace
        ([imp(org="\x1f1")], None, f"{ENDPOINT}?publisher_id=%1F1"),  # not a space to Go
        ([imp(org="a b&c=d/é")], None, f"{ENDPOINT}?publisher_id=a+b%26c%3Dd%2F%C3%A9"),  # Go's QueryEscape
        ([imp(org=None)], None, f"{ENDPOINT}?publisher_id="),
        ([imp(ext={"bidder": {"ORG": "x"}})], None, f"{ENDPOINT}?publisher_id=x"),  # struct field: any case
        ([imp("a", "first"), imp("b", "second")], None, f"{ENDPOINT}?publisher_id=first"),
        ([imp("a", "first"), {"id": "b", "banner": {}}], None, f"{ENDPOINT}?publisher_id=first"),  # not read
        ([imp(org="1")], 1, f"{TEST_ENDPOINT}?publisher_id=1"),
        ([imp(org="1")], 0, f"{ENDPOINT}?publisher_id=1"),
    ],
)
def test_endpoint(imps, test, uri):
    request: dict[str, Any] = {"id": "r", "imp": imps}
    if test is not None:
        request["test"] = test
    calls, _, errors = run(request)
    assert errors == []
    assert [(call.uri, call.imp_ids) for call in calls] == [(uri, [i["id"] for i in imps])]
    assert dict(calls[0].headers) == {"Content-Type": "application/json;charset=utf-8"}


def test_request_goes_unchanged():
    request = {"id": "r", "site": {"page": "p"}, "imp": [imp(ext={"bidder": {"org": "1", "zone": "z"}, "gpid": "g"})]}
    _, bodies, _ = run(request)
    assert bodies == [request]


PREFIX = "failed to extract org: "


@pytest.mark.parametrize(
    ("imps", "want"),
    [
        ([], "no imps in bid request"),
        ([{"id": "a", "banner": {}}], "failed to unmarshal bidderExt: expect { or n, but found \x00"),
        ([imp(ext=None)], "failed to unmarshal bidderExt: expect { or n, but found \x00"),
        ([imp(ext=[1])], "failed to unmarshal bidderExt: expect { or n, but found ["),
        (
            [imp(ext={"prebid": 1})],
            "failed to unmarshal bidderExt: cannot unmarshal adapters.ExtImpBidder.Prebid: expect { or n, but found 1",
        ),
        ([imp(ext={})], "failed to unmarshal ImpExtMinuteMedia: expect { or n, but found \x00"),
        ([imp(ext={"bidder": None})], "failed to unmarshal ImpExtMinuteMedia: expect { or n, but found \x00"),
        ([imp(ext={"bidder": "x"})], 'failed to unmarshal ImpExtMinuteMedia: expect { or n, but found "'),
        (
            [imp(org=72721)],
            "failed to unmarshal ImpExtMinuteMedia: "
            'cannot unmarshal openrtb_ext.ImpExtMinuteMedia.Org: expects " or n, but found 7',
        ),
    ],
)
def test_params_errors(imps, want):
    calls, _, errors = run({"id": "r", "imp": imps})
    assert calls == []
    assert errors == [(PREFIX + want, ErrorCode.UNKNOWN)]


def bids(body: Any, status: int = 200):
    return bids_for(build(AdapterConfig("minutemedia", ENDPOINT)), {"id": "r", "imp": [imp()]}, body, status)


def answer(*mtypes: Any, cur: str | None = "EUR") -> dict:
    bids = [{"id": f"b{n}", "impid": "i", "price": 1, "mtype": m} for n, m in enumerate(mtypes)]
    out: dict[str, Any] = {"seatbid": [{"bid": bids}]}
    if cur is not None:
        out["cur"] = cur
    return out


@pytest.mark.parametrize(
    ("body", "want_types", "want_errors", "want_currency"),
    [
        (answer(1, 2), ["banner", "video"], [], "EUR"),
        (answer(1, cur=None), ["banner"], [], "USD"),
        (
            answer(3, 1, 4, None),
            ["banner"],
            ["unsupported MType 3", "unsupported MType 4", "unsupported MType 0"],
            "EUR",
        ),
    ],
)
def test_bids_typed_by_mtype(body, want_types, want_errors, want_currency):
    response, errors = bids(body)
    assert [b.bid_type for b in response.bids] == want_types
    assert [(e.message, e.code) for e in errors] == [(m, ErrorCode.BAD_SERVER_RESPONSE) for m in want_errors]
    assert response.currency == want_currency


@pytest.mark.parametrize(
    ("status", "body", "want"),
    [
        (204, b"", []),
        (400, b"{}", [("Unexpected status code: 400. Run with request.debug = 1 for more info", ErrorCode.BAD_INPUT)]),
        (
            502,
            b"{}",
            [("Unexpected status code: 502. Run with request.debug = 1 for more info", ErrorCode.BAD_SERVER_RESPONSE)],
        ),
        (200, b"", [("expect { or n, but found \x00", ErrorCode.UNKNOWN)]),
    ],
)
def test_failed_answers(status, body, want):
    response, errors = bids(body, status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == want
