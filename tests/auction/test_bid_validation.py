"""Bid validation (hbserver.auction.bids.validation): the rules by table, then through the auction.

Rows cite where the behaviour comes from: "go exchange.go <func>" is PBS-Go exchange/exchange.go
(its cases transcribed from exchange_test.go TestValidateBannerCreativeSize, TestValidateBidAdM,
TestMakeBidWithValidation, TestSetBidValidationStatus); "java ResponseBidValidator" is PBS-Java's
validation/ResponseBidValidator.java; "hbserver" marks the rules beyond Prebid Server (issue #2685).
"""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.auction.bids.accept import AuctionBid
from hbserver.auction.bids.validation import (
    ENFORCE,
    SKIP,
    WARN,
    Rules,
    RulesCache,
    check_bid,
    effective,
    imps_by_id,
    markup_insecure,
    size_too_large,
    validate,
    vast_protocol,
)
from hbserver.config import AccountValidations, Validations
from tests.auction.helpers import banner_imp, bid, bidder_config
from tests.auction.test_auction_endpoint import auction_request, post
from tests.conftest import write_account


def _bid(bid_type: str = "banner", imp_id: str = "1", **fields: Any) -> AuctionBid:
    own = {"id": "b1", "impid": imp_id, "price": 1.0, **fields}
    return AuctionBid("alpha", "generic", own, bid_type, 1.0, imp_id, False)


BANNER_IMP = {"id": "1", "banner": {"format": [{"w": 300, "h": 250}, {"w": 728, "h": 90}]}}
VIDEO_IMP = {"id": "1", "video": {"mimes": ["video/mp4"], "protocols": [2, 3, 5, 6]}}


# --- the rules ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("w", "h", "limits", "imp", "expected"), [
    (200, 200, (100, 100), None, True),  # go TestValidateBannerCreativeSize: both bigger than the max
    (200, 50, (100, 100), None, True),  # go: the width too large
    (50, 200, (100, 100), None, True),  # go: the height too large
    (50, 50, (100, 100), None, False),  # go: both within
    (None, None, (100, 100), None, False),  # go: no w/h is 0, within
    (728, 250, (0, 0), BANNER_IMP, False),  # java maxSizeForBanner: each dimension's largest format
    (729, 90, (0, 0), BANNER_IMP, True),  # java: wider than every format
    (300, 251, (0, 0), BANNER_IMP, True),  # java: higher than every format
    (300, 600, (0, 0), {"id": "1", "banner": {"w": 300, "h": 600}}, False),  # banner.w/h count too
    (900, 900, (0, 0), {"id": "1", "banner": {}}, False),  # hbserver: no size anywhere, nothing to compare
    (900, 200, (1000, 0), BANNER_IMP, False),  # hbserver: the configured width, the imp's height (250)
    (900, 300, (1000, 0), BANNER_IMP, True),
], ids=["go-both", "go-width", "go-height", "go-valid", "go-unsized-bid", "java-imp-max", "java-too-wide",
        "java-too-high", "banner-w-h", "no-sizes", "mixed-limits-within", "mixed-limits-too-high"])
def test_size_rule(w, h, limits, imp, expected) -> None:
    fields = {k: v for k, v in (("w", w), ("h", h)) if v is not None}
    rules = Rules(banner_creative_max_size=ENFORCE, max_creative_width=limits[0], max_creative_height=limits[1])
    assert size_too_large(fields, imp, rules) is expected


@pytest.mark.parametrize(("adm", "expected"), [
    ("http://domain.com/invalid", True),  # go TestValidateBidAdM: insecure, no secure marker
    ("http://www.foo.com https://www.bar.com", False),  # go: both markers: valid
    ("http%3A//www.foo.com https%3A//www.bar.com", False),  # go: both, URL-encoded: valid
    ("https://domain.com/valid", False),  # go: secure only
    ("http%3A%2F%2Fad.example", True),  # go: the encoded insecure marker alone
    ("<div>no url</div>", False),  # go: no marker at all is valid (java would call it insecure)
    ("HTTP://DOMAIN.COM", False),  # go strings.Contains is case-sensitive
    (None, False),  # go: an empty AdM (a nurl bid)
])
def test_secure_markup_rule(adm, expected) -> None:
    assert markup_insecure(adm) is expected


