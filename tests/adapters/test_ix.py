"""The ix (Index Exchange) adapter on requests and answers of our own (no PBS fixtures needed)."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from hbserver.adapters import ix
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestData, RequestInfo, ResponseData

ENDPOINT = "https://ix.example/pbs"
CONFIG = AdapterConfig("ix", ENDPOINT, {"pbs_version": "3.1.0-g4ee257d8"})
INFO = RequestInfo(bidder="ix", adapter_code="ix")


def imp(imp_id: str = "imp-1", media: dict[str, Any] | None = None, **params: Any) -> dict[str, Any]:
    media = media if media is not None else {"banner": {"format": [{"w": 300, "h": 250}]}}
    return {"id": imp_id, **media, "ext": {"bidder": params or {"siteId": "100"}}}


def request(*imps: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"id": "req-1", "imp": list(imps) or [imp()], "site": {"page": "p"}, **fields}


def build(req: dict[str, Any], config: AdapterConfig = CONFIG):
    calls, errors = ix.build(config).make_requests(req, INFO)
    return [orjson.loads(c.body) for c in calls], [e.message for e in errors], calls


def test_one_request_for_all_imps():
    bodies, errors, calls = build(request(imp("a"), imp("b", {"video": {"mimes": ["video/mp4"]}})))
    assert errors == []
    assert len(bodies) == 1
    assert (calls[0].uri, calls[0].imp_ids) == (ENDPOINT, ["a", "b"])


def test_no_endpoint_is_an_error():
    calls, errors = ix.build(AdapterConfig("ix", "")).make_requests(request(), INFO)
    assert calls == []
    assert errors[0].code == ErrorCode.BAD_INPUT


@pytest.mark.parametrize("spelling", ["siteId", "siteid", "siteID"])
def test_site_id_spellings_become_the_publisher_id(spelling):
    (body,), errors, _ = build(request(imp(**{spelling: "569749"})))
    assert errors == []
    assert body["site"]["publisher"] == {"id": "569749"}


def test_several_site_ids_are_reported_not_chosen():
    req = request(imp("a", siteId="2"), imp("b", siteId="1"), imp("c", siteId="2"))
    req["app"] = {"bundle": "b", "publisher": {"name": "n"}}
    (body,), _, _ = build(req)
    assert body["site"]["publisher"] == {}
    assert body["app"]["publisher"] == {"name": "n"}
    assert body["ext"]["ixdiag"]["multipleSiteIds"] == "1, 2"


def test_sid_is_copied_to_imp_ext():
    (body,), _, _ = build(request(imp(siteId="1", sid="slot-9")))
    assert body["imp"][0]["ext"] == {"bidder": {"siteId": "1", "sid": "slot-9"}, "sid": "slot-9"}


@pytest.mark.parametrize(
    ("ext", "message"),
    [
        (
            {"bidder": {"siteId": "1", "sid": 5}},
            'cannot unmarshal openrtb_ext.ExtImpIx.Sid: expects " or n, but found 5',
        ),
        ({"bidder": {"siteId": 1}}, 'cannot unmarshal openrtb_ext.ExtImpIx.SiteId: expects " or n, but found 1'),
        ({"prebid": 1, "bidder": {}}, "cannot unmarshal adapters.ExtImpBidder.Prebid: expect { or n, but found 1"),
        ({}, "expect { or n, but found \x00"),
        ({"bidder": "x"}, 'expect { or n, but found "'),
    ],
)
def test_bad_params_drop_the_imp(ext, message):
    bad = {"id": "bad", "banner": {"w": 1, "h": 1}, "ext": ext}
    _, errors, calls = build(request(bad, imp("good")))
    assert errors == [message]
    assert calls[0].imp_ids == ["good"]


@pytest.mark.parametrize(
    ("banner", "expected"),
    [
        ({"w": 300, "h": 250}, {"w": 300, "h": 250, "format": [{"w": 300, "h": 250}]}),
        ({"format": [{"w": 300, "h": 600}]}, {"format": [{"w": 300, "h": 600}], "w": 300, "h": 600}),
        ({"format": [{"w": 1, "h": 2}, {"w": 3, "h": 4}]}, {"format": [{"w": 1, "h": 2}, {"w": 3, "h": 4}]}),
        ({"w": 300}, {"w": 300}),
    ],
)
def test_banner_sizes(banner, expected):
    (body,), _, _ = build(request(imp(media={"banner": banner})))
    assert body["imp"][0]["banner"] == expected


@pytest.mark.parametrize(("version", "pbsv"), [("3.1.0-g4ee257d8", "3.1.0"), ("3.1.0", "3.1.0"), ("", "unknown")])
def test_ixdiag_reports_versions(version, pbsv):
    req = request(ext={"prebid": {"channel": {"name": "web", "version": "9.1"}}, "ixdiag": {"ren": False}, "other": 1})
    (body,), _, _ = build(req, AdapterConfig("ix", ENDPOINT, {"pbs_version": version}))
    assert body["ext"] == {
        "prebid": {"channel": {"name": "web", "version": "9.1"}},
        "ixdiag": {"ren": False, "pbjsv": "9.1", "pbsv": pbsv, "pbsp": "go"},
    }


def test_bad_request_ext_is_an_error_but_the_request_goes():
    bodies, errors, _ = build(request(ext={"ixdiag": [1]}))
    assert errors == ["expect { or n, but found ["]
    assert bodies[0]["ext"] == {"ixdiag": [1]}


def test_no_imps_no_request():
    assert build(request() | {"imp": []})[:2] == ([], [])


def test_request_is_not_changed():
    req = request(
        imp(siteId="1", sid="s", media={"banner": {"w": 1, "h": 2}}),
        imp("b", siteId="2"),
        ext={"ixdiag": {"a": 1}, "prebid": {"channel": {"version": "1"}}},
        app={"publisher": {"id": "x"}},
    )
    before = copy.deepcopy(req)
    build(req)
    assert req == before


# --- bids ---------------------------------------------------------------------------------------

CALL = RequestData("POST", ENDPOINT, b"{}")
BID = {"id": "b1", "impid": "imp-1", "price": 1.0, "adm": "<div/>"}


def make_bids(body: Any, status: int = 200, req: dict[str, Any] | None = None):
    raw = orjson.dumps(body) if isinstance(body, dict) else (body or b"")
    return ix.build(CONFIG).make_bids(req or request(), CALL, ResponseData(status, raw))


@pytest.mark.parametrize(("status", "code"), [(400, ErrorCode.BAD_INPUT), (404, ErrorCode.BAD_SERVER_RESPONSE)])
def test_error_statuses(status, code):
    response, errors = make_bids(b"", status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == [
        (f"Unexpected status code: {status}. Run with request.debug = 1 for more info", code)
    ]


def test_no_content_is_no_bid():
    assert make_bids(b"", 204) == (None, [])


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"id": 1}, 'JSON parsing error: cannot unmarshal openrtb2.BidResponse.ID: expects " or n, but found 1'),
        (
            {"seatbid": {}},
            "JSON parsing error: cannot unmarshal openrtb2.BidResponse.SeatBid: expect [ or n, but found {",
        ),
    ],
)
def test_malformed_answers(body, message):
    response, errors = make_bids(body)
    assert response is None
    assert [e.message for e in errors] == [message]


MULTI = imp(media={"banner": {"w": 1, "h": 1}, "video": {"mimes": ["video/mp4"]}})


@pytest.mark.parametrize(
    ("bid", "kind"),
    [
        (BID | {"mtype": 2}, "video"),
        (BID | {"ext": {"prebid": {"type": "native"}}}, "native"),
        (BID, "banner"),  # the imp's first media type: banner, video, native, audio
    ],
)
def test_bid_type(bid, kind):
    response, errors = make_bids({"seatbid": [{"bid": [bid]}]}, req=request(MULTI))
    assert errors == []
    assert [b.bid_type for b in response.bids] == [kind]


@pytest.mark.parametrize(
    ("bid", "message"),
    [
        (BID | {"impid": "nope"}, "unmatched impression id: nope"),
        (BID | {"ext": {"prebid": {"type": "popup"}}}, "invalid BidType: popup"),
    ],
)
def test_untypable_bid_is_dropped_with_an_error(bid, message):
    response, errors = make_bids({"cur": "USD", "seatbid": [{"bid": [bid]}]})
    assert (response.bids, [e.message for e in errors]) == ([], [message])


def test_video_bid_duration_and_category():
    bid = BID | {"mtype": 2, "ext": {"prebid": {"video": {"duration": 30, "primary_category": "IAB1"}}}}
    response, _ = make_bids({"seatbid": [{"bid": [bid]}]})
    (typed,) = response.bids
    assert typed.bid_video == {"duration": 30, "primary_category": ""}
    assert typed.bid["cat"] == ["IAB1"]


IMP_PIXEL = {"event": 1, "method": 1, "url": "https://t.example/imp?a=1&b=<x>"}
JS_TRACKER = {"event": 1, "method": 2, "url": "https://t.example/js"}


@pytest.mark.parametrize(
    ("adm", "expected"),
    [
        (
            orjson.dumps(
                {
                    "assets": [{"id": 1, "title": {"text": "T"}, "unknown": 1}],
                    "imptrackers": ["https://a"],
                    "eventtrackers": [JS_TRACKER, IMP_PIXEL],
                }
            ).decode(),
            '{"assets":[{"id":1,"title":{"text":"T"}}],"link":{"url":""},'
            '"imptrackers":["https://a","https://t.example/imp?a=1&b=<x>"],'
            '"eventtrackers":[{"event":1,"method":2,"url":"https://t.example/js"},'
            '{"event":1,"method":1,"url":"https://t.example/imp?a=1&b=<x>"}]}',
        ),
        (
            orjson.dumps({"native": {"link": {"url": "u"}, "eventtrackers": [IMP_PIXEL]}}).decode(),
            '{"native":{"link":{"url":"u"},"imptrackers":["https://t.example/imp?a=1&b=<x>"],'
            '"eventtrackers":[{"event":1,"method":1,"url":"https://t.example/imp?a=1&b=<x>"}]}}',
        ),
        ('{"native":{"eventtrackers":[]}}', '{"native":{"eventtrackers":[]}}'),
        (
            '{"assets":[{"id":"not-int"}],"eventtrackers":[{"event":1,"method":1}]}',
            '{"assets":[{"id":"not-int"}],"eventtrackers":[{"event":1,"method":1}]}',
        ),
        ("<div/>", "<div/>"),
    ],
)
def test_native_event_trackers_are_mirrored_into_imptrackers(adm, expected):
    response, errors = make_bids({"seatbid": [{"bid": [BID | {"mtype": 4, "adm": adm}]}]})
    assert errors == []
    assert response.bids[0].bid["adm"] == expected


def test_fledge_configs():
    config = {"seller": "https://s.example"}
    body = {
        "seatbid": [],
        "ext": {"protectedAudienceAuctionConfigs": [{"bidId": "imp-1", "config": config}, {"bidId": "imp-2"}]},
    }
    response, errors = make_bids(body)
    assert errors == []
    assert response.fledge_auction_configs == [{"impid": "imp-1", "config": config}]
    response, _ = make_bids({"seatbid": []})
    assert response.fledge_auction_configs is None


def test_bad_fledge_config_fails_the_answer():
    body = {"seatbid": [{"bid": [BID]}], "ext": {"protectedAudienceAuctionConfigs": [{"bidId": 1, "config": {}}]}}
    response, errors = make_bids(body)
    assert response is None
    assert [e.message for e in errors] == ['cannot unmarshal ix.auctionConfig.BidId: expects " or n, but found 1']
