"""Pure rules of the auction core as tables: merge patch (RFC 7386), IP masking, winners and
targeting (reference vectors V50, V51, V52), shared targeting options, bid validation,
stored-response references, cache TTL (OpenRTB 2.5/2.6 places: tests/auction/test_ortb_places.py)."""

from __future__ import annotations

import copy
import math

import pytest

from hbserver.adapters.base import BidderResponse, ErrorCode, TypedBid
from hbserver.auction.bids.accept import AuctionBid, _problem, accept_bids
from hbserver.auction.bids.bidadjust import BidAdjustments
from hbserver.auction.common.mergepatch import merge_patch
from hbserver.auction.exchange.privacy import mask_ip
from hbserver.auction.request.ortb import downconvert, has_26_fields
from hbserver.auction.request.stored import load_stored_responses, refers_to_stored_responses
from hbserver.auction.response import targeting as targeting_module
from hbserver.auction.response.targeting import (
    MAX_SHARED_OPTIONS,
    TargetingOptions,
    apply_targeting,
    bids_to_cache,
    run_auction,
)


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
        # PBS-Go exchange/targeting.go setTargeting: the cache host and path on every targeted bid
        "hb_cache_host_audien": "www.pbcserver.com",
        "hb_cache_path_audien": "/pbcache/endpoint",
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
    # an uncached bid gets no cache id, but the host and path all the same (PBS-Go setTargeting)
    assert "hb_cache_id_audienceNe" not in bids[3].targeting
    assert bids[3].targeting["hb_cache_host_audien"] == "www.pbcserver.com"
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
    ("factors", "bidder", "factor"),
    [
        ({"alpha": 0.5}, "ALPHA", 0.5),
        ({"generic": 2}, "alpha", 1.0),  # PBS-Go: the seat, then the bidder as named; never the core adapter
        ({"alpha": 0.5, "generic": 2}, "alpha", 0.5),
    ],
)
def test_adjustment_factor(factors, bidder, factor):
    adjustments, _ = BidAdjustments.from_request({"bidadjustmentfactors": factors}, None)
    assert adjustments is not None and adjustments.factor(bidder) == factor


def test_no_adjustments_cost_nothing():
    assert BidAdjustments.from_request({}, None) == (None, [])


# -- which requests have 2.6 fields for downconvert to move (split_request skips it otherwise) ----


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        pytest.param({"id": "r", "imp": [{"id": "1", "banner": {}}]}, False, id="none"),
        pytest.param({"regs": {"gdpr": 1}}, True, id="regs.gdpr"),
        pytest.param({"regs": {"gdpr": None}}, True, id="regs.gdpr-null"),
        pytest.param({"regs": {"us_privacy": "1YNN"}}, True, id="regs.us_privacy"),
        # PBS-Go's ConvertDownTo25 leaves GPP at the top level (openrtb_ext/convert_down.go)
        pytest.param({"regs": {"gpp": "DBAA"}}, False, id="regs.gpp-never-moves"),
        pytest.param({"regs": {"gpp_sid": [2]}}, False, id="regs.gpp_sid-never-moves"),
        pytest.param({"user": {"consent": ""}}, True, id="user.consent-empty-is-dropped"),
        pytest.param({"user": {"consent": "C"}}, True, id="user.consent"),
        pytest.param({"user": {"eids": [{"source": "s"}]}}, True, id="user.eids"),
        pytest.param({"source": {"schain": {"ver": "1.0"}}}, True, id="source.schain"),
        pytest.param({"imp": [{"id": "1", "rwdd": 1}]}, True, id="imp.rwdd"),
        pytest.param({"imp": [{"id": "1"}, {"id": "2", "rwdd": 0}]}, True, id="imp.rwdd-second-imp"),
        pytest.param(
            {
                "regs": {"coppa": 1, "ext": {"gdpr": 1, "us_privacy": "1YNN"}},
                "user": {"id": "u", "buyeruid": "b", "ext": {"consent": "C", "eids": []}},
                "source": {"tid": "t", "ext": {"schain": {}}},
                "imp": [{"id": "1", "ext": {"prebid": {"is_rewarded_inventory": 1}}}],
            },
            False,
            id="only-2.5-places-and-other-fields",
        ),
        pytest.param({"regs": "gdpr", "user": ["consent", "eids"], "source": None}, False, id="objects-not-dicts"),
        pytest.param({"imp": ["rwdd", None, 5]}, False, id="imps-not-dicts"),
        pytest.param({"imp": None}, False, id="imp-null"),
        pytest.param({}, False, id="empty"),
    ],
)
def test_has_26_fields(request_, expected):
    before = copy.deepcopy(request_)
    assert has_26_fields(request_) is expected
    assert request_ == before
    if all(isinstance(imp, dict) for imp in request_.get("imp") or ()):
        # True exactly when downconvert would change something
        assert (downconvert(copy.deepcopy(request_)) != before) is expected