@pytest.mark.parametrize(("bid_fields", "expected"), [
    ({"protocol": 7}, (7, "protocol 7")),  # ortb 2.6 bid.protocol first
    ({"adm": '<VAST version="3.0"><Ad><InLine></InLine></Ad></VAST>'}, (3, "VAST 3.0 (protocol 3)")),
    ({"adm": "<VAST version='4.2'><Ad><Wrapper></Wrapper></Ad></VAST>"}, (14, "VAST 4.2 Wrapper (protocol 14)")),
    ({"adm": '<?xml version="1.0"?><VAST version="2"><Ad><InLine/></Ad></VAST>'}, (2, "VAST 2.0 (protocol 2)")),
    ({"adm": '<VAST version="9.9"></VAST>'}, None),  # an unknown version tells nothing
    ({"adm": "<div>banner</div>"}, None),
    ({"nurl": "https://x.example/vast"}, None),
])
def test_vast_protocol_of_a_bid(bid_fields, expected) -> None:
    assert vast_protocol(bid_fields) == expected


S_ENF = Rules(banner_creative_max_size=ENFORCE, max_creative_width=100, max_creative_height=100)
S_WARN = Rules(banner_creative_max_size=WARN, max_creative_width=100, max_creative_height=100)
M_ENF = Rules(secure_markup=ENFORCE)
M_WARN = Rules(secure_markup=WARN)
SIZE_ENF = ("banner_creative_max_size", ENFORCE, "bidResponse rejected: size WxH", 351)
SIZE_WARN = ("banner_creative_max_size", WARN,
             "bidResponse creative size warning: size WxH larger than AdUnit sizes", 351)
SEC_ENF = ("secure_markup", ENFORCE, "bidResponse rejected: insecure creative in secure context", 352)
SEC_WARN = ("secure_markup", WARN, "bidResponse secure markup warning: insecure creative in secure contexts", 352)
INSECURE = "http://domain.com/invalid"


@pytest.mark.parametrize(("rules", "bid_type", "fields", "imp", "expected"), [
    # go TestMakeBidWithValidation
    (S_ENF, "banner", {"w": 200, "h": 200}, BANNER_IMP, [SIZE_ENF]),
    (S_ENF, "banner", {"w": 50, "h": 50}, BANNER_IMP, []),
    (S_WARN, "banner", {"w": 200, "h": 200}, BANNER_IMP, [SIZE_WARN]),
    (M_ENF, "banner", {"adm": INSECURE}, BANNER_IMP, [SEC_ENF]),
    (M_WARN, "banner", {"adm": INSECURE}, BANNER_IMP, [SEC_WARN]),
    (Rules(banner_creative_max_size=ENFORCE), "banner", {"adm": INSECURE}, BANNER_IMP, []),  # go: adm skipped
    (Rules(max_creative_width=100, max_creative_height=100), "banner", {"w": 200, "h": 200}, BANNER_IMP, []),
    # go makeBid: size only for banner, secure markup for banner and video
    (S_ENF, "video", {"w": 1920, "h": 1080}, VIDEO_IMP, []),
    (M_ENF, "video", {"adm": INSECURE}, VIDEO_IMP, [SEC_ENF]),
    (M_ENF, "native", {"adm": INSECURE}, {"id": "1", "native": {}}, []),
    # go makeBid: an enforced size rejection ends the checks; a warning goes on to secure markup
    (Rules(banner_creative_max_size=ENFORCE, secure_markup=ENFORCE, max_creative_width=100,
           max_creative_height=100), "banner", {"w": 200, "h": 200, "adm": INSECURE}, BANNER_IMP, [SIZE_ENF]),
    (Rules(banner_creative_max_size=WARN, secure_markup=ENFORCE, max_creative_width=100,
           max_creative_height=100), "banner", {"w": 200, "h": 200, "adm": INSECURE}, BANNER_IMP,
     [SIZE_WARN, SEC_ENF]),
], ids=["go-size-enforce", "go-size-valid", "go-size-warn", "go-adm-enforce", "go-adm-warn", "go-adm-skipped",
        "go-size-skipped", "go-size-only-banner", "go-secure-video", "go-secure-not-native",
        "go-enforce-stops", "go-warn-goes-on"])
def test_prebid_server_rules(rules, bid_type, fields, imp, expected) -> None:
    found = check_bid(_bid(bid_type, **fields), imp, rules)
    assert [(f.rule, f.mode, f.message, f.non_bid_code) for f in found] == expected
    assert all(f.as_json()["code"] == 3 for f in found)  # go: errortypes.BadServerResponseErrorCode


