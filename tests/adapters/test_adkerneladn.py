"""AdKernel ADN adapter: imps checked, one media type each, grouped by publisher; the answer's one
seatbid, bids typed by their imp (banner, else video)."""

from __future__ import annotations

import pytest

from hbserver.adapters.adkerneladn import build
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "https://pbs2.adksrv.com/rtbpub?account={{.PublisherID}}"


def adapter():
    return build(AdapterConfig("adkernelAdn", ENDPOINT))


def imp(imp_id, pub=1, **media):
    return {"id": imp_id, **(media or {"banner": {"w": 1, "h": 2}}), "ext": {"bidder": {"pubId": pub}}}


def test_one_call_per_publisher_without_publisher_and_domain():
    request = {
        "id": "r",
        "site": {"domain": "d", "page": "p", "publisher": {"id": "x"}},
        "imp": [imp("a", 1), imp("b", 2, video={"mimes": ["v"]}), imp("c", 1, video={}, native={"request": ""})],
    }
    calls, bodies, errors = requests_of(adapter(), request, RequestInfo(bidder="adkernelAdn"))
    assert errors == []
    assert [(c.uri, c.imp_ids) for c in calls] == [
        ("https://pbs2.adksrv.com/rtbpub?account=1", ["a", "c"]),
        ("https://pbs2.adksrv.com/rtbpub?account=2", ["b"]),
    ]
    assert dict(calls[0].headers)["X-Openrtb-Version"] == "2.5"
    assert bodies[0]["site"] == {"page": "p"}
    assert bodies[0]["imp"] == [{"id": "a", "banner": {"w": 1, "h": 2}}, {"id": "c", "video": {"mimes": None}}]


@pytest.mark.parametrize(
    ("banner", "want"),
    [
        ({"format": [{"w": 3, "h": 4}, {"w": 5, "h": 6}]}, {"format": [{"w": 5, "h": 6}], "w": 3, "h": 4}),
        ({"format": [{"w": 3, "h": 4}]}, {"w": 3, "h": 4}),
        ({"w": 0, "format": [{"w": 3, "h": 4}]}, {"w": 0, "format": [{"w": 3, "h": 4}]}),  # one size set: kept
    ],
)
def test_banner_sized_from_its_first_format(banner, want):
    request = {"imp": [{"id": "a", "banner": banner, "video": {}, "ext": {"bidder": {"pubId": 7}}}]}
    _, bodies, errors = requests_of(adapter(), request, RequestInfo(bidder="adkernelAdn"))
    assert errors == []
    assert bodies[0]["imp"] == [{"id": "a", "banner": want}]


@pytest.mark.parametrize(
    ("bad", "want"),
    [
        (imp("x", 0), "Invalid pubId value. Ignoring imp id=x"),
        (imp("x", native={}), "Invalid imp with id=x. Expected imp.banner or imp.video"),
        (imp("x", banner={}), "Expected at least one banner.format entry or explicit w/h"),
        ({"id": "x", "banner": {}, "ext": {"bidder": {"pubId": "1"}}}, "cannot unmarshal"),
        ({"id": "x", "banner": {}}, "expect { or n"),
    ],
)
def test_a_bad_imp_is_left_out(bad, want):
    calls, _, errors = requests_of(adapter(), {"imp": [bad, imp("a")]}, RequestInfo(bidder="adkernelAdn"))
    assert [c.imp_ids for c in calls] == [["a"]]
    assert [e.code for e in errors] == [ErrorCode.BAD_INPUT]
    assert errors[0].message.startswith(want)


def test_no_imps():
    calls, _, errors = requests_of(adapter(), {"imp": []}, RequestInfo(bidder="adkernelAdn"))
    assert (calls, [e.message for e in errors]) == ([], ["No impression in the bid request"])


def test_bids_typed_by_their_imp():
    request = {"imp": [imp("b"), imp("v", video={})]}
    bids = [{"id": i, "impid": i, "price": 1} for i in ("b", "v", "other")]
    response, errors = bids_for(adapter(), request, {"cur": "EUR", "seatbid": [{"bid": bids}]})
    assert errors == []
    assert response.currency == "USD"
    assert [(b.bid["id"], b.bid_type) for b in response.bids] == [("b", "banner"), ("v", "video"), ("other", "video")]


@pytest.mark.parametrize(
    ("status", "body", "want"),
    [
        (204, b"", []),
        (400, b"", [(ErrorCode.BAD_SERVER_RESPONSE, "Unexpected http status code: 400")]),
        (200, {"seatbid": []}, [(ErrorCode.BAD_SERVER_RESPONSE, "Invalid SeatBids count: 0")]),
        (200, {"seatbid": [{}, {}]}, [(ErrorCode.BAD_SERVER_RESPONSE, "Invalid SeatBids count: 2")]),
    ],
)
def test_failed_answers(status, body, want):
    response, errors = bids_for(adapter(), {"imp": [imp("a")]}, body, status)
    assert response is None
    assert [(e.code, e.message) for e in errors] == want