# -- stored responses are looked up only when an imp names one -----------------------------------


@pytest.mark.parametrize(
    ("imps", "expected"),
    [
        pytest.param([{"id": "1"}], False, id="imp-without-ext"),
        pytest.param([{"id": "1", "ext": None}], False, id="ext-null"),
        pytest.param([{"id": "1", "ext": "prebid"}], False, id="ext-a-string"),
        pytest.param([{"id": "1", "ext": ["prebid"]}], False, id="ext-a-list"),
        pytest.param([{"id": "1", "ext": {}}], False, id="ext-empty"),
        pytest.param([{"id": "1", "ext": {"prebid": None}}], False, id="prebid-null"),
        pytest.param([{"id": "1", "ext": {"prebid": "storedauctionresponse"}}], False, id="prebid-a-string"),
        pytest.param([{"id": "1", "ext": {"prebid": ["storedbidresponse"]}}], False, id="prebid-a-list"),
        pytest.param(
            [{"id": "1", "ext": {"prebid": {"bidder": {"alpha": {}}, "storedrequest": {"id": "s"}}}}],
            False,
            id="other-prebid-fields",
        ),
        pytest.param(
            [{"id": "1", "ext": {"storedauctionresponse": {"id": "a"}, "storedbidresponse": []}}],
            False,
            id="outside-prebid",
        ),
        pytest.param(
            [{"id": "1", "ext": {"prebid": {"storedauctionresponse": {"id": "a"}}}}], True, id="storedauctionresponse"
        ),
        pytest.param(
            [{"id": "1", "ext": {"prebid": {"storedbidresponse": [{"bidder": "alpha", "id": "b"}]}}}],
            True,
            id="storedbidresponse",
        ),
        pytest.param(
            [
                {"id": "1", "ext": {"prebid": {}}},
                {"id": "2", "ext": {"prebid": {"storedbidresponse": [{"bidder": "alpha", "id": "b"}]}}},
            ],
            True,
            id="second-imp",
        ),
    ],
)
async def test_refers_to_stored_responses(imps, expected):
    from hbserver.auction.request.validate import RequestError

    request = {"id": "r", "imp": imps}
    before = copy.deepcopy(request)
    assert refers_to_stored_responses(request) is expected
    assert request == before
    if not all(imp.get("ext") is None or isinstance(imp["ext"], dict) for imp in imps):
        return  # validation refuses a non-object imp.ext before stored responses are read
    imp_bidders = [{"alpha": {}} for _ in imps]
    if expected:  # the full lookup has something to fetch (and no source to fetch it from)
        with pytest.raises(RequestError, match="no stored data source"):
            await load_stored_responses(request, imp_bidders, None, 0.1)
    else:  # skipping the lookup loses nothing
        assert (await load_stored_responses(request, imp_bidders, None, 0.1)).empty


# -- parsed targeting options are shared by requests asking the same -----------------------------


@pytest.fixture
def shared_options():
    """The module's cache of options, emptied for the test and restored after it."""
    cache = targeting_module._OPTIONS
    saved = dict(cache)
    cache.clear()
    yield cache
    cache.clear()
    cache.update(saved)


