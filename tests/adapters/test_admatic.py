"""AdMatic adapter: one call per imp with the host in the URL, device headers, params errors,
status texts and bid typing by imp."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from tests.adapters.helpers import bids_for, imp_with, requests_of

ENDPOINT = "http://pbs.admatic.com.tr?host={{.Host}}"
INFO = RequestInfo(bidder="admatic")
JSON_PAIR = {"Content-Type": "application/json;charset=utf-8", "Accept": "application/json"}


def imp(imp_id: str = "i", host: Any = "h.example", **fields: Any) -> dict:
    return imp_with(imp_id, {"host": host, "networkId": 1}, fields, {"banner": {}})


def run(request: dict):
    calls, bodies, errors = requests_of(build_adapter("admatic", AdapterConfig("admatic", ENDPOINT)), request, INFO)
    return calls, bodies, [(e.message, e.code) for e in errors]


def bids(request: dict, body: Any, status: int = 200):
    return bids_for(build_adapter("admatic", AdapterConfig("admatic", ENDPOINT)), request, body, status)


def test_one_call_per_imp_host_as_given():
    request = {"id": "r", "imp": [imp("a", "one.example"), imp("b", "a b&c")]}
    calls, bodies, errors = run(request)
    assert errors == []
    assert [(call.uri, call.imp_ids) for call in calls] == [
        ("http://pbs.admatic.com.tr?host=one.example", ["a"]),
        ("http://pbs.admatic.com.tr?host=a b&c", ["b"]),  # text/template does not escape
    ]
    assert bodies == [{"id": "r", "imp": [request["imp"][0]]}, {"id": "r", "imp": [request["imp"][1]]}]


@pytest.mark.parametrize(
    ("device", "extra"),
    [
        (None, {}),
        ({"ua": "UA/1"}, {"User-Agent": "UA/1"}),
        ({"ip": "1.2.3.4"}, {"X-Forwarded-For": "1.2.3.4"}),
        ({"ipv6": "::1"}, {"X-Forwarded-For": "::1"}),
        ({"ua": "", "ip": "1.2.3.4", "ipv6": "::1"}, {"X-Forwarded-For": "::1, 1.2.3.4"}),  # IPv6 first
    ],
)
def test_device_headers(device, extra):
    request: dict[str, Any] = {"imp": [imp()]}
    if device is not None:
        request["device"] = device
    calls, _, _ = run(request)
    assert dict(calls[0].headers) == {**JSON_PAIR, **extra}


IMP_EXT = "Failed to deserialize bidder impression extension: "
PARAMS = "Failed to deserialize AdMatic extension: "


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"id": "i", "banner": {}}, IMP_EXT + "expect { or n, but found \x00"),
        ({"id": "i", "banner": {}, "ext": None}, IMP_EXT + "expect { or n, but found \x00"),
        ({"id": "i", "banner": {}, "ext": 5}, IMP_EXT + "expect { or n, but found 5"),
        ({"id": "i", "banner": {}, "ext": {}}, PARAMS + "expect { or n, but found \x00"),
        ({"id": "i", "banner": {}, "ext": {"bidder": None}}, PARAMS + "expect { or n, but found \x00"),
        (imp(host={}), PARAMS + 'cannot unmarshal openrtb_ext.ImpExtAdmatic.Host: expects " or n, but found {'),
        (
            imp_with("i", {"host": "h", "networkId": "1"}, {}, {"banner": {}}),
            PARAMS + "cannot unmarshal openrtb_ext.ImpExtAdmatic.NetworkId: unexpected character: \ufffd",
        ),
    ],
)
def test_bad_imp_is_reported_and_left_out(bad, message):
    calls, _, errors = run({"imp": [bad, imp("ok")]})
    assert [call.imp_ids for call in calls] == [["ok"]]
    assert errors == [(message, ErrorCode.BAD_INPUT)]


@pytest.mark.parametrize(("status", "code"), [(400, ErrorCode.BAD_INPUT), (500, ErrorCode.BAD_SERVER_RESPONSE)])
def test_failure_status(status, code):
    response, errors = bids({"imp": [imp()]}, b"{}", status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == [
        (f"Unexpected status code: {status}. Run with request.debug = 1 for more info", code)
    ]


def test_no_content_and_bad_body():
    assert bids({"imp": [imp()]}, b"", 204) == (None, [])
    response, errors = bids({"imp": [imp()]}, b"")
    assert response is None
    assert [e.message for e in errors] == ["expect { or n, but found \x00"]


@pytest.mark.parametrize(
    ("imps", "want"),
    [
        ([imp(banner={}, video={})], "banner"),
        ([imp(video={}, native={})], "video"),
        ([imp(native={"request": "{}"})], "native"),
    ],
)
def test_bids_typed_by_imp(imps, want):
    body = {"cur": "EUR", "seatbid": [{"bid": [{"id": "b", "impid": "i", "price": 1}]}]}
    response, errors = bids({"imp": imps}, body)
    assert errors == []
    assert response.currency == "EUR"
    assert [b.bid_type for b in response.bids] == [want]


def test_bid_for_unknown_imp_fails_the_answer():
    body = {"seatbid": [{"bid": [{"id": "ok", "impid": "i", "price": 1}, {"id": "x", "impid": "a", "price": 1}]}]}
    response, errors = bids({"imp": [imp(), imp("a", audio={})]}, body)
    assert response is None
    assert [(e.message, e.code) for e in errors] == [
        ("The impression with ID a is not present into the request", ErrorCode.BAD_SERVER_RESPONSE)
    ]