VAST_30 = '<VAST version="3.0"><Ad><InLine></InLine></Ad></VAST>'
VAST_40_WRAPPER = '<VAST version="4.0"><Ad><Wrapper></Wrapper></Ad></VAST>'


@pytest.mark.parametrize(("rules", "bid_type", "fields", "imp", "expected"), [
    (Rules(adm_or_nurl=ENFORCE), "banner", {}, BANNER_IMP,
     [("adm_or_nurl", ENFORCE, 'bidResponse rejected: bid "b1" has neither adm nor nurl')]),
    (Rules(adm_or_nurl=WARN), "video", {"adm": ""}, VIDEO_IMP,
     [("adm_or_nurl", WARN, 'bidResponse markup warning: bid "b1" has neither adm nor nurl')]),
    (Rules(adm_or_nurl=ENFORCE), "video", {"nurl": "https://x.example/win"}, VIDEO_IMP, []),
    (Rules(media_type=ENFORCE), "video", {"adm": VAST_30}, BANNER_IMP,
     [("media_type", ENFORCE, 'bidResponse rejected: video bid "b1" for imp "1", which offers no video')]),
    (Rules(media_type=WARN), "native", {"adm": "{}"}, BANNER_IMP,
     [("media_type", WARN, 'bidResponse media type warning: native bid "b1" for imp "1", which offers no native')]),
    (Rules(media_type=ENFORCE), "banner", {"adm": "x"}, BANNER_IMP, []),
    (Rules(vast_protocol=ENFORCE), "video", {"adm": VAST_40_WRAPPER}, VIDEO_IMP,
     [("vast_protocol", ENFORCE, 'bidResponse rejected: bid "b1" is VAST 4.0 Wrapper (protocol 8), not in imp '
                                 '"1" video.protocols [2, 3, 5, 6]')]),
    (Rules(vast_protocol=WARN), "video", {"protocol": 7, "adm": VAST_30}, VIDEO_IMP,
     [("vast_protocol", WARN, 'bidResponse VAST protocol warning: bid "b1" is protocol 7, not in imp "1" '
                              "video.protocols [2, 3, 5, 6]")]),
    (Rules(vast_protocol=ENFORCE), "video", {"adm": VAST_30}, VIDEO_IMP, []),
    (Rules(vast_protocol=ENFORCE), "video", {"adm": VAST_40_WRAPPER}, {"id": "1", "video": {}}, []),
    (Rules(vast_protocol=ENFORCE), "video", {"nurl": "https://x.example/vast"}, VIDEO_IMP, []),
    (Rules(vast_protocol=ENFORCE), "audio", {"adm": VAST_40_WRAPPER}, {"id": "1", "audio": {"protocols": [3]}},
     [("vast_protocol", ENFORCE, 'bidResponse rejected: bid "b1" is VAST 4.0 Wrapper (protocol 8), not in imp '
                                 '"1" audio.protocols [3]')]),
    (Rules(adm_or_nurl=ENFORCE, media_type=ENFORCE), "video", {}, BANNER_IMP,
     [("adm_or_nurl", ENFORCE, 'bidResponse rejected: bid "b1" has neither adm nor nurl')]),
    (Rules(adm_or_nurl=WARN, media_type=ENFORCE), "video", {}, BANNER_IMP,
     [("adm_or_nurl", WARN, 'bidResponse markup warning: bid "b1" has neither adm nor nurl'),
      ("media_type", ENFORCE, 'bidResponse rejected: video bid "b1" for imp "1", which offers no video')]),
], ids=["adm-nurl-enforce", "adm-nurl-warn-empty-adm", "nurl-only-ok", "media-video-for-banner",
        "media-native-warn", "media-ok", "vast-wrapper-not-allowed", "vast-bid-protocol-first",
        "vast-allowed", "vast-imp-without-protocols", "vast-unknown-markup", "vast-audio",
        "own-enforce-stops", "own-warn-goes-on"])
def test_hbserver_rules(rules, bid_type, fields, imp, expected) -> None:
    """hbserver: beyond Prebid Server (issue #2685); seat-non-bid 350, java RESPONSE_REJECTED_INVALID_CREATIVE."""
    found = check_bid(_bid(bid_type, **fields), imp, rules)
    assert [(f.rule, f.mode, f.message) for f in found] == expected
    assert all(f.non_bid_code == 350 for f in found)


