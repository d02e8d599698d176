"""Pure rules of the auction core as tables: merge patch (RFC 7386), OpenRTB 2.5/2.6 places,
IP masking, winners and targeting (reference vectors V50, V51, V52), cache TTL."""

from __future__ import annotations

import pytest

from hbserver.auction.bids import AuctionBid, adjustment_factor
from hbserver.auction.mergepatch import merge_patch
from hbserver.auction.ortb import downconvert, upconvert
from hbserver.auction.privacy import mask_ip
from hbserver.auction.targeting import TargetingOptions, apply_targeting, bids_to_cache, run_auction


# RFC 7386 appendix A
@pytest.mark.parametrize(
    ("target", "patch", "result"),
    [
        ({"a": "b"}, {"a": "c"}, {"a": "c"}),
        ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
        ({"a": "b"}, {"a": None}, {}),
        ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
        ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
        ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
        ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
        ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
        (["a", "b"], ["c", "d"], ["c", "d"]),
        ({"a": "b"}, ["c"], ["c"]),
        ({"a": "foo"}, None, None),
        ({"a": "foo"}, "bar", "bar"),
        ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
        ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
        ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
    ],
)
def test_merge_patch_rfc7386(target, patch, result):
    before = repr(target)
    assert merge_patch(target, patch) == result
    assert repr(target) == before  # the target is never mutated


@pytest.mark.parametrize(
    ("incoming", "upconverted", "downconverted"),
    [
        (
            {"regs": {"ext": {"gdpr": 1, "us_privacy": "1YNN"}}, "user": {"ext": {"consent": "C", "eids": [1]}}},
            {"regs": {"gdpr": 1, "us_privacy": "1YNN"}, "user": {"consent": "C", "eids": [1]}},
            {"regs": {"ext": {"gdpr": 1, "us_privacy": "1YNN"}}, "user": {"ext": {"consent": "C", "eids": [1]}}},
        ),
        (  # a 2.6 value already there wins; the 2.5 copy is dropped
            {"regs": {"gdpr": 0, "ext": {"gdpr": 1, "other": 2}}},
            {"regs": {"gdpr": 0, "ext": {"other": 2}}},
            {"regs": {"ext": {"other": 2, "gdpr": 0}}},
        ),
        (
            {
                "source": {"ext": {"schain": {"ver": "1.0"}}},
                "imp": [{"id": "1", "ext": {"prebid": {"is_rewarded_inventory": 1}}}],
            },
            {"source": {"schain": {"ver": "1.0"}}, "imp": [{"id": "1", "ext": {"prebid": {}}, "rwdd": 1}]},
            {
                "source": {"ext": {"schain": {"ver": "1.0"}}},
                "imp": [{"id": "1", "ext": {"prebid": {"is_rewarded_inventory": 1}}}],
            },
        ),
    ],
)
def test_ortb_places(incoming, upconverted, downconverted):
    before = repr(incoming)
    up = upconvert(incoming)
    assert up == upconverted and repr(incoming) == before
    assert downconvert(dict(up)) == downconverted


@pytest.mark.parametrize(
    ("ip", "masked"),
    [
        ("203.0.113.77", "203.0.113.0"),
        ("2001:db8:85a3:1234:5678:8a2e:370:7334", "2001:db8:85a3:1200::"),
        ("not-an-ip", ""),
    ],
)
def test_mask_ip(ip, masked):
    assert mask_ip(ip) == masked


def abid(bidder, imp, price, bid_id, w=0, h=0, deal="", kind="video"):
    bid = {"id": bid_id, "impid": imp, "price": price, "crid": "c"}
    if w:
        bid.update(w=w, h=h)
    if deal:
        bid["dealid"] = deal
    return AuctionBid(bidder, bidder, bid, kind, price, imp, bool(deal))


V50_BIDS = [
    ("appnexus", "imp1", 0.71, "winning-bid", 200, 250, "deal-1"),
    ("appnexus", "imp1", 0.21, "losing-bid", 0, 0, ""),
    ("appnexus", "imp2", 0.61, "other-bid", 300, 500, "deal-2"),
    ("audienceNetwork", "imp1", 0.51, "an-bid", 200, 250, "deal-4"),
]