TARGETING_SETTINGS = [
    pytest.param({}, "", None, id="defaults"),
    pytest.param({"pricegranularity": "high", "includewinners": False}, "", None, id="high-no-winners"),
    pytest.param({"pricegranularity": "high", "includewinners": False}, "mobile-app", None, id="other-env"),
    pytest.param({"pricegranularity": "high", "includewinners": False}, "amp", {"creative_loadtype": "html"}, id="amp"),
    pytest.param(
        {
            "prefix": "pbs",
            "includeformat": True,
            "preferdeals": True,
            "alwaysincludedeals": True,
            "includebidderkeys": False,
        },
        "",
        None,
        id="flags-and-prefix",
    ),
    pytest.param(
        {
            "pricegranularity": {"precision": 2, "ranges": [{"max": 5, "increment": 0.25}]},
            "mediatypepricegranularity": {"video": {"precision": 1, "ranges": [{"max": 10, "increment": 0.5}]}},
        },
        "",
        None,
        id="custom-granularities",
    ),
]


@pytest.mark.parametrize(("settings", "env", "extra"), TARGETING_SETTINGS)
def test_equal_targeting_settings_share_one_options(shared_options, settings, env, extra):
    first = TargetingOptions.from_request(copy.deepcopy(settings), env, copy.deepcopy(extra))
    again = TargetingOptions.from_request(copy.deepcopy(settings), env, copy.deepcopy(extra))
    assert again is first
    assert first == TargetingOptions._build(settings, env, extra)
    assert first.env == env and first.extra == (extra or {})
    assert len(shared_options) == 1


def test_different_targeting_settings_get_their_own_options(shared_options):
    rows = [param.values for param in TARGETING_SETTINGS]
    options = [TargetingOptions.from_request(*row) for row in rows]
    assert len({id(o) for o in options}) == len(rows) == len(shared_options)
    assert options == [TargetingOptions._build(*row) for row in rows]
    assert all(options[i] != options[j] for i in range(len(rows)) for j in range(i))
    assert options[1].granularity != options[0].granularity and options[1].include_winners is False
    assert (options[2].env, options[3].env, options[3].extra) == ("mobile-app", "amp", {"creative_loadtype": "html"})
    assert options[4].prefix == "pbs" and options[4].prefer_deals and not options[4].include_bidder_keys
    assert set(options[5].media_granularity) == {"video"} and options[5].granularity.precision == 2
    # no extra and an empty extra are the same setting
    assert TargetingOptions.from_request({}, "", {}) is options[0]


def test_shared_options_do_not_follow_the_callers_later_changes(shared_options):
    settings = {"pricegranularity": "low"}
    extra = {"k": "v"}
    low = TargetingOptions.from_request(settings, "", extra)
    settings["pricegranularity"] = "high"
    extra["k"] = "changed"
    assert low.extra == {"k": "v"} and low == TargetingOptions._build({"pricegranularity": "low"}, "", {"k": "v"})
    high = TargetingOptions.from_request(settings, "", extra)
    assert high is not low and high == TargetingOptions._build({"pricegranularity": "high"}, "", {"k": "changed"})
    assert TargetingOptions.from_request({"pricegranularity": "low"}, "", {"k": "v"}) is low


def test_shared_options_are_bounded(shared_options):
    def options(i):
        return TargetingOptions.from_request({"prefix": "p"}, "", {"k": str(i)})

    first = options(0)
    sizes = []
    for i in range(1, MAX_SHARED_OPTIONS + 20):
        options(i)
        sizes.append(len(shared_options))
    assert max(sizes) == MAX_SHARED_OPTIONS and sizes[-1] == MAX_SHARED_OPTIONS
    last = MAX_SHARED_OPTIONS + 19
    assert options(last) is options(last)  # the newest is still shared
    again = options(0)  # the oldest was dropped: built anew, equal
    assert again is not first and again == first
    assert len(shared_options) == MAX_SHARED_OPTIONS


