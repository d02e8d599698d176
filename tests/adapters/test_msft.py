"""Microsoft adapter: the rules that are its own (extra info, params decoding, request ext, bid ext)."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.msft import build, hb_sources
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "http://any.url"
ADAPTER = build(AdapterConfig("msft", ENDPOINT))
AUCTION = RequestInfo(bidder="msft")


def imp(imp_id: str = "i1", ext: Any = None, **fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"id": imp_id, "banner": {"format": [{"w": 300, "h": 250}]}, **fields}
    out["ext"] = {"bidder": {"placement_id": 1}} if ext is None else ext
    return out


@pytest.mark.parametrize(
    ("extra_info", "want"),
    [
        ("", (5, 6)),
        ("{}", (5, 6)),
        ('{"hb_source": 50, "hb_source_video": 60}', (50, 60)),
        ('{"HB_SOURCE": 7}', (7, 6)),
        ('{"hb_source": 0, "hb_source_video": null}', (5, 6)),
    ],
)
def test_hb_sources(extra_info, want):
    assert hb_sources(extra_info) == want


@pytest.mark.parametrize("extra_info", ["malformed", "[]", '{"hb_source": "5"}', '{"hb_source": 1.5}'])
def test_malformed_extra_info_refuses_the_build(extra_info):
    with pytest.raises(ValueError, match="malformed extra adapter info"):
        build(AdapterConfig("msft", ENDPOINT, {"extra_info": extra_info}))


@pytest.mark.parametrize(
    ("entry_point", "want"),
    [("openrtb2-auction", {"hb_source": 5}), ("openrtb2-amp", {"hb_source": 5, "is_amp": 1}),
     ("openrtb2-video", {"hb_source": 6})],
)  # fmt: skip
def test_hb_source_by_entry_point(entry_point, want):
    _, bodies, _ = requests_of(ADAPTER, {"id": "r", "imp": [imp()]}, RequestInfo("msft", entry_point=entry_point))
    assert bodies[0]["ext"]["appnexus"] == want


@pytest.mark.parametrize(
    ("ext", "want_error"),
    [
        ({"bidder": {"placement_id": "1"}}, True),
        ({"bidder": {"member": 1.5}}, True),
        ({"bidder": {"banner_frameworks": ["1"]}}, True),
        ({"bidder": {"use_pmt_rule": "yes"}}, True),
        ({"bidder": "x"}, True),
        ({"bidder": {"placement_id": 1}, "gpid": 3}, True),
        ("x", True),
        ({"bidder": {"placement_id": None, "inv_code": None}}, False),
        ({"bidder": None}, False),
        ({"BIDDER": {"PLACEMENT_ID": 2}}, False),
    ],
)
def test_imp_ext_that_does_not_decode_is_dropped(ext, want_error):
    calls, _, errors = requests_of(ADAPTER, {"id": "r", "imp": [imp("a", ext)]}, AUCTION)
    assert [e.message for e in errors] == (["failed to parse ext for impression id 'a'"] if want_error else [])
    assert len(calls) == (0 if want_error else 1)


@pytest.mark.parametrize(
    ("params", "banner", "want_banner", "want_appnexus"),
    [
        ({"placement_id": 1, "banner_frameworks": [3]}, {"format": [{"w": 1, "h": 2}]},
         {"format": [{"w": 1, "h": 2}], "w": 1, "h": 2, "api": [3]}, {"placement_id": 1}),
        ({"placement_id": 1, "banner_frameworks": [3]}, {"w": 5, "api": [5], "format": [{"w": 1, "h": 2}]},
         {"w": 5, "api": [5], "format": [{"w": 1, "h": 2}]}, {"placement_id": 1}),
        ({"placement_id": 1, "use_pmt_rule": False, "pubclick": "c"}, {},
         {}, {"placement_id": 1, "use_pmt_rule": False, "pub_click": "c"}),
        ({"member": 5, "inv_code": "x"}, {}, {}, {}),
    ],
)  # fmt: skip
def test_outgoing_imp(params, banner, want_banner, want_appnexus):
    _, bodies, _ = requests_of(ADAPTER, {"id": "r", "imp": [imp(ext={"bidder": params}, banner=banner)]}, AUCTION)
    sent = bodies[0]["imp"][0]
    assert (sent["banner"], sent["ext"]["appnexus"]) == (want_banner, want_appnexus)


@pytest.mark.parametrize(
    ("members", "want_uri", "want_errors"),
    [
        ([0, 0], ENDPOINT, []),
        ([7, 0, 7], ENDPOINT + "?member_id=7", []),
        ([7, 8], None, ["member id mismatch: all impressions must use the same member id"]),
    ],
)
def test_member_in_the_url(members, want_uri, want_errors):
    imps = [imp(f"i{n}", {"bidder": {"placement_id": 1, "member": m}}) for n, m in enumerate(members)]
    calls, _, errors = requests_of(ADAPTER, {"id": "r", "imp": imps}, AUCTION)
    assert [e.message for e in errors] == want_errors
    assert [call.uri for call in calls] == ([want_uri] if want_uri else [])


@pytest.mark.parametrize(
    ("ext", "want_appnexus", "want_error"),
    [
        ({"appnexus": {"is_amp": 1, "adpod_id": "x"}}, {"is_amp": 1, "hb_source": 5}, None),
        ({"appnexus": {"include_brand_category": False}}, {"include_brand_category": False, "hb_source": 5}, None),
        ({"prebid": {"targeting": {"includebrandcategory": {}}}},
         {"include_brand_category": True, "brand_category_uniqueness": True, "hb_source": 5}, None),
        ({"prebid": {"targeting": {"includebrandcategory": True}}}, {"hb_source": 5}, None),
        ({"appnexus": {"hb_source": "x"}}, None, "malformed request ext.appnexus"),
        ({"appnexus": []}, None, "malformed request ext.appnexus"),
    ],
)  # fmt: skip
def test_request_ext(ext, want_appnexus, want_error):
    _, bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": [imp()], "ext": ext}, AUCTION)
    assert [e.message for e in errors] == ([want_error] if want_error else [])
    assert [body["ext"]["appnexus"] for body in bodies] == ([want_appnexus] if want_appnexus else [])


def test_eleven_imps_make_two_calls_with_openrtb_26_header():
    calls, _, _ = requests_of(ADAPTER, {"id": "r", "imp": [imp(f"i{n}") for n in range(11)]}, AUCTION)
    assert [len(call.imp_ids) for call in calls] == [10, 1]
    assert calls[0].headers["X-Openrtb-Version"] == "2.6"


@pytest.mark.parametrize(
    ("bid_ext", "cat", "want_type", "want_cat", "want_error"),
    [
        ({"appnexus": {"bid_ad_type": 1, "brand_category_id": 8}}, None, "video", ["IAB12-3"], None),
        ({"appnexus": {"bid_ad_type": 3}}, ["a", "b"], "native", None, None),
        ({"appnexus": {"brand_category_id": 999}}, ["a"], "banner", ["a"], None),
        ({"appnexus": {"bid_ad_type": 2}}, None, None, None, "unrecognized bid_ad_type in response: 2"),
        (None, None, None, None, "expect { or n, but found \x00"),
        ({"appnexus": {"bid_ad_type": "0"}}, None, None, None, "cannot unmarshal"),
    ],
)
def test_bid_typing_and_category(bid_ext, cat, want_type, want_cat, want_error):
    bid: dict[str, Any] = {"id": "b", "impid": "i1", "price": 1}
    if bid_ext is not None:
        bid["ext"] = bid_ext
    if cat is not None:
        bid["cat"] = cat
    response, errors = bids_for(ADAPTER, {}, {"id": "r", "seatbid": [{"bid": [bid]}], "cur": "EUR"})
    assert response is not None and response.currency == "EUR"
    assert [t.bid_type for t in response.bids] == ([want_type] if want_type else [])
    assert [t.bid.get("cat") for t in response.bids] == ([want_cat] if want_type else [])
    assert [e.message[: len(want_error)] for e in errors] == ([want_error] if want_error else [])


def test_video_duration_and_deal_priority():
    ext = {"appnexus": {"bid_ad_type": 1, "deal_priority": 4, "creative_info": {"video": {"duration": 30}}}}
    bid = {"id": "b", "impid": "i1", "price": 1, "ext": ext}
    response, _ = bids_for(ADAPTER, {}, {"id": "r", "seatbid": [{"bid": [bid]}]})
    assert response is not None
    typed = response.bids[0]
    assert (typed.deal_priority, typed.bid_video) == (4, {"duration": 30, "primary_category": ""})