def test_validate_drops_only_enforced_bids_and_keeps_the_list_when_none() -> None:
    kept_bid, dropped_bid = _bid(w=50, h=50), _bid(w=200, h=200)
    bids = [kept_bid, dropped_bid]
    kept, findings = validate(bids, imps_by_id({"imp": [BANNER_IMP]}), S_ENF)
    assert kept == [kept_bid] and [f.bid for f in findings] == [dropped_bid]
    warned, findings = validate(bids, {"1": BANNER_IMP}, S_WARN)
    assert warned is bids and len(findings) == 1


H_SKIP = Validations()
H_SIZES = Validations(banner_creative_max_size="enforce", secure_markup="warn", max_creative_width=300,
                      max_creative_height=250)


@pytest.mark.parametrize(("host", "account", "expected"), [
    (H_SKIP, AccountValidations(), None),  # everything skip: no rules, no per-bid loop
    (H_SKIP, None, None),
    # go TestSetBidValidationStatus: the account's banner_creative_max_size wins (enforce, warn, skip)
    (Validations(banner_creative_max_size="skip"), AccountValidations(banner_creative_max_size="enforce"),
     Rules(banner_creative_max_size=ENFORCE)),
    (Validations(banner_creative_max_size="enforce"), AccountValidations(banner_creative_max_size="skip"), None),
    (H_SIZES, AccountValidations(), Rules(ENFORCE, WARN, 300, 250)),
    # hbserver: every account key overrides (PBS-Go keeps the host's secure_markup and sizes)
    (H_SIZES, AccountValidations(secure_markup="skip", max_creative_width=0),
     Rules(ENFORCE, SKIP, 0, 250)),
    (H_SKIP, AccountValidations(vast_protocol="warn"), Rules(vast_protocol=WARN)),
])
def test_effective_rules(host, account, expected) -> None:
    assert effective(host, account) == expected


def test_rules_are_kept_per_settings_object() -> None:
    cache = RulesCache(Validations(media_type="warn"))
    settings = AccountValidations()
    first = cache.of(settings)
    assert first == Rules(media_type=WARN) and cache.of(settings) is first
    assert cache.of(AccountValidations(media_type="skip")) is None


# --- through the auction --------------------------------------------------------------------------

def _data(response_json: dict[str, Any]) -> tuple[dict[str, list[str]], dict[str, Any]]:
    seats = {seat["seat"]: [b["id"] for b in seat["bid"]] for seat in response_json.get("seatbid", [])}
    return seats, response_json.get("ext", {})


async def _auction(client, returnall: bool = True) -> dict[str, Any]:
    body = auction_request(banner_imp("imp-1", alpha={"p": 1}, beta={"p": 2}))
    body["ext"]["prebid"]["returnallbidstatus"] = returnall
    response = await post(client, body)
    assert response.status == 200, await response.text()
    return await response.json()


def _two_bids(bidders) -> None:
    """alpha's bid is 970x250 (over the imp's 300x600), beta's fits."""
    bidders.bids["alpha"] = [bid("imp-1", 2.0, "a1", w=970, h=250)]
    bidders.bids["beta"] = [bid("imp-1", 1.0, "b1")]


async def test_enforce_drops_the_bid_with_error_nonbid_and_metrics(make_client, bidders) -> None:
    """go exchange.go makeBid: error code 3 under the seat, seat-non-bid 351, RecordBidValidationCreativeSizeError."""
    _two_bids(bidders)
    client = await make_client(bidder_config(bidders, "alpha", "beta"),
                               validations={"banner_creative_max_size": "enforce"})
    data = await _auction(client)
    seats, ext = _data(data)
    assert seats == {"beta": ["b1"]}  # beta wins: the check runs before the auction
    assert data["seatbid"][0]["bid"][0]["ext"]["prebid"]["targeting"]["hb_bidder"] == "beta"
    assert ext["errors"]["alpha"] == [{"code": 3, "message": "bidResponse rejected: size WxH"}]
    nonbids = {entry["seat"]: entry["nonbid"] for entry in ext["prebid"]["seatnonbid"]}
    assert [(n["impid"], n["statuscode"], n["ext"]["prebid"]["bid"]["w"]) for n in nonbids["alpha"]] == [
        ("imp-1", 351, 970)
    ]
    metrics = await (await client.get("/metrics")).text()
    assert 'hbserver_adapter_response_validation_size_err{adapter="alpha",success="success"} 1' in metrics
    assert 'hbserver_account_response_validation_size_err{account="1001",success="success"} 1' in metrics
    assert 'adapter_response_validation_size_err{adapter="beta"' not in metrics


