"""Account keys PBS-Go and PBS-Java define, honoured with their semantics (issue 42 item 1).

Two tables: PBS-Java's spellings of settings hbserver applies under PBS-Go's names (read through the
account store, as an account file is), and keys whose effect shows end to end through the real app
(cache TTLs, /vtrack TTL, /cookie_sync iframe and priority bidders, event URLs by channel, status).
Each row names the PBS source it carries over.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

import pytest

from hbserver.appkeys import CACHE
from hbserver.config import AccountSettings
from hbserver.metrics import Metrics
from hbserver.stores.account_aliases import normalise
from hbserver.stores.accounts import Account, AccountError, AccountStore
from tests.auction.helpers import banner_imp, bid, bidder_config
from tests.auction.test_auction_endpoint import auction_request, post, seat_bids
from tests.conftest import write_account
from tests.test_cookie_sync import post as sync_post
from tests.test_vtrack import put as vtrack_put


class _Fetcher:
    def __init__(self, account: dict[str, Any]) -> None:
        self.data = json.dumps(account).encode()

    async def fetch_account(self, account_id: str) -> bytes | None:
        return self.data


def _load(account: dict[str, Any], caplog: pytest.LogCaptureFixture) -> tuple[Account, list[str]]:
    store = AccountStore(AccountSettings(), _Fetcher(account), Metrics())
    with caplog.at_level(logging.WARNING, logger="hbserver.accounts"):
        loaded = asyncio.run(store.get("1001"))
    return loaded, [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


S = AccountSettings
# (id, PBS source, account file, what hbserver applies, expected)
ALIASES: list[tuple[str, str, dict[str, Any], Callable[[S], Any], Any]] = [
    ("auction.debug_allow", "PBS-Java AccountAuctionConfig.debugAllow",
     {"auction": {"debug_allow": False}}, lambda s: s.debug_allow, False),
    ("auction.debug-allow", "PBS-Java @JsonAlias debug-allow",
     {"auction": {"debug-allow": False}}, lambda s: s.debug_allow, False),
    ("auction.events.enabled", "PBS-Java AccountEventsConfig.enabled",
     {"auction": {"events": {"enabled": False}}}, lambda s: s.events.enabled, False),
    ("auction.price_floors", "PBS-Java AccountPriceFloorsConfig",
     {"auction": {"price-floors": {"enabled": False, "enforce-floors-rate": 50}}},
     lambda s: (s.price_floors.enabled, s.price_floors.enforce_floors_rate), (False, 50)),
    ("auction.bidadjustments", "PBS-Java AccountAuctionConfig.bidAdjustments",
     {"auction": {"bidadjustments": {"mediatype": {"banner": {"alpha": {"*": [{"adjtype": "multiplier",
                                                                              "value": 0.5}]}}}}}},
     lambda s: s.bidadjustments["mediatype"]["banner"]["alpha"]["*"][0]["value"], 0.5),
    ("auction.privacysandbox.cookiedeprecation", "PBS-Java AccountPrivacySandboxCookieDeprecationConfig",
     {"auction": {"privacysandbox": {"cookiedeprecation": {"enabled": True, "ttlsec": 60}}}},
     lambda s: (s.privacy.privacysandbox.cookiedeprecation.enabled, s.privacy.privacysandbox.cookiedeprecation.ttlsec),
     (True, 60)),
    ("auction.bid_validations", "PBS-Java AccountBidValidationConfig",
     {"auction": {"bid-validations": {"banner-creative-max-size": "enforce"}}},
     lambda s: s.validations.banner_creative_max_size, "enforce"),
    ("auction.banner_cache_ttl", "PBS-Java AccountAuctionConfig.bannerCacheTtl",
     {"auction": {"banner_cache_ttl": 90}}, lambda s: s.cache_ttl.banner, 90),
    ("auction.video_cache_ttl", "PBS-Java AccountAuctionConfig.videoCacheTtl",
     {"auction": {"video-cache-ttl": 120}}, lambda s: s.cache_ttl.video, 120),
    ("privacy.gdpr.enabled", "PBS-Java AccountGdprConfig.enabled",
     {"privacy": {"gdpr": {"enabled": False}}}, lambda s: s.gdpr.enabled, False),
    ("privacy.gdpr.channel_enabled.pbjs", "PBS-Java EnabledForRequestType.pbjs (= PBS-Go web)",
     {"privacy": {"gdpr": {"channel-enabled": {"pbjs": False, "amp": True}}}},
     lambda s: (s.gdpr.channel_enabled.web, s.gdpr.channel_enabled.amp), (False, True)),
    ("privacy.gdpr.purposes.p2", "PBS-Java Purpose (EnforcePurpose basic)",
     {"privacy": {"gdpr": {"purposes": {"p2": {"enforce-purpose": "basic", "enforce-vendors": False,
                                                "vendor-exceptions": ["alpha"]}}}}},
     lambda s: (s.gdpr.purpose2.enforce_purpose, s.gdpr.purpose2.enforce_algo, s.gdpr.purpose2.enforce_vendors,
                s.gdpr.purpose2.vendor_exceptions), (True, "basic", False, ["alpha"])),
    ("privacy.gdpr.purposes.p4.enforce_purpose=no", "PBS-Java EnforcePurpose.no",
     {"privacy": {"gdpr": {"purposes": {"p4": {"enforce_purpose": "no"}}}}},
     lambda s: s.gdpr.purpose4.enforce_purpose, False),
    ("privacy.gdpr.special_features.sf1", "PBS-Java SpecialFeatures.sf1",
     {"privacy": {"gdpr": {"special-features": {"sf1": {"enforce": False, "vendor-exceptions": ["beta"]}}}}},
     lambda s: (s.gdpr.special_feature1.enforce, s.gdpr.special_feature1.vendor_exceptions), (False, ["beta"])),
    ("privacy.gdpr.purpose_one_treatment_interpretation", "PBS-Java PurposeOneTreatmentInterpretation",
     {"privacy": {"gdpr": {"purpose-one-treatment-interpretation": "no-access-allowed"}}},
     lambda s: (s.gdpr.purpose_one_treatment.enabled, s.gdpr.purpose_one_treatment.access_allowed), (True, False)),
    ("privacy.gdpr.basic_enforcement_vendors", "PBS-Java AccountGdprConfig.basicEnforcementVendors",
     {"privacy": {"gdpr": {"basic-enforcement-vendors": ["alpha"]}}},
     lambda s: s.gdpr.basic_enforcement_vendors, ["alpha"]),
    ("privacy.ccpa", "PBS-Java AccountCcpaConfig",
     {"privacy": {"ccpa": {"enabled": True, "channel_enabled": {"pbjs": False}}}},
     lambda s: (s.ccpa.enabled, s.ccpa.channel_enabled.web), (True, False)),
    ("alternate_bidder_codes", "PBS-Java AccountAlternateBidderCodes",
     {"alternate-bidder-codes": {"enabled": True, "bidders": {"pm": {"enabled": True,
                                                                     "allowed-bidder-codes": ["*"]}}}},
     lambda s: (s.alternatebiddercodes.enabled, s.alternatebiddercodes.bidders["pm"].allowedbiddercodes),
     (True, ["*"])),
    ("cookie_sync.coop_sync.default", "PBS-Java AccountCoopSyncConfig (@JsonProperty default)",
     {"cookie-sync": {"coop-sync": {"default": True}, "default-limit": 3}},
     lambda s: (s.cookie_sync.default_coop_sync, s.cookie_sync.default_limit), (True, 3)),
    ("status=active", "PBS-Java AccountStatus.active", {"status": "active"}, lambda s: s.disabled, False),
    ("privacy.gdpr.eea_countries", "PBS-Java AccountGdprConfig.eeaCountries (alpha-2 text; uk, ic, an of its default)",
     {"privacy": {"gdpr": {"eea-countries": "at, de,uk,ic,an,DE"}}}, lambda s: s.gdpr.eea_countries,
     ["AUT", "DEU", "GBR"]),
    # both spellings: PBS-Go's (hbserver's) name wins, key by key
    ("both: debug_allow wins", "hbserver's rule", {"debug_allow": True, "auction": {"debug_allow": False}},
     lambda s: s.debug_allow, True),
    ("both: cache_ttl.banner wins", "hbserver's rule",
     {"cache_ttl": {"banner": 30}, "auction": {"banner_cache_ttl": 90, "video_cache_ttl": 120}},
     lambda s: (s.cache_ttl.banner, s.cache_ttl.video), (30, 120)),
    ("both: gdpr key by key", "hbserver's rule",
     {"gdpr": {"enabled": True}, "privacy": {"gdpr": {"enabled": False, "basic_enforcement_vendors": ["x"]}}},
     lambda s: (s.gdpr.enabled, s.gdpr.basic_enforcement_vendors), (True, ["x"])),
    ("both: default_coop_sync wins", "hbserver's rule",
     {"cookie_sync": {"default_coop_sync": False, "coop_sync": {"default": True}}},
     lambda s: s.cookie_sync.default_coop_sync, False),
]


@pytest.mark.parametrize(("source", "account", "applied", "expected"), [r[1:] for r in ALIASES],
                         ids=[r[0] for r in ALIASES])
def test_pbs_java_spellings_are_applied(caplog, source, account, applied, expected):
    loaded, warnings = _load(account, caplog)
    assert applied(loaded.settings) == expected, source
    assert warnings == []


@pytest.mark.parametrize(
    ("account", "refused"),
    [
        ({"privacy": {"gdpr": {"purposes": {"p2": {"enforce_vendors": False, "eid": {"exceptions": []}}}}}}, False),
        ({"privacy": {"gdpr": {"special_features": {"sf2": {"enforce": True}}}}}, False),
        ({"analytics": {"allow_client_details": True}}, True),
        ({"analytics": {"modules": {"pubstack": {}}}}, True),
        ({"metrics": {"verbosity_level": "basic"}}, True),
    ],
    ids=["purpose-eid", "special-feature-2", "allow-client-details", "analytics-modules",
         "metrics-verbosity"],
)
def test_keys_without_a_counterpart_are_accepted_or_refused(caplog, account, refused):
    """Never only warned about: accepted when the value changes nothing, else the account is refused
    (tests/stores/test_account_refusals.py has a row per key)."""
    if refused:
        with pytest.raises(AccountError):
            _load(account, caplog)
    else:
        _loaded, warnings = _load(account, caplog)
        assert warnings == []


@pytest.mark.parametrize(
    ("account", "problem"),
    [
        ({"status": "paused"}, "status: must be active or inactive"),
        ({"privacy": {"gdpr": {"purposes": {"p1": {"enforce_purpose": "maybe"}}}}}, "enforce_purpose must be"),
    ],
    ids=["status", "enforce-purpose"],
)
def test_values_pbs_java_refuses_are_problems(account, problem):
    _data, problems = normalise(account)
    assert len(problems) == 1 and problem in problems[0]


def test_normalise_leaves_the_file_unchanged():
    account = {"auction": {"debug_allow": False}, "privacy": {"gdpr": {"enabled": False}}}
    before = json.dumps(account)
    normalise(account)
    assert json.dumps(account) == before


# --- end to end through the real app ------------------------------------------------------------

@pytest.mark.parametrize(
    ("account", "request_ttl", "expected"),
    [
        pytest.param({}, None, 300 + 60, id="no account TTL: the host's default"),
        pytest.param({"cache_ttl": {"banner": 100}}, None, 160, id="PBS-Go cache_ttl.banner, plus the minute"),
        pytest.param({"cache_ttl": {"video": 100}}, None, 360, id="PBS-Go cache_ttl.video: not a banner's"),
        pytest.param({"auction": {"banner_cache_ttl": 200}}, None, 260, id="PBS-Java auction.banner_cache_ttl"),
        pytest.param({"cache_ttl": {"banner": 100}, "auction": {"banner_cache_ttl": 200}}, None, 160,
                     id="both: PBS-Go's wins"),
        pytest.param({"cache_ttl": {"banner": 100}}, 50, 50, id="the request's ttlseconds first (PBS-Java)"),
    ],
)
async def test_account_cache_ttl(make_client, bidders, data_dir, account, request_ttl, expected):
    """PBS-Go exchange/auction.go defTTL + cacheTTL; PBS-Java BidResponseCreator.resolveTtl."""
    write_account(data_dir, "1001", account)
    bidders.bids["alpha"] = [bid("imp-1", 2.0, "a1")]
    client = await make_client(bidder_config(bidders, "alpha"))
    service = client.app[CACHE]
    put_many = service.put_many
    seen: list[int] = []

    async def recording(items, timeout):
        seen.extend(item.ttl_seconds for item in items)
        return await put_many(items, timeout)

    service.put_many = recording
    body = auction_request(banner_imp())
    body["ext"]["prebid"]["cache"] = {"bids": {} if request_ttl is None else {"ttlseconds": request_ttl}}
    assert (await post(client, body)).status == 200
    assert seen == [expected]


@pytest.mark.parametrize(
    ("account_ttl", "put_ttl", "expected"),
    [(0, 3600, 3600), (600, 3600, 600), (600, 100, 100), (600, None, 600), (0, None, 300)],
    ids=["no account ttl", "account ttl caps", "the put's smaller", "account ttl when the put has none",
         "neither: the cache default"],
)
async def test_vtrack_ttl(make_client, data_dir, account_ttl, put_ttl, expected):
    """PBS-Java CoreCacheService.resolveVtrackTtl: the smaller positive of the put's and vtrack.ttl."""
    write_account(data_dir, "acc", {"vtrack": {"ttl": account_ttl}})
    client = await make_client({})
    response = await client.post("/vtrack?a=acc", data=json.dumps({"puts": [vtrack_put(ttlseconds=put_ttl)]}))
    [entry] = (await response.json())["responses"]
    store = client.app[CACHE].store
    deadline, _value = store._items[entry["uuid"]]
    assert abs(deadline - store.clock() - expected) < 1


