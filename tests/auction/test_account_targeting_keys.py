"""The account's targeting and integration keys (issue 42 item 1), end to end through the real app
against mock bidders on 127.0.0.1: PBS-Go's ``targeting_prefix``, ``truncate_target_attr``,
``bid_rounding``, ``preferredmediatype``, ``default_integration`` and PBS-Java's ``auction`` section
(``price_granularity``, ``targeting.*``, ``truncate_target_attr``, ``default_integration``,
``bid_rounding``, ``preferredmediatype``). One row per rule, each naming the PBS source it carries over."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hbserver.auction.request.account_targeting import account_targeting
from hbserver.bidders import registry
from hbserver.config import AccountSettings, build
from tests.auction.helpers import MockBidders, banner_imp, bid, bidder_config
from tests.conftest import write_account

Check = Callable[[dict[str, Any], MockBidders], None]
VIDEO = {"mimes": ["video/mp4"], "w": 640, "h": 480}


def _request(targeting: dict[str, Any] | None, prebid: dict[str, Any] | None = None, **imp: Any) -> dict[str, Any]:
    ext_prebid = dict(prebid or {})
    if targeting is not None:
        ext_prebid["targeting"] = targeting
    bidders = imp.pop("bidders", None) or {"alpha": {"placement": 1}}
    first = banner_imp("imp-1", **bidders)
    first.update(imp)
    return {
        "id": "req-1",
        "tmax": 500,
        "imp": [first],
        "site": {"page": "https://news.example/a", "publisher": {"id": "1001"}},
        "device": {"ua": "test-agent", "ip": "203.0.113.77"},
        "ext": {"prebid": ext_prebid},
    }


def _targeting(response: dict[str, Any], seat: str = "alpha") -> dict[str, str]:
    for seatbid in response.get("seatbid", []):
        if seatbid["seat"] == seat:
            return seatbid["bid"][0]["ext"]["prebid"].get("targeting", {})
    raise AssertionError(f"no bid from {seat}: {response}")


def _warning_codes(response: dict[str, Any]) -> list[int]:
    return [w["code"] for w in response.get("ext", {}).get("warnings", {}).get("general", [])]


def _keys_are(*expected: str) -> Check:
    def check(response: dict[str, Any], _mock: MockBidders) -> None:
        assert sorted(_targeting(response)) == sorted(expected)

    return check


def _value(key: str, value: str, seat: str = "alpha", warning: int | None = None) -> Check:
    def check(response: dict[str, Any], _mock: MockBidders) -> None:
        assert _targeting(response, seat).get(key) == value, _targeting(response, seat)
        if warning is not None:
            assert warning in _warning_codes(response)

    return check


def _no_key(key: str, present: str) -> Check:
    def check(response: dict[str, Any], _mock: MockBidders) -> None:
        got = _targeting(response)
        assert key not in got and present in got, got

    return check


def _integration(expected: str) -> Check:
    def check(_response: dict[str, Any], mock: MockBidders) -> None:
        assert mock.received["alpha"][0]["ext"]["prebid"].get("integration") == expected

    return check


def _media(expected: list[str]) -> Check:
    def check(_response: dict[str, Any], mock: MockBidders) -> None:
        imp = mock.received["alpha"][0]["imp"][0]
        assert [m for m in ("banner", "video", "audio", "native") if m in imp] == expected

    return check


ALPHA_KEYS = tuple(
    key
    for name in ("pb", "bidder", "size", "cache_host", "cache_path")
    for key in (f"hb_{name}", f"hb_{name}_alpha")
)
MULTI = {"video": VIDEO}  # with banner_imp's banner: a multi-format imp
TWO = {"bidders": {"alpha": {"placement": 1}, "beta": {"placement": 2}}}
DEAL = {"beta": [bid("imp-1", 1.0, "d1", dealid="deal-1")]}

# (id, account, ext.prebid.targeting, other ext.prebid, imp fields, more bids, check)
ROWS: list[tuple[str, dict[str, Any], dict[str, Any] | None, dict[str, Any], dict[str, Any], dict[str, Any], Check]] = [
    ("no keys: PBS's defaults", {}, {}, {}, {}, {}, _keys_are(*ALPHA_KEYS)),
    # PBS-Go exchange/utils.go getTargetDataPrefix: the account's prefix for a request naming none
    ("go targeting_prefix", {"targeting_prefix": "pb"}, {}, {}, {}, {},
     _keys_are(*(k.replace("hb_", "pb_", 1) for k in ALPHA_KEYS))),
    # ... the request's prefix wins
    ("go targeting_prefix: request wins", {"targeting_prefix": "pb"}, {"prefix": "xy"}, {}, {}, {},
     _value("xy_pb", "1.20")),
    # ... longer than the key length (20) less MinKeyLength (12): hb and TooLongTargetingPrefixWarningCode
    ("go targeting_prefix too long", {"targeting_prefix": "longprefix"}, {}, {}, {}, {},
     _value("hb_pb", "1.20", warning=10015)),
    # PBS-Go exchange/targeting.go addKeys: keys cut to truncate_target_attr
    ("go truncate_target_attr", {"truncate_target_attr": 14}, {}, {}, {}, {},
     _value("hb_bidder_alph", "alpha")),
    # PBS-Go getTargetDataPrefix: under 12, prefix hb and TooShortTargetingPrefixWarningCode (keys still cut)
    ("go truncate_target_attr under 12", {"truncate_target_attr": 10, "targeting_prefix": "pb"}, {}, {}, {}, {},
     _value("hb_bidder_", "alpha", warning=10016)),
    # PBS-Go exchange/price_granularity.go getCpmTarget: up = ceil
    ("go bid_rounding up", {"bid_rounding": "up"}, {}, {}, {}, {}, _value("hb_pb", "1.30")),
    # ... true = nearest (1.26 -> 1.30; down would give 1.20)
    ("go bid_rounding true", {"bid_rounding": "true"}, {}, {}, {}, {}, _value("hb_pb", "1.30")),
    # ... an unknown mode rounds down
    ("go bid_rounding unknown", {"bid_rounding": "sideways"}, {}, {}, {}, {}, _value("hb_pb", "1.20")),
    # PBS-Go exchange.go getBidderPreferredMediaTypeMap + adapters/infoawarebidder.go adjustImpForPreferredMediaType
    ("go preferredmediatype", {"preferredmediatype": {"alpha": "video"}}, {}, {}, MULTI, {}, _media(["video"])),
    # ... biddercontrols.<bidder>.prefmtype wins over the account
    ("go preferredmediatype: request wins", {"preferredmediatype": {"alpha": "video"}}, {},
     {"biddercontrols": {"alpha": {"prefmtype": "banner"}}}, MULTI, {}, _media(["banner"])),
    # PBS-Go endpoints/openrtb2/auction.go setIntegrationType
    ("go default_integration", {"default_integration": "acme"}, None, {}, {}, {}, _integration("acme")),
    ("go default_integration: request wins", {"default_integration": "acme"}, None, {"integration": "mine"}, {}, {},
     _integration("mine")),
    # PBS-Java Ortb2ImplicitParametersResolver.resolvePriceGranularity: the account's for a request naming none
    ("java auction.price_granularity", {"auction": {"price_granularity": "low"}}, {}, {}, {}, {},
     _value("hb_pb", "1.00")),
    ("java auction.price_granularity: request wins", {"auction": {"price_granularity": "low"}},
     {"pricegranularity": "high"}, {}, {}, {}, _value("hb_pb", "1.26")),
    # ... under its kebab-case @JsonAlias (AccountAuctionConfig: price-granularity)
    ("java auction.price-granularity alias", {"auction": {"price-granularity": "low"}}, {}, {}, {}, {},
     _value("hb_pb", "1.00")),
    # ... PriceGranularity.createFromStringOrDefault: an unknown name is medium
    ("java auction.price_granularity unknown", {"auction": {"price_granularity": "fine"}}, {}, {}, {}, {},
     _value("hb_pb", "1.20")),
    # PBS-Java Ortb2RequestFactory.resolveExtPrebidTargeting: each flag fills the request's absent one
    ("java auction.targeting.includewinners", {"auction": {"targeting": {"includewinners": False}}}, {}, {}, {}, {},
     _no_key("hb_pb", "hb_pb_alpha")),
    ("java auction.targeting.includewinners: request wins", {"auction": {"targeting": {"includewinners": False}}},
     {"includewinners": True}, {}, {}, {}, _keys_are(*ALPHA_KEYS)),
    ("java auction.targeting.includebidderkeys", {"auction": {"targeting": {"includebidderkeys": False}}}, {}, {},
     {}, {}, _no_key("hb_pb_alpha", "hb_pb")),
    ("java auction.targeting.includeformat", {"auction": {"targeting": {"includeformat": True}}}, {}, {}, {}, {},
     _value("hb_format", "banner")),
    ("java auction.targeting.preferdeals", {"auction": {"targeting": {"preferdeals": True}}}, {}, {}, TWO, DEAL,
     _value("hb_bidder", "beta", seat="beta")),
    ("java auction.targeting.alwaysincludedeals",
     {"auction": {"targeting": {"includebidderkeys": False, "alwaysincludedeals": True}}}, {}, {}, TWO, DEAL,
     _value("hb_deal_beta", "deal-1", seat="beta")),
    # PBS-Java BidResponseCreator.resolveAndValidateKeyPrefix: the account's auction.targeting.prefix
    ("java auction.targeting.prefix", {"auction": {"targeting": {"prefix": "jv"}}}, {}, {}, {}, {},
     _value("jv_pb", "1.20")),
    # the PBS-Go key wins where both servers' keys are set
    ("go key wins over java key", {"targeting_prefix": "go", "auction": {"targeting": {"prefix": "jv"}}}, {}, {}, {},
     {}, _value("go_pb", "1.20")),
    # PBS-Java BidResponseCreator.resolveTruncateAttrChars: the account's auction.truncate_target_attr
    ("java auction.truncate_target_attr", {"auction": {"truncate_target_attr": 14}}, {}, {}, {}, {},
     _value("hb_bidder_alph", "alpha")),
    # PBS-Java Ortb2RequestFactory.resolveIntegration
    ("java auction.default_integration", {"auction": {"default_integration": "acme"}}, None, {}, {}, {},
     _integration("acme")),
    # PBS-Java CpmRange.resolveRoundingMode
    ("java auction.bid_rounding", {"auction": {"bid_rounding": "up"}}, {}, {}, {}, {}, _value("hb_pb", "1.30")),
    # PBS-Java BidderRequestPreferredMediaProcessor
    ("java auction.preferredmediatype", {"auction": {"preferredmediatype": {"alpha": "video"}}}, {}, {}, MULTI, {},
     _media(["video"])),
]


@pytest.fixture
def single_format_generic(monkeypatch: pytest.MonkeyPatch) -> None:
    """The generic adapter (and so its aliases alpha and beta) without multi-format support."""
    definitions = registry.read_definitions()
    definitions["generic"] = {**definitions["generic"], "multiformat_supported": False}
    monkeypatch.setattr(registry, "read_definitions", lambda *_args: definitions)


@pytest.mark.parametrize(
    ("account", "targeting", "prebid", "imp", "more_bids", "check"),
    [row[1:] for row in ROWS],
    ids=[row[0] for row in ROWS],
)
async def test_account_targeting_keys(
    make_client, bidders: MockBidders, data_dir: Path, single_format_generic: None,
    account: dict[str, Any], targeting: dict[str, Any] | None, prebid: dict[str, Any], imp: dict[str, Any],
    more_bids: dict[str, Any], check: Check,
) -> None:  # fmt: skip
    write_account(data_dir, "1001", account)
    bidders.bids["alpha"] = [bid("imp-1", 1.26)]
    bidders.bids.update(more_bids)
    client = await make_client(bidder_config(bidders, "alpha", "beta"))
    response = await client.post("/openrtb2/auction", data=json.dumps(_request(targeting, prebid, **dict(imp))))
    body = await response.json()
    assert response.status == 200, body
    check(body, bidders)


def test_default_integration_resolves_from_either_spelling() -> None:
    """PBS-Go's default_integration, else PBS-Java's auction.default_integration."""
    settings = build(AccountSettings, {"default_integration": "acme"}, "", [], strict=False)
    resolved = account_targeting(settings)
    assert resolved is not None and resolved.integration == "acme"
    java = build(AccountSettings, {"auction": {"default_integration": "jv"}}, "", [], strict=False)
    assert account_targeting(java).integration == "jv"  # type: ignore[union-attr]


def test_an_account_without_these_keys_resolves_to_none_once() -> None:
    """The usual account costs one look-up per auction: nothing to resolve, and the same answer kept."""
    settings = AccountSettings()
    assert account_targeting(settings) is None
    assert account_targeting(settings) is None
    with_rounding = build(AccountSettings, {"auction": {"bid_rounding": "up"}}, "", [], strict=False)
    resolved = account_targeting(with_rounding)
    assert resolved is not None and resolved.rounding == "up"
    assert account_targeting(with_rounding) is resolved
