"""Smart AdServer adapter: endpoint building, the equativ alias, params errors, the site and
publisher it always sends, and bid typing by mtype."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestData, RequestInfo, ResponseData
from hbserver.adapters.smartadserver import build, endpoint_url
from tests.adapters.helpers import requests_of

ENDPOINT = "https://ssb-global.smartadserver.com"
PARAMS = {"siteId": 1, "pageId": 2, "formatId": 3, "networkId": 73}
OUT = {"siteId": 1, "pageId": 2, "formatId": 3, "networkId": 73}


def imp(imp_id: str = "i", params: Any = PARAMS, **fields: Any) -> dict:
    return {"id": imp_id, "banner": {"w": 300, "h": 250}, "ext": {"bidder": params}, **fields}


def run(request: dict, endpoint: str = ENDPOINT, bidder: str = "smartadserver"):
    adapter = build_adapter("smartadserver", AdapterConfig(bidder, endpoint))
    calls, bodies, errors = requests_of(adapter, request, RequestInfo(bidder=bidder, adapter_code="smartadserver"))
    return calls, bodies, [e.message for e in errors]


@pytest.mark.parametrize(
    ("host", "guaranteed", "want"),
    [
        ("https://ssb.smartadserver.com", False, "https://ssb.smartadserver.com/api/bid?callerId=5"),
        ("https://ssb.smartadserver.com/", False, "https://ssb.smartadserver.com/api/bid?callerId=5"),
        ("https://h.example/x/", False, "https://h.example/x/api/bid?callerId=5"),
        ("https://h.example/x?a=1", False, "https://h.example/x/api/bid?callerId=5"),
        ("https://h.example/x?a=1", True, "https://h.example/x/ortb?a=1"),
        ("https://prebid-global.smartadserver.com", True, "https://prebid-global.smartadserver.com/ortb"),
    ],
)
def test_endpoint_url(host, guaranteed, want):
    assert endpoint_url(host, guaranteed) == want


def test_malformed_endpoint_is_an_error_and_no_call():
    calls, _, errors = run({"id": "r", "imp": [imp()]}, endpoint="ssb.smartadserver.com")
    assert calls == []
    assert errors == ["Malformed URL: ssb.smartadserver.com."]


def test_equativ_alias_sends_the_same_call():
    request = {"id": "r", "imp": [imp()]}
    ours = run(request)
    alias = run(request, bidder="equativ")
    assert [c.uri for c in alias[0]] == [c.uri for c in ours[0]] == [f"{ENDPOINT}/api/bid?callerId=5"]
    assert alias[1] == ours[1]


@pytest.mark.parametrize(
    ("request_fields", "site"),
    [
        ({"app": {"bundle": "b", "publisher": {"id": "p"}}}, {"publisher": {"id": "73"}}),
        (
            {"site": {"page": "pg", "publisher": {"id": "1", "name": "n"}}},
            {"page": "pg", "publisher": {"id": "73", "name": "n"}},
        ),
        ({"site": {"page": "pg"}}, {"page": "pg", "publisher": {"id": "73"}}),
    ],
)
def test_site_always_sent_with_network_as_publisher(request_fields, site):
    _, bodies, _ = run({"id": "r", "imp": [imp()], **request_fields})
    assert bodies[0]["site"] == site
    if "app" in request_fields:
        assert bodies[0]["app"] == request_fields["app"]


def test_publisher_is_the_last_valid_imps_network_and_bad_imps_are_dropped():
    imps = [imp("a", {**PARAMS, "networkId": 5}), imp("bad", {"siteId": "1"}), imp("b", {**PARAMS, "networkId": 9})]
    calls, bodies, errors = run({"id": "r", "imp": imps})
    assert errors == ["Error parsing smartadserverExt parameters"]
    assert calls[0].imp_ids == ["a", "b"]
    assert bodies[0]["site"]["publisher"]["id"] == "9"


@pytest.mark.parametrize(
    ("bad_imp", "message"),
    [
        ({"id": "x", "banner": {}}, "Error parsing bidderExt object"),
        ({"id": "x", "banner": {}, "ext": "s"}, "Error parsing bidderExt object"),
        ({"id": "x", "banner": {}, "ext": {"bidder": {}, "prebid": "s"}}, "Error parsing bidderExt object"),
        ({"id": "x", "banner": {}, "ext": {"bidder": None}}, "Error parsing smartadserverExt parameters"),
        ({"id": "x", "banner": {}, "ext": {"bidder": {"networkId": 1.5}}}, "Error parsing smartadserverExt parameters"),
        (
            {"id": "x", "banner": {}, "ext": {"bidder": {"programmaticGuaranteed": 1}}},
            "Error parsing smartadserverExt parameters",
        ),
    ],
)
def test_params_errors(bad_imp, message):
    calls, _, errors = run({"id": "r", "imp": [bad_imp]})
    assert calls == []
    assert errors == [message]


def test_params_replace_bidder_ext_and_keep_other_members():
    params = {"networkId": 4, "programmaticGuaranteed": False, "extra": "x"}
    _, bodies, _ = run({"id": "r", "imp": [imp(params=params, ext={"bidder": params, "gpid": "g"})]})
    assert bodies[0]["imp"][0]["ext"] == {
        "gpid": "g",
        "bidder": {"siteId": 0, "pageId": 0, "formatId": 0, "networkId": 4},
    }


def test_programmatic_guaranteed_moves_every_imp_to_the_smartadserver_key():
    imps = [imp("a"), imp("b", {**PARAMS, "programmaticGuaranteed": True})]
    calls, bodies, _ = run({"id": "r", "imp": imps})
    assert calls[0].uri == "https://prebid-global.smartadserver.com/ortb"
    assert [i["ext"] for i in bodies[0]["imp"]] == [{"smartadserver": OUT}, {"smartadserver": OUT}]


@pytest.mark.parametrize(
    ("mtype", "want"), [(1, "banner"), (2, "video"), (3, "audio"), (4, "native"), (9, "banner"), (None, "banner")]
)
def test_bids_typed_by_mtype(mtype, want):
    bid = {"id": "b", "impid": "i", "price": 1, "w": 0}
    if mtype is not None:
        bid["mtype"] = mtype
    body = orjson.dumps({"seatbid": [{"bid": [bid]}]})
    response, errors = build(AdapterConfig("smartadserver", ENDPOINT)).make_bids(
        {"imp": [imp()]}, RequestData("POST", ENDPOINT), ResponseData(200, body)
    )
    assert errors == []
    assert response.currency == "USD"
    assert [(b.bid_type, "w" in b.bid) for b in response.bids] == [(want, False)]


@pytest.mark.parametrize(
    ("status", "body", "bids", "errors_want"),
    [
        (200, b"null", 0, []),
        (200, b'{"seatbid": null}', 0, []),
        (200, b'"x"', None, ['expect { or n, but found "']),
        (400, b"", None, ["Unexpected status code: 400. Run with request.debug = 1 for more info"]),
        (204, b"", None, []),
    ],
)
def test_answers_without_bids(status, body, bids, errors_want):
    response, errors = build(AdapterConfig("smartadserver", ENDPOINT)).make_bids(
        {"imp": [imp()]}, RequestData("POST", ENDPOINT), ResponseData(status, body)
    )
    assert (None if response is None else len(response.bids)) == bids
    assert [e.message for e in errors] == errors_want
    if status == 400:
        assert errors[0].code == ErrorCode.BAD_INPUT