@pytest.mark.parametrize(
    ("account", "filters", "expected"),
    [
        pytest.param({}, None, {"alpha": "redirect", "beta": "iframe"}, id="no account list"),
        pytest.param({"disabled_iframe_bidders": ["BETA"]}, None, {"alpha": "redirect", "beta": "redirect"},
                     id="PBS-Go: a listed bidder gets no iframe"),
        pytest.param({"disabled_iframe_bidders": ["*"]}, None, {"alpha": "redirect", "beta": "redirect"},
                     id="PBS-Go: * disables every iframe"),
        pytest.param({"disabled_iframe_bidders": ["beta"]}, {"image": {"filter": "exclude"}}, {},
                     id="only ever narrower than the request's filter"),
        pytest.param({"disabled_iframe_bidders": ["gamma2"]}, {"iframe": {"bidders": ["beta"]}},
                     {"alpha": "redirect", "beta": "iframe"}, id="another bidder listed: the request's filter holds"),
    ],
)
async def test_disabled_iframe_bidders(make_client, data_dir, account, filters, expected):
    """PBS-Go endpoints/cookie_sync.go applyDisabledIFrameBidders (account list; redirect untouched)."""
    from tests.test_cookie_sync import ADAPTERS

    write_account(data_dir, "acc", {"cookie_sync": account})
    client = await make_client({"adapters": ADAPTERS, "external_url": "https://pbs.test"})
    body: dict[str, Any] = {"gdpr": 0, "account": "acc", "bidders": ["alpha", "beta"]}
    if filters:
        body["filterSettings"] = filters
    document = json.loads((await sync_post(client, body))[1])
    assert {b["bidder"]: b["usersync"]["type"] for b in document["bidder_status"]} == expected