def test_targeting_settings_that_are_not_json_are_not_shared(shared_options):
    settings = {"pricegranularity": "low", 1: "not a JSON key"}
    first = TargetingOptions.from_request(settings, "", None)
    again = TargetingOptions.from_request(settings, "", None)
    assert first == again == TargetingOptions._build({"pricegranularity": "low"}, "", None)
    assert first is not again and len(shared_options) == 0


# -- bid validation (PBS-Go's texts; price rules reported only in debug) -------------------------
# PBS-Go exchange/bidder_validate_bids.go validateBid: a bad price is an error only when the response
# may carry debug (responseDebugAllowed), else the bid is dropped silently; no seat-non-bid either.

IMP_IDS = {"imp-1", "imp-2"}
_DROP = object()
MISSING_IMPID = "Bid \"b1\" missing required field 'impid'"
BAD_PRICE = "Bid \"b1\" does not contain a positive (or zero if there is a deal) 'price'"
ZERO_WITHOUT_DEAL = (
    "Bid \"b1\" does not contain positive 'price' which is required since there is no deal set for this bid"
)
NO_CRID = 'Bid "b1" missing creative ID'


def good_bid(**fields):
    bid = {"id": "b1", "impid": "imp-1", "price": 1.5, "crid": "cr-1"}
    for key, value in fields.items():
        if value is _DROP:
            del bid[key]
        else:
            bid[key] = value
    return bid


# (bid, problem or None when accepted, whether outside debug it is rejected silently)
BID_ROWS = [
    pytest.param(good_bid(), None, False, id="good-float"),
    pytest.param(good_bid(price=2), None, False, id="good-int"),
    pytest.param(good_bid(price=1e-9), None, False, id="good-tiny"),
    pytest.param(good_bid(price=1e29), None, False, id="good-huge"),
    pytest.param(good_bid(impid="imp-2", ext={"k": 1}, w=300, h=250), None, False, id="good-with-ext"),
    pytest.param(good_bid(price=0, dealid="deal-1"), None, False, id="zero-with-deal"),
    pytest.param(good_bid(price=0.0, dealid="deal-1"), None, False, id="zero-float-with-deal"),
    pytest.param({}, "Empty bid object submitted.", False, id="empty"),
    pytest.param(None, "Empty bid object submitted.", False, id="null"),
    pytest.param([], "Empty bid object submitted.", False, id="list"),
    pytest.param(good_bid(id=_DROP), "Bid missing required field 'id'", False, id="id-missing"),
    pytest.param(good_bid(id=""), "Bid missing required field 'id'", False, id="id-empty"),
    pytest.param(good_bid(id=7), "Bid missing required field 'id'", False, id="id-int"),
    pytest.param(good_bid(id=None), "Bid missing required field 'id'", False, id="id-null"),
    pytest.param(good_bid(id=["b1"]), "Bid missing required field 'id'", False, id="id-list"),
    pytest.param(good_bid(id=_DROP, impid="imp-9"), "Bid missing required field 'id'", False, id="id-first"),
    pytest.param(good_bid(impid=_DROP), MISSING_IMPID, False, id="impid-missing"),
    pytest.param(good_bid(impid=""), MISSING_IMPID, False, id="impid-empty"),
    pytest.param(good_bid(impid=1), MISSING_IMPID, False, id="impid-int"),
    pytest.param(good_bid(impid=None), MISSING_IMPID, False, id="impid-null"),
    pytest.param(good_bid(impid=["imp-1"]), MISSING_IMPID, False, id="impid-list-unhashable"),
    pytest.param(good_bid(impid={"imp-1": 1}), MISSING_IMPID, False, id="impid-dict-unhashable"),
    pytest.param(
        good_bid(impid="imp-9"),
        'Bid "b1" has an \'impid\' ("imp-9") that matches no imp of the request',
        False,
        id="impid-unknown",
    ),
    pytest.param(good_bid(price=0), ZERO_WITHOUT_DEAL, True, id="zero-without-deal"),
    pytest.param(good_bid(price=0.0, dealid=""), ZERO_WITHOUT_DEAL, True, id="zero-with-empty-deal"),
    pytest.param(good_bid(price=-1), BAD_PRICE, True, id="negative"),
    pytest.param(good_bid(price=-0.5, dealid="deal-1"), BAD_PRICE, True, id="negative-with-deal"),
    pytest.param(good_bid(price=math.nan), BAD_PRICE, True, id="nan"),
    pytest.param(good_bid(price=math.inf), BAD_PRICE, True, id="inf"),
    pytest.param(good_bid(price=-math.inf), BAD_PRICE, True, id="minus-inf"),
    pytest.param(good_bid(price=True), BAD_PRICE, True, id="true"),
    pytest.param(good_bid(price=False, dealid="deal-1"), BAD_PRICE, True, id="false-with-deal"),
    pytest.param(good_bid(price="1.5"), BAD_PRICE, True, id="string"),
    pytest.param(good_bid(price=None), BAD_PRICE, True, id="price-null"),
    pytest.param(good_bid(price=_DROP), BAD_PRICE, True, id="price-missing"),
    pytest.param(good_bid(price=-1, crid=_DROP), BAD_PRICE, True, id="price-before-crid"),
    pytest.param(good_bid(crid=_DROP), NO_CRID, False, id="crid-missing"),
    pytest.param(good_bid(crid=""), NO_CRID, False, id="crid-empty"),
    pytest.param(good_bid(crid=7), NO_CRID, False, id="crid-int"),
    pytest.param(good_bid(crid=None), NO_CRID, False, id="crid-null"),
    pytest.param(good_bid(price=0, dealid="deal-1", crid=""), NO_CRID, False, id="crid-empty-deal"),
]


