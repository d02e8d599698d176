"""Account ``privacy.geo.precise_geo_blocked_states`` (hbserver's own; no Prebid Server has it): a
request located in a listed US state reaches bidders without lat/lon and with masked IPs, its coarse
geo kept. The masking is PBS-Go's for transmitPreciseGeo (privacy/scrubber.go ScrubGeoAndDeviceIP)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from hbserver.auction.exchange.privacy import SCRUB_GEO_STATE, read_privacy
from hbserver.config import AccountGeo, AccountPrivacy, AccountSettings, Config, ConfigError
from hbserver.privacy.activity import ActivityControl
from hbserver.privacy.permissions import ALLOW_ALL
from hbserver.stores.accounts import Account
from tests.conftest import make_config

OWN = "hbserver"
CA_GEO = {"country": "USA", "region": "CA", "metro": "807", "lat": 37.7749, "lon": -122.4194, "city": "SF"}
COARSE_CA = {"country": "USA", "region": "CA", "metro": "807", "city": "SF"}


def _account(states: list[str]) -> Account:
    settings = AccountSettings(privacy=AccountPrivacy(geo=AccountGeo(precise_geo_blocked_states=states)))
    return Account("1001", settings, ActivityControl())


def _request(geo: dict[str, Any], user_geo: dict[str, Any] | None = None) -> dict[str, Any]:
    request: dict[str, Any] = {
        "id": "r", "imp": [], "regs": {"gdpr": 0},
        "device": {"ip": "8.8.8.77", "ipv6": "2001:db8:85a3:1234:5678:8a2e:370:7334", "geo": geo},
    }
    if user_geo is not None:
        request["user"] = {"geo": user_geo}
    return request


ROWS = [
    # (id, source, states, device geo, user geo, expected device, expected user geo, scrubbed)
    ("listed-state-loses-precise-geo", OWN, ["CA"], CA_GEO, None,
     {"ip": "8.8.8.0", "ipv6": "2001:db8:85a3:1200::", "geo": COARSE_CA}, None, True),
    ("user-geo-lat-lon-too", OWN, ["CA"], CA_GEO, {"lat": 1.5, "lon": 2.5, "country": "USA"},
     {"ip": "8.8.8.0", "ipv6": "2001:db8:85a3:1200::", "geo": COARSE_CA}, {"country": "USA"}, True),
    ("case-insensitive", OWN, ["ca"], {**CA_GEO, "region": "Ca", "country": "usa"}, None,
     {"ip": "8.8.8.0", "ipv6": "2001:db8:85a3:1200::", "geo": {**COARSE_CA, "region": "Ca", "country": "usa"}},
     None, True),
    ("other-state-untouched", OWN, ["CA", "VA"], {**CA_GEO, "region": "NY"}, None, None, None, False),
    ("other-country-same-region-code", OWN, ["CA"], {**CA_GEO, "country": "ESP"}, None, None, None, False),
    ("no-region", OWN, ["CA"], {"country": "USA", "lat": 1.0}, None, None, None, False),
    ("no-states-configured", OWN, [], CA_GEO, None, None, None, False),
]


@pytest.mark.parametrize(
    ("source", "states", "geo", "user_geo", "device", "expected_user_geo", "scrubbed"),
    [r[1:] for r in ROWS], ids=[r[0] for r in ROWS],
)
def test_precise_geo_blocked_states(source, states, geo, user_geo, device, expected_user_geo, scrubbed) -> None:
    request = _request(geo, user_geo)
    original = copy.deepcopy(request)
    privacy = read_privacy(request, Config(), _account(states), "openrtb2-web", None)
    copied = dict(request)
    reasons = privacy.scrub(copied, "alpha", ALLOW_ALL)
    assert (SCRUB_GEO_STATE in reasons) == scrubbed, source
    assert privacy.any == scrubbed
    assert copied["device"] == (device if scrubbed else original["device"])
    if user_geo is not None:
        assert copied["user"]["geo"] == expected_user_geo
    assert request == original  # the shared request is not changed


@pytest.mark.parametrize("bad", [["California"], ["C1"], [7]], ids=["long", "digit", "not-a-string"])
def test_states_are_two_letter_codes(bad: list[Any]) -> None:
    raw = {"account_defaults": {"privacy": {"geo": {"precise_geo_blocked_states": bad}}}}
    with pytest.raises(ConfigError, match=r"account_defaults\.privacy\.geo\.precise_geo_blocked_states"):
        make_config(raw)
