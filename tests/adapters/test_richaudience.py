"""Rich Audience adapter: Go's URL reading of ``site.page``, params, test mode across imps, errors and
bid typing against the imps of the call that was sent."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestData, RequestInfo
from hbserver.adapters.gourl import go_url_scheme_host
from hbserver.adapters.richaudience import build
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "https://ortb.richaudience.com/ortb/?bidder=pbs"
INFO = RequestInfo(bidder="richaudience")
BANNER = {"format": [{"w": 300, "h": 250}]}
DEVICE = {"ip": "10.0.0.1", "ua": "UA"}


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    out = {"id": imp_id, "banner": BANNER, **fields}
    out.setdefault("ext", {"bidder": {"pid": "P"} if params is None else params})
    return out


def run(request: dict):
    calls, bodies, errors = requests_of(build(AdapterConfig("richaudience", ENDPOINT)), request, INFO)
    assert all(call.uri == ENDPOINT for call in calls)
    return calls, bodies, [e.message for e in errors]


@pytest.mark.parametrize(
    ("url", "want"),
    [
        ("https://a.com/x?y=1#z", ("https", "a.com")),
        ("HTTPS://A.com:8080/x", ("https", "A.com:8080")),
        ("http://user:pw@h.com/", ("http", "h.com")),
        ("https://[::1]:443/", ("https", "[::1]:443")),
        ("https://h%C3%A9.com/", ("https", "hé.com")),
        ("//host/p", ("", "host")),
        ("https:opaque", ("https", "")),
        ("example.com/path", ("", "")),
        ("https://x.com/#\x01", ("https", "x.com")),
        ("http://a b.com/", None),
        ("https://a.com:80x/", None),
        ("https://h%41.com/", None),
        ("https://[::1/", None),
        ("https://a.com/%zz", None),
        ("https://a.com/#%zz", None),
        ("https://a.com/\x01", None),
        (":x", None),
        ("1a:b", None),
        ("https://us er@h.com/", None),
    ],
)
def test_page_url_as_go_reads_it(url, want):
    assert go_url_scheme_host(url) == want


@pytest.mark.parametrize(
    ("site", "want_secure", "want_site"),
    [
        ({"page": "https://p.com/x"}, 1, {"page": "https://p.com/x", "domain": "p.com", "keywords": "tagid=t"}),
        (
            {"page": "https://p.com/x", "domain": "d.com"},
            1,
            {"page": "https://p.com/x", "domain": "d.com", "keywords": "tagid=t"},
        ),
        ({"page": "http://p.com/x"}, 0, {"page": "http://p.com/x", "domain": "p.com", "keywords": "tagid=t"}),
        ({"page": "https://a.com/%zz"}, 0, {"page": "https://a.com/%zz", "keywords": "tagid=t"}),
        ({"keywords": "old"}, 0, {"keywords": "tagid=t"}),
    ],
)
def test_secure_domain_and_keywords(site, want_secure, want_site):
    _, bodies, errors = run({"id": "r", "imp": [imp(tagid="t")], "site": site, "device": DEVICE})
    assert errors == []
    assert bodies[0]["imp"][0]["secure"] == want_secure
    assert bodies[0]["imp"][0]["tagid"] == "P"
    assert bodies[0]["site"] == want_site


@pytest.mark.parametrize(
    ("params", "fields", "want"),
    [
        ({"pid": "P"}, {}, {"tagid": "P", "bidfloorcur": "USD"}),
        ({"pid": ""}, {"tagid": "own", "bidfloorcur": "GBP"}, {"tagid": "own", "bidfloorcur": "GBP"}),
        ({"PID": "upper", "bidfloorcur": "EUR"}, {"bidfloorcur": "GBP"}, {"tagid": "upper", "bidfloorcur": "EUR"}),
        ({"pid": None, "test": None, "bidfloor": 1.5, "extra": [1]}, {}, {"tagid": None, "bidfloorcur": "USD"}),
    ],
)
def test_imp_params(params, fields, want):
    _, bodies, errors = run({"id": "r", "imp": [imp("i", params, **fields)], "app": {"id": "a"}})
    assert errors == []
    sent = bodies[0]["imp"][0]
    for key, value in want.items():
        assert sent.get(key) == value, key
    assert bodies[0]["app"]["keywords"] == "tagid=" + fields.get("tagid", "")


def test_test_mode_carries_over_to_later_imps():
    imps = [
        imp("a", {"pid": "A"}),
        imp("b", {"pid": "B", "test": True}, banner={}),  # refused (no size), but test mode stays on
        imp("c", {"pid": "C"}),
    ]
    calls, bodies, errors = run({"id": "r", "imp": imps, "device": DEVICE})
    assert errors == ["request.Banner.Format is required"]
    assert [call.imp_ids for call in calls] == [["a"], ["c"]]
    assert "test" not in bodies[0] and bodies[0]["device"] == DEVICE
    assert bodies[1]["test"] == 1 and bodies[1]["device"] == {"ip": "11.222.33.44", "ua": "UA"}


def test_test_mode_without_device_adds_one():
    _, bodies, _ = run({"id": "r", "imp": [imp("a", {"test": True})]})
    assert bodies[0]["device"] == {"ip": "11.222.33.44"}


def test_headers():
    calls, _, _ = run({"id": "r", "imp": [imp()]})
    assert dict(calls[0].headers) == {
        "Content-Type": "application/json;charset=utf-8",
        "Accept": "application/json",
        "X-Openrtb-Version": "2.5",
    }


@pytest.mark.parametrize(
    ("request_fields", "imps", "want_errors", "want_ids"),
    [
        ({"device": {"ua": "x"}}, [imp("a")], ["request.Device.IP is required"], []),
        ({"device": {"ipv6": "::1"}}, [imp("a")], [], [["a"]]),
        ({}, [{"id": "a", "banner": BANNER}, imp("b")], ["not found parameters ext in ImpID : a"], [["b"]]),
        ({}, [imp("a", ext="aaa")], ["not found parameters ext in ImpID : a"], []),
        ({}, [imp("a", ext={"prebid": 1, "bidder": {}})], ["not found parameters ext in ImpID : a"], []),
        ({}, [imp("a", ext=None)], ["invalid parameters ext in ImpID: a"], []),
        ({}, [imp("a", ext={"bidder": None})], ["invalid parameters ext in ImpID: a"], []),
        ({}, [imp("a", {"pid": 5})], ["invalid parameters ext in ImpID: a"], []),
        ({}, [imp("a", {"test": "yes"})], ["invalid parameters ext in ImpID: a"], []),
        ({}, [imp("a", {"bidfloor": "1"})], ["invalid parameters ext in ImpID: a"], []),
        ({}, [imp("a", banner={"w": 300})], [], [["a"]]),
        ({}, [imp("a", video={"w": 640})], ["request.Video.Sizes is required"], []),
    ],
)
def test_request_errors(request_fields, imps, want_errors, want_ids):
    calls, _, errors = run({"id": "r", "imp": imps, **request_fields})
    assert errors == want_errors
    assert [call.imp_ids for call in calls] == want_ids


def bids_of(sent_imps: list[dict], answer: Any, status: int = 200):
    sent = RequestData("POST", ENDPOINT, orjson.dumps({"id": "r", "imp": sent_imps}))
    return bids_for(build(AdapterConfig("richaudience", ENDPOINT)), {}, answer, status, call=sent)


def test_bids_typed_against_each_sent_imp():
    answer = {"seatbid": [{"bid": [{"id": "1", "impid": "v", "price": 1, "w": 1, "h": 1}]}]}
    response, errors = bids_of([{"id": "b", "banner": BANNER}, {"id": "v", "video": {"w": 640, "h": 480}}], answer)
    assert errors == []
    assert response.currency == "USD"
    assert [typed.bid_type for typed in response.bids] == ["no bidtype assigned", "video"]
    assert response.bids[0].bid is response.bids[1].bid  # one bid, listed once per imp, as in Go
    assert (response.bids[1].bid["w"], response.bids[1].bid["h"]) == (640, 480)


@pytest.mark.parametrize(
    ("status", "body", "want_response", "want_errors"),
    [
        (204, b"", False, []),
        (
            400,
            b"",
            False,
            [
                (
                    ErrorCode.BAD_INPUT,
                    "Unexpected status code: 400. Bad request from publisher. "
                    "Run with request.debug = 1 for more info.",
                )
            ],
        ),
        (
            503,
            b"",
            False,
            [(ErrorCode.BAD_SERVER_RESPONSE, "Unexpected status code: 503. Run with request.debug = 1 for more info.")],
        ),
    ],
)
def test_statuses(status, body, want_response, want_errors):
    response, errors = bids_of([imp()], body, status)
    assert (response is not None) == want_response
    assert [(e.code, e.message) for e in errors] == want_errors


@pytest.mark.parametrize(
    "body", [b"[", b"[]", b'{"seatbid": 1}', b'{"seatbid": [{"bid": {}}]}', b'{"seatbid": [{"bid": [1]}]}']
)
def test_bad_answers(body):
    response, errors = bids_of([imp()], body)
    assert response is None
    assert [e.code for e in errors] == [ErrorCode.BAD_SERVER_RESPONSE]


def test_answer_currency_kept():
    response, errors = bids_of([imp()], {"cur": "EUR"})
    assert errors == [] and response.currency == "EUR" and response.bids == []
