"""The pubmatic adapter on requests and answers of our own (no PBS fixtures needed)."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from hbserver.adapters import pubmatic
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestData, RequestInfo, ResponseData

ENDPOINT = "https://openbid.example/translator?source=prebid-server"
CONFIG = AdapterConfig("pubmatic", ENDPOINT)
INFO = RequestInfo(bidder="pubmatic", adapter_code="pubmatic")


def imp(imp_id: str = "imp-1", media: dict[str, Any] | None = None, **params: Any) -> dict[str, Any]:
    media = media if media is not None else {"banner": {"format": [{"w": 728, "h": 90}]}}
    return {"id": imp_id, **media, "ext": {"bidder": {"publisherId": "156", **params}}}


def request(*imps: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"id": "req-1", "imp": list(imps) or [imp()], "site": {"page": "p", "publisher": {"id": "ours"}}, **fields}


def build(req: dict[str, Any], info: RequestInfo = INFO):
    calls, errors = pubmatic.build(CONFIG).make_requests(req, info)
    return [orjson.loads(c.body) for c in calls], [e.message for e in errors], calls


def sent_imp(req: dict[str, Any]) -> dict[str, Any]:
    (body,), errors, _ = build(req)
    assert errors == []
    return body["imp"][0]


def test_one_request_for_all_imps():
    bodies, errors, calls = build(request(imp("a"), imp("b", {"video": {"mimes": ["video/mp4"]}})))
    assert errors == []
    assert len(bodies) == 1
    assert calls[0].uri == ENDPOINT
    assert calls[0].imp_ids == ["a", "b"]
    assert bodies[0]["site"]["publisher"] == {"id": "156"}


def test_no_endpoint_is_an_error():
    calls, errors = pubmatic.build(AdapterConfig("pubmatic", "")).make_requests(request(), INFO)
    assert calls == []
    assert errors[0].code == ErrorCode.BAD_INPUT


@pytest.mark.parametrize(("ad_slot", "tagid", "size"), [
    ("", None, (728, 90)),
    ("slot-1", "slot-1", (728, 90)),
    ("slot-1@300x250", "slot-1", (300, 250)),
    (" slot-1 @ 300X250:2 ", "slot-1", (300, 250)),
    ("slot-1@0x0", "slot-1", (0, 0)),
])
def test_ad_slot_sets_tag_id_and_banner_size(ad_slot, tagid, size):
    sent = sent_imp(request(imp(adSlot=ad_slot)))
    assert sent.get("tagid") == tagid
    assert (sent["banner"]["w"], sent["banner"]["h"]) == size


@pytest.mark.parametrize(("ad_slot", "message"), [
    ("slot@", "Invalid adSlot slot@"),
    ("a@b@c", "Invalid adSlot a@b@c"),
    ("slot@300", "Invalid size provided in adSlot slot@300"),
    ("slot@ax250", "Invalid width provided in adSlot slot@ax250"),
    ("slot@300xb", "Invalid height provided in adSlot slot@300xb"),
    ("slot@300x", "Invalid height provided in adSlot slot@300x"),
])
def test_bad_ad_slot_drops_the_imp(ad_slot, message):
    _, errors, calls = build(request(imp("bad", adSlot=ad_slot), imp("good")))
    assert errors == [message]
    assert calls[0].imp_ids == ["good"]


def test_no_valid_imp_means_no_request():
    bodies, errors, _ = build(request(imp("bad", adSlot="slot@")))
    assert (bodies, errors) == ([], ["Invalid adSlot slot@"])


@pytest.mark.parametrize(("media", "error"), [
    ({"audio": {"mimes": ["audio/mp3"]}},
     "invalid MediaType. PubMatic only supports Banner, Video and Native. Ignoring ImpID=imp-1"),
    ({"native": {"request": "{}"}}, None),
])
def test_media_types(media, error):
    _, errors, _ = build(request(imp(media=media)))
    assert errors == ([error] if error else [])


def test_audio_is_removed_from_a_multi_format_imp():
    sent = sent_imp(request(imp(media={"banner": {"w": 1, "h": 1}, "audio": {"mimes": ["audio/mp3"]}})))
    assert "audio" not in sent


@pytest.mark.parametrize(("kadfloor", "bidfloor", "expected"), [
    ("0.5", None, 0.5),
    (" 0.5 ", 0.7, 0.7),
    ("0.9", 0.7, 0.9),
    ("abc", 0.7, 0.7),
    ("", None, None),
])
def test_kadfloor_is_the_floor_when_higher(kadfloor, bidfloor, expected):
    item = imp(kadfloor=kadfloor) | ({"bidfloor": bidfloor} if bidfloor is not None else {})
    assert sent_imp(request(item)).get("bidfloor") == expected


def test_targeting_params_and_first_party_data_go_to_imp_ext():
    item = imp(keywords=[{"key": "pmZoneID", "value": ["z1", "z2"]}, {"key": "genre", "value": ["news"]},
                         {"key": "empty", "value": []}],
               dctr="k1=v1", pmzoneid="zone")
    item["ext"] |= {"data": {"pbadslot": "/pb", "sport": [" rugby ", "golf"], "obj": {}, "n": 3, "big": 1234567},
                    "gpid": "/gpid", "ae": 1, "skadn": {"version": "2.0"}}
    assert sent_imp(request(item))["ext"] == {
        "pmZoneId": "zone",  # the pmzoneid param wins over the pmZoneID keyword
        "genre": "news",
        "key_val": "k1=v1|sport=rugby,golf||n=3|big=1.234567e+06",  # Go's separator before a skipped value
        "dfp_ad_unit_code": "/pb",
        "ae": 1,
        "gpid": "/gpid",
        "skadn": {"version": "2.0"},
    }


def test_imp_without_targeting_has_no_ext():
    assert "ext" not in sent_imp(request(imp()))


def test_wrapper_from_request_params_is_completed_by_imps():
    req = request(imp("a", wrapper={"profile": 9, "version": 4}), ext={"prebid": {
        "bidderparams": {"wrapper": {"profile": 5}, "acat": [" IAB1 ", "IAB2"]},
        "alternatebiddercodes": {"enabled": True, "bidders": {"pubmatic": {"enabled": True,
                                                                           "allowedbiddercodes": ["groupm"]}}},
    }})
    (body,), _, _ = build(req)
    assert body["ext"] == {
        "wrapper": {"profile": 5, "version": 4, "biddercode": "pubmatic"},
        "acat": ["IAB1", "IAB2"],
        "marketplace": {"allowedbidders": ["pubmatic", "groupm"]},
    }


@pytest.mark.parametrize(("ext", "info", "expected"), [
    (None, INFO, {"wrapper": {"profile": 1, "version": 2}}),
    ({}, INFO, {"wrapper": {"profile": 1, "version": 2, "biddercode": "pubmatic"}}),
    ({"prebid": {"aliases": {"pm-alias": "pubmatic"}}}, INFO,
     {"wrapper": {"profile": 1, "version": 2, "biddercode": "pm-alias"}}),
    ({}, RequestInfo(bidder="pm2", adapter_code="pubmatic"),
     {"wrapper": {"profile": 1, "version": 2, "biddercode": "pm2"}}),
])
def test_bidder_code_in_wrapper(ext, info, expected):
    req = request(imp(wrapper={"profile": 1, "version": 2}))
    if ext is not None:
        req["ext"] = ext
    (body,), _, _ = build(req, info)
    assert body["ext"] == expected


def test_bad_request_ext_fails_the_request():
    bodies, errors, _ = build(request(ext={"prebid": "x"}))
    assert bodies == []
    assert errors[0].startswith("error decoding Request.ext : ")


def test_publisher_id_is_the_first_trimmed_one_and_app_gets_it_without_site():
    req = request(imp("a", publisherId=" 77 "), imp("b", publisherId="88"))
    del req["site"]
    req["app"] = {"bundle": "b", "ext": {"prebid": {"source": "sdk", "version": "1.0"}}}
    (body,), _, _ = build(req)
    assert body["app"]["publisher"] == {"id": "77"}
    assert [(i["displaymanager"], i["displaymanagerver"]) for i in body["imp"]] == [("sdk", "1.0")] * 2


def test_request_is_not_changed():
    req = request(imp(adSlot="s@1x1", kadfloor="1", keywords=[{"key": "k", "value": ["v"]}],
                      media={"banner": {"format": [{"w": 1, "h": 1}]}, "audio": {}}),
                  ext={"prebid": {"bidderparams": {"acat": ["a"]}}})
    before = copy.deepcopy(req)
    build(req)
    assert req == before


# --- bids ---------------------------------------------------------------------------------------

CALL = RequestData("POST", ENDPOINT, b"{}")
BID = {"id": "b1", "impid": "imp-1", "price": 1.0, "adm": "<div/>", "ext": {}}


def make_bids(body: Any, status: int = 200):
    raw = orjson.dumps(body) if isinstance(body, dict) else (body or b"")
    return pubmatic.build(CONFIG).make_bids(request(), CALL, ResponseData(status, raw))


@pytest.mark.parametrize(("status", "code"), [(400, ErrorCode.BAD_INPUT), (503, ErrorCode.BAD_SERVER_RESPONSE)])
def test_error_statuses(status, code):
    response, errors = make_bids(b"", status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == [
        (f"Unexpected status code: {status}. Run with request.debug = 1 for more info", code)]


def test_no_content_is_no_bid():
    assert make_bids(b"", 204) == (None, [])


@pytest.mark.parametrize(("mtype", "kind"), [(1, "banner"), (2, "video"), (3, "audio"), (4, "native")])
def test_bid_type_is_mtype(mtype, kind):
    adm = '{"assets":[]}' if kind == "native" else "<div/>"
    response, errors = make_bids({"seatbid": [{"bid": [BID | {"mtype": mtype, "adm": adm}]}]})
    assert errors == []
    assert [b.bid_type for b in response.bids] == [kind]


def test_bid_without_mtype_is_dropped():
    response, errors = make_bids({"seatbid": [{"bid": [BID | {"mtype": 7}, BID | {"id": "ok", "mtype": 1}]}]})
    assert [b.bid["id"] for b in response.bids] == ["ok"]
    assert [e.message for e in errors] == ["failed to parse bid mtype (7) for impression id imp-1"]


def test_bid_ext_gives_seat_deal_priority_video_and_meta():
    bid = BID | {"mtype": 2, "cat": ["IAB1", "IAB2"],
                 "ext": {"marketplace": "groupm", "prebiddealpriority": 3, "video": {"duration": 15}, "ibv": True}}
    response, errors = make_bids({"cur": "EUR", "seatbid": [{"bid": [bid]}]})
    (typed,) = response.bids
    assert errors == []
    assert response.currency == "EUR"
    assert (typed.seat, typed.deal_priority) == ("groupm", 3)
    assert typed.bid_video == {"duration": 15, "primary_category": ""}
    assert typed.bid_meta == {"mediaType": "video"}
    assert typed.bid["cat"] == ["IAB1"]
    assert bid["cat"] == ["IAB1", "IAB2"]  # the parsed answer itself is left alone


def test_bid_without_ext_is_kept_with_an_error():
    bid = {k: v for k, v in BID.items() if k != "ext"} | {"mtype": 1}
    response, errors = make_bids({"seatbid": [{"bid": [bid]}]})
    assert len(response.bids) == 1
    assert errors[0].message.startswith("expect { or n, but found")


@pytest.mark.parametrize(("adm", "expected", "error"), [
    ('{"native":{"assets":[],"link":{"url":"\\/\\/x"}}}', '{"assets":[],"link":{"url":"\\/\\/x"}}', None),
    ('{"native" : "text"}', "text", None),
    ('{"assets":[]}', '{"assets":[]}', None),
    ("{", "{", "unable to unmarshal native adm"),
    ("[1]", "[1]", "unable to unmarshal native adm"),
])
def test_native_markup_is_unwrapped_byte_for_byte(adm, expected, error):
    response, errors = make_bids({"seatbid": [{"bid": [BID | {"mtype": 4, "adm": adm}]}]})
    assert response.bids[0].bid["adm"] == expected
    assert [e.message for e in errors] == ([error] if error else [])


def test_fledge_auction_configs():
    config = {"seller": "https://s.example"}
    response, _ = make_bids({"seatbid": [], "ext": {"fledge_auction_configs": {"imp-1": config}}})
    assert response.fledge_auction_configs == [{"impid": "imp-1", "config": config}]
    response, _ = make_bids({"seatbid": []})
    assert response.fledge_auction_configs is None
