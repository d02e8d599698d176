"""GumGum adapter: site id and publisher from params, imp changes, errors, bid typing and the price macro."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.gumgum import build
from tests.adapters.helpers import bids_for, imp_with, requests_of

ENDPOINT = "https://g2.gumgum.com/providers/prbds2s/bid"
INFO = RequestInfo(bidder="gumgum")
PARAMS = {"zone": "zone1234"}
MEDIA = {"banner": {"w": 300, "h": 250}}  # an imp's media unless the test names its own


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    return imp_with(imp_id, PARAMS if params is None else params, fields, MEDIA)


def run(request: dict):
    calls, bodies, errors = requests_of(build(AdapterConfig("gumgum", ENDPOINT)), request, INFO)
    assert all(call.uri == ENDPOINT for call in calls)
    return calls, bodies, [e.message for e in errors]


@pytest.mark.parametrize(
    ("imps", "site", "want_site"),
    [
        ([imp(params={"zone": "z1"}), imp("j", {"zone": "z2"})], {"page": "p"}, {"page": "p", "id": "z2"}),
        ([imp(params={"zone": "z1"}), imp("j", {"pubId": 5})], {}, {"id": "z1", "publisher": {"id": "5"}}),
        ([imp(params={"pubId": 7})], {"publisher": {"name": "n", "id": "x"}}, {"publisher": {"name": "n", "id": "7"}}),
        ([imp(params={"pubId": 7.25})], {}, {"publisher": {"id": "7.25"}}),
    ],
)
def test_last_zone_and_pub_id_go_to_the_site(imps, site, want_site):
    _, bodies, errors = run({"id": "r", "imp": imps, "site": site})
    assert errors == []
    assert bodies[0]["site"] == want_site


def test_app_request_keeps_its_publisher():
    _, bodies, _ = run({"id": "r", "imp": [imp(params={"zone": "z", "pubId": 3})], "app": {"id": "a"}})
    assert bodies[0]["app"] == {"id": "a"}
    assert "site" not in bodies[0]


@pytest.mark.parametrize(
    ("fields", "params", "want"),
    [
        ({"ext": {"bidder": {"zone": "z"}, "prebid": {"adunitcode": "slot-1"}}}, None, {"tagid": "slot-1"}),
        ({"ext": {"bidder": {"zone": "z"}, "prebid": {"adunitcode": 5}}, "tagid": "t"}, None, {"tagid": "t"}),
        ({}, {"zone": "z", "product": "skins"}, {"ext": {"product": "skins"}}),
        (
            {"video": {"mimes": ["v"]}},
            {"zone": "z", "irisid": "iris"},
            {"video": {"mimes": ["v"], "ext": {"irisid": "iris"}}},
        ),
        (
            {"banner": {"format": [{"w": 300, "h": 250}]}},
            None,
            {"banner": {"format": [{"w": 300, "h": 250}], "w": 300, "h": 250}},
        ),
        (
            {"banner": {"format": [{"w": 728, "h": 90}, {"w": 300, "h": 600}], "ext": {"x": 1}}},
            {"zone": "z", "slot": 9},
            {
                "banner": {
                    "format": [{"w": 728, "h": 90}, {"w": 300, "h": 600}],
                    "w": 728,
                    "h": 90,
                    "ext": {"si": 9, "maxw": 728, "maxh": 90},
                }
            },
        ),
        (
            {"banner": {"format": [{"w": 300, "h": 250}], "w": 1}},
            {"zone": "z", "slot": 9},
            {"banner": {"format": [{"w": 300, "h": 250}], "w": 1}},
        ),
    ],
)
def test_imp_changes(fields, params, want):
    _, bodies, errors = run({"id": "r", "imp": [imp(params=params, **fields)], "site": {}})
    assert errors == []
    sent = bodies[0]["imp"][0]
    for key, value in want.items():
        assert sent.get(key) == value, key


@pytest.mark.parametrize(
    ("bad", "want_error"),
    [
        (imp(ext="aaa"), 'expect { or n, but found "'),
        (imp(params={"zone": 5}), 'cannot unmarshal openrtb_ext.ExtImpGumGum.Zone: expects " or n, but found 5'),
        (imp(params="x"), 'expect { or n, but found "'),
    ],
)
def test_bad_params_skip_the_imp(bad, want_error):
    calls, _, errors = run({"id": "r", "imp": [bad, imp("ok")]})
    assert errors == [want_error]
    assert [call.imp_ids for call in calls] == [["ok"]]
    calls, _, errors = run({"id": "r", "imp": [bad]})
    assert (calls, errors) == ([], [want_error])


REQUEST = {
    "id": "r",
    "imp": [{"id": "b", "banner": {}}, {"id": "v", "video": {}}, {"id": "bv", "banner": {}, "video": {}}],
}


def bids_of(body: Any, status: int = 200):
    return bids_for(build(AdapterConfig("gumgum", ENDPOINT)), REQUEST, body, status)


@pytest.mark.parametrize(
    ("impid", "price", "want_type", "want_adm"),
    [
        ("b", 1.5, "banner", "p=${AUCTION_PRICE}"),
        ("bv", 1.5, "banner", "p=${AUCTION_PRICE}"),
        ("v", 1.5, "video", "p=1.5"),
        ("v", 2, "video", "p=2"),
        ("unknown", 0.25, "video", "p=0.25"),
    ],
)
def test_bid_type_and_price_macro(impid, price, want_type, want_adm):
    bid = {"id": "x", "impid": impid, "price": price, "adm": "p=${AUCTION_PRICE}"}
    response, errors = bids_of({"seatbid": [{"bid": [bid]}]})
    assert errors == []
    assert response.currency == "USD"
    assert (response.bids[0].bid_type, response.bids[0].bid["adm"]) == (want_type, want_adm)


def test_currency_from_the_answer():
    response, _ = bids_of({"cur": "EUR", "seatbid": []})
    assert (response.currency, response.bids) == ("EUR", [])


@pytest.mark.parametrize(
    ("status", "want"),
    [
        (400, ("Bad user input: HTTP status 400", ErrorCode.BAD_INPUT)),
        (500, ("Bad server response: HTTP status 500", ErrorCode.BAD_SERVER_RESPONSE)),
    ],
)
def test_failure_statuses(status, want):
    response, errors = bids_of(b"", status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == [want]


def test_no_content_and_bad_body():
    assert bids_of(b"", 204) == (None, [])
    response, errors = bids_of(b"[1]")
    assert response is None
    assert errors[0].message.startswith("Bad server response: ")
    assert errors[0].code == ErrorCode.BAD_SERVER_RESPONSE