def v50(targeting_conf, env=""):
    bids = [abid(*row) for row in V50_BIDS]
    options = TargetingOptions.from_request(targeting_conf, env)
    results = run_auction(bids, options.prefer_deals)
    apply_targeting(results, options, "www.pbcserver.com", "/pbcache/endpoint")
    return {b.bid["id"]: b.targeting for b in bids}, results, options, bids


def test_v50_winners_and_bidder_keys():
    targeting, results, _, _ = v50({"pricegranularity": "medium", "includewinners": True, "includebidderkeys": True})
    win = targeting["winning-bid"]
    assert win["hb_pb"] == win["hb_pb_appnexus"] == "0.70"
    assert win["hb_size"] == "200x250" and win["hb_bidder"] == "appnexus"
    assert targeting["losing-bid"] == {}
    an = targeting["an-bid"]
    assert an == {
        "hb_pb_audienceNetwor": "0.50",
        "hb_bidder_audienceNe": "audienceNetwork",
        "hb_size_audienceNetw": "200x250",
        "hb_deal_audienceNetw": "deal-4",
    }
    assert targeting["other-bid"]["hb_pb"] == "0.60" and targeting["other-bid"]["hb_size"] == "300x500"
    assert all(len(key) <= 20 for t in targeting.values() for key in t)
    assert results["imp1"].winner.bid["id"] == "winning-bid"


def test_v51_deals_without_bidder_keys():
    targeting, *_ = v50({"includebidderkeys": False, "alwaysincludedeals": True})
    assert targeting["winning-bid"]["hb_deal"] == "deal-1" and targeting["winning-bid"]["hb_deal_appnexus"] == "deal-1"
    assert targeting["an-bid"]["hb_deal_audienceNetw"] == "deal-4" and "hb_pb" not in targeting["an-bid"]
    assert targeting["losing-bid"] == {}


def test_v52_mobile_env_and_cache_keys():
    bids = [abid(*row) for row in V50_BIDS]
    options = TargetingOptions.from_request({}, "mobile-app")
    results = run_auction(bids, False)
    cached = bids_to_cache(results, options, bids)
    assert cached == bids  # with bidder keys every bid is cached
    bids[0].cache_id = "0"
    apply_targeting(results, options, "www.pbcserver.com", "/pbcache/endpoint")
    assert bids[0].targeting["hb_env"] == "mobile-app" and bids[0].targeting["hb_env_appnexus"] == "mobile-app"
    assert bids[0].targeting["hb_cache_id"] == "0" and bids[0].targeting["hb_cache_host"] == "www.pbcserver.com"
    assert bids[0].targeting["hb_cache_path_appnex"] == "/pbcache/endpoint"
    assert "hb_cache_host_audien" not in bids[3].targeting  # an uncached bid gets no cache keys
    assert "hb_cache_id_audienceNe" not in bids[3].targeting
    winners_only = TargetingOptions.from_request({"includebidderkeys": False}, "")
    assert [b.bid["id"] for b in bids_to_cache(results, winners_only, bids)] == ["winning-bid", "other-bid"]


@pytest.mark.parametrize(
    ("prefer_deals", "winner"),
    [(False, "high"), (True, "deal")],
)
def test_prefer_deals(prefer_deals, winner):
    bids = [abid("a", "i", 5.0, "high"), abid("b", "i", 1.0, "deal", deal="d1")]
    assert run_auction(bids, prefer_deals)["i"].winner.bid["id"] == winner


@pytest.mark.parametrize(
    ("factors", "bidder", "adapter", "factor"),
    [
        ({}, "alpha", "generic", 1.0),
        ({"alpha": 0.5}, "ALPHA", "generic", 0.5),
        ({"generic": 2}, "alpha", "generic", 2.0),
        ({"alpha": 0.5, "generic": 2}, "alpha", "generic", 0.5),
    ],
)
def test_adjustment_factor(factors, bidder, adapter, factor):
    assert adjustment_factor(factors, bidder, adapter) == factor