@pytest.mark.parametrize(
    ("account", "expected"),
    [
        pytest.param({"coop_sync": {"default": True}}, 2, id="PBS-Java coop_sync.default: cooperative sync"),
        pytest.param({"coop_sync": {"default": True}, "pri": ["gamma2"]}, {"alpha", "gamma2"},
                     id="PBS-Java pri: prioritized bidders first"),
        pytest.param({"pri": ["gamma2"]}, {"alpha"}, id="pri without coop sync adds nothing"),
    ],
)
async def test_cookie_sync_pri_and_coop_default(make_client, data_dir, account, expected):
    """PBS-Java CoopSyncProvider and PrioritizedCoopSyncProvider (account pri replaces the host's)."""
    from tests.test_cookie_sync import ADAPTERS

    write_account(data_dir, "acc", {"cookie_sync": account})
    client = await make_client({"adapters": ADAPTERS, "external_url": "https://pbs.test"})
    body = {"gdpr": 0, "account": "acc", "bidders": ["alpha"], "limit": 2}
    document = json.loads((await sync_post(client, body))[1])
    offered = {b["bidder"] for b in document["bidder_status"]}
    if isinstance(expected, int):
        assert len(offered) == expected and "alpha" in offered
    else:
        assert offered == expected


@pytest.mark.parametrize(
    ("account", "channel", "asked", "events"),
    [
        pytest.param({}, None, False, True, id="no map: PBS-Go's rule, events.enabled"),
        pytest.param({"analytics": {"auction_events": {"web": True}}}, "web", False, True, id="channel true"),
        pytest.param({"analytics": {"auction_events": {"pbjs": True}}}, "pbjs", False, True,
                     id="pbjs is web, names ignoring case"),
        pytest.param({"analytics": {"auction_events": {"amp": True}}}, "web", False, False, id="channel not listed"),
        pytest.param({"analytics": {"auction_events": {"web": False}}}, "web", False, False, id="channel false"),
        pytest.param({"analytics": {"auction_events": {"web": False}}}, "web", True, True,
                     id="ext.prebid.events asks: the map is not read"),
        pytest.param({"analytics": {"auction-events": {"web": True}}}, None, False, False,
                     id="no channel in the request: none"),
    ],
)
async def test_auction_events_by_channel(make_client, bidders, data_dir, account, channel, asked, events):
    """PBS-Java BidResponseCreator.eventsEnabledForRequest / eventsEnabledForChannel."""
    write_account(data_dir, "1001", account)
    bidders.bids["alpha"] = [bid("imp-1", 2.0, "a1")]
    client = await make_client(bidder_config(bidders, "alpha"))
    body = auction_request(banner_imp())
    if channel:
        body["ext"]["prebid"]["channel"] = {"name": channel, "version": "1"}
    if asked:
        body["ext"]["prebid"]["events"] = {}
    data = await (await post(client, body)).json()
    assert ("events" in seat_bids(data)["alpha"][0]["ext"]["prebid"]) is events


@pytest.mark.parametrize(("status", "code"), [("inactive", 503), ("active", 200)])
async def test_status(make_client, bidders, data_dir, status, code):
    """PBS-Java AccountStatus: inactive refuses the account, as PBS-Go's disabled."""
    write_account(data_dir, "1001", {"status": status})
    bidders.bids["alpha"] = [bid("imp-1", 2.0, "a1")]
    client = await make_client(bidder_config(bidders, "alpha"))
    response = await post(client, auction_request(banner_imp()))
    assert response.status == code
    if code == 503:
        assert "disabled Account ID: 1001" in await response.text()


def test_status_inactive_in_the_store(caplog):
    store = AccountStore(AccountSettings(), _Fetcher({"status": "inactive"}), Metrics())
    with pytest.raises(AccountError) as caught:
        asyncio.run(store.get("1001"))
    assert (caught.value.status, caught.value.reason) == (503, "disabled")