@pytest.mark.parametrize("debug", [True, False], ids=["debug", "no-debug"])
@pytest.mark.parametrize(("bid", "problem", "debug_only"), BID_ROWS)
def test_bid_validation(bid, problem, debug_only, debug):
    from hbserver.adapters.base import BidderError

    expected = problem if problem is None or debug or not debug_only else ""
    before = copy.deepcopy(bid)
    assert _problem(bid, IMP_IDS, debug) == expected
    response = BidderResponse([TypedBid(bid, "banner")], "EUR")
    half, _ = BidAdjustments.from_request({"bidadjustmentfactors": {"alpha": 0.5}}, None)
    accepted, errors = accept_bids("alpha", "generic", [response], IMP_IDS, "USD", lambda p, f, t: 3.0 * p, half, debug)
    assert bid == before  # the bidder's bid is never changed
    if expected is None:
        assert errors == []
        [got] = accepted
        original = float(bid["price"])
        assert got.bid is not bid and got.price == pytest.approx(original * 1.5) == got.bid["price"]
        assert (got.bidder, got.adapter, got.bid_type) == ("alpha", "generic", "banner")
        assert (got.imp_id, got.deal) == (bid["impid"], bool(bid.get("dealid")))
        ext = {**bid.get("ext", {}), "origbidcpm": original, "origbidcur": "EUR"}
        assert got.bid == {**bid, "price": got.price, "ext": ext}
    else:
        assert accepted == []
        # PBS-Go's validateBid errors carry no code: errortypes.ReadCode gives 999
        assert errors == ([BidderError(expected, ErrorCode.UNKNOWN)] if expected else [])


@pytest.mark.parametrize("bid_type", ["", "no bidtype assigned", "Banner"])
def test_bids_without_a_known_media_type_are_dropped(bid_type):
    """Some PBS adapters return an untyped bid (type "") next to an error; it never enters the auction."""
    response = BidderResponse([TypedBid(good_bid(), bid_type), TypedBid(good_bid(id="b2"), "video")], "USD")
    accepted, errors = accept_bids("alpha", "generic", [response], IMP_IDS, "USD", lambda p, f, t: p, None, False)
    assert [bid.bid["id"] for bid in accepted] == ["b2"]
    assert [(e.code, e.message) for e in errors] == [
        (ErrorCode.BAD_SERVER_RESPONSE, f'Bid "{good_bid()["id"]}" has no media type the auction knows: {bid_type!r}')
    ]