async def test_warn_keeps_the_bid_with_the_error(make_client, bidders) -> None:
    _two_bids(bidders)
    client = await make_client(bidder_config(bidders, "alpha", "beta"),
                               validations={"banner_creative_max_size": "warn"})
    data = await _auction(client)
    seats, ext = _data(data)
    assert seats == {"alpha": ["a1"], "beta": ["b1"]}
    assert ext["errors"]["alpha"] == [
        {"code": 3, "message": "bidResponse creative size warning: size WxH larger than AdUnit sizes"}
    ]
    assert all(n["statuscode"] != 351 for e in ext["prebid"].get("seatnonbid", []) for n in e["nonbid"])
    metrics = await (await client.get("/metrics")).text()
    assert 'hbserver_adapter_response_validation_size_warn{adapter="alpha",success="success"} 1' in metrics
    assert "response_validation_size_err{" not in metrics


async def test_skip_does_nothing(make_client, bidders) -> None:
    _two_bids(bidders)
    bidders.bids["beta"] = [bid("imp-1", 1.0, "b1", adm="http://insecure.example/ad")]
    client = await make_client(bidder_config(bidders, "alpha", "beta"))
    data = await _auction(client)
    seats, ext = _data(data)
    assert seats == {"alpha": ["a1"], "beta": ["b1"]}
    assert "errors" not in ext or not ext["errors"]


@pytest.mark.parametrize(("host", "account", "kept"), [
    ({}, {"validations": {"banner_creative_max_size": "enforce"}}, {"beta": ["b1"]}),
    ({"banner_creative_max_size": "enforce"}, {"validations": {"banner_creative_max_size": "skip"}},
     {"alpha": ["a1"], "beta": ["b1"]}),
    ({"banner_creative_max_size": "enforce", "max_creative_width": 300}, {"validations": {"max_creative_width": 1000}},
     {"alpha": ["a1"], "beta": ["b1"]}),
], ids=["go: account enforce over host skip", "go: account skip over host enforce",
        "hbserver: the account's max width"])
async def test_account_overrides_host(host, account, kept, make_client, bidders, data_dir) -> None:
    write_account(data_dir, "1001", account)
    _two_bids(bidders)
    client = await make_client(bidder_config(bidders, "alpha", "beta"), validations=host)
    seats, _ext = _data(await _auction(client))
    assert seats == kept


async def test_secure_markup_and_own_rules_in_the_auction(make_client, bidders) -> None:
    """go makeBid: seat-non-bid 352 for insecure markup; hbserver's adm_or_nurl: 350, its own metric."""
    bidders.bids["alpha"] = [bid("imp-1", 2.0, "a1", adm='<img src="http://ads.example/x.png">')]
    bidders.bids["beta"] = [bid("imp-1", 1.0, "b1", adm="")]
    client = await make_client(bidder_config(bidders, "alpha", "beta"),
                               validations={"secure_markup": "enforce", "adm_or_nurl": "enforce"})
    data = await _auction(client)
    seats, ext = _data(data)
    assert seats == {}
    assert ext["errors"] == {
        "alpha": [{"code": 3, "message": "bidResponse rejected: insecure creative in secure context"}],
        "beta": [{"code": 3, "message": 'bidResponse rejected: bid "b1" has neither adm nor nurl'}],
    }
    codes = {e["seat"]: [n["statuscode"] for n in e["nonbid"]] for e in ext["prebid"]["seatnonbid"]}
    assert codes == {"alpha": [352], "beta": [350]}
    metrics = await (await client.get("/metrics")).text()
    assert 'hbserver_adapter_response_validation_secure_err{adapter="alpha",success="success"} 1' in metrics
    assert ('hbserver_adapter_response_validation_bids{adapter="beta",outcome="err",rule="adm_or_nurl"} 1'
            in metrics)


def test_bad_mode_is_a_config_problem() -> None:
    from hbserver.config import ConfigError, load_config

    with pytest.raises(ConfigError) as caught:
        load_config(environ={}, overrides={"validations": {"secure_markup": "block"}})
    assert caught.value.problems == ["validations.secure_markup: must be one of skip, enforce, warn; got 'block'"]
