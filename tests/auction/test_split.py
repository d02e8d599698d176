"""The per-bidder requests (``split_request``) in OpenRTB 2.5 and 2.6 places: a 2.5 bidder still
gets every moved field in its 2.5 place, including an ``rwdd`` added by per-bidder imp first-party
data, and a request with nothing to move reaches it unchanged."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from hbserver.auction.exchange.privacy import AuctionPrivacy
from hbserver.auction.exchange.split import split_request
from hbserver.auction.request.ortb import upconvert
from hbserver.auction.request.validate import validate_request
from hbserver.bidders.registry import build_registry
from hbserver.privacy.activity import ActivityControl
from hbserver.privacy.regs import EMPTY_REGS
from tests.conftest import make_config

# alpha speaks OpenRTB 2.5 (generic's default), beta 2.6
REGISTRY = build_registry(
    make_config(
        adapters={
            "alpha": {"alias_of": "generic", "endpoint": "http://alpha.example/"},
            "beta": {"alias_of": "generic", "endpoint": "http://beta.example/", "openrtb_version": "2.6"},
        }
    )
)
NO_PRIVACY = AuctionPrivacy(
    regs=EMPTY_REGS, gdpr=None, ccpa_provided=False, ccpa=False, nosale=None, lmt=False, coppa=False, activities=None
)


def with_activities(activities: ActivityControl) -> AuctionPrivacy:
    return dataclasses.replace(NO_PRIVACY, activities=activities if activities.any() else None)


def imp(imp_id: str = "imp-1", **prebid: Any) -> dict[str, Any]:
    return {
        "id": imp_id,
        "banner": {"format": [{"w": 300, "h": 250}]},
        "ext": {"prebid": {"bidder": {"alpha": {"p": 1}, "beta": {"p": 2}}, **prebid}},
    }


def split(incoming: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each bidder's request for ``incoming``, as the auction makes them (upconverted, validated);
    the request itself must come out unchanged."""
    request = upconvert({"id": "req-1", "site": {"page": "https://news.example/a"}, **incoming})
    before = copy.deepcopy(request)
    validated = validate_request(request, REGISTRY, lambda _bidder, _params: None)
    out = {b.name: b.request for b in split_request(request, validated, {}, NO_PRIVACY)}
    assert request == before
    assert list(out) == ["alpha", "beta"]
    return out


# (what the request carries, what the 2.5 bidder gets there, what the 2.6 bidder gets there)
MOVED = [
    pytest.param({"regs": {"gdpr": 1}}, {"regs": {"ext": {"gdpr": 1}}}, {"regs": {"gdpr": 1}}, id="regs.gdpr"),
    pytest.param(  # arriving in the 2.5 place: upconverted, then back for the 2.5 bidder
        {"regs": {"ext": {"gdpr": 0}}}, {"regs": {"ext": {"gdpr": 0}}}, {"regs": {"gdpr": 0}}, id="regs.ext.gdpr"
    ),
    pytest.param(
        {"regs": {"us_privacy": "1YNN", "coppa": 0}},
        {"regs": {"coppa": 0, "ext": {"us_privacy": "1YNN"}}},
        {"regs": {"us_privacy": "1YNN", "coppa": 0}},
        id="regs.us_privacy",
    ),
    pytest.param(  # PBS-Go's ConvertDownTo25 does not move GPP (openrtb_ext/convert_down.go)
        {"regs": {"gpp": "DBAA", "gpp_sid": [2], "gdpr": 1, "ext": {"dsa": {"required": 1}}}},
        {"regs": {"gpp": "DBAA", "gpp_sid": [2], "ext": {"dsa": {"required": 1}, "gdpr": 1}}},
        {"regs": {"gpp": "DBAA", "gpp_sid": [2], "gdpr": 1, "ext": {"dsa": {"required": 1}}}},
        id="regs.gpp-stays-at-the-top-level",
    ),
    pytest.param(
        {"user": {"id": "u1", "consent": "CONSENT"}},
        {"user": {"id": "u1", "ext": {"consent": "CONSENT"}}},
        {"user": {"id": "u1", "consent": "CONSENT"}},
        id="user.consent",
    ),
    pytest.param(
        {"user": {"ext": {"eids": [{"source": "s.example", "uids": [{"id": "e1"}]}]}}},
        {"user": {"ext": {"eids": [{"source": "s.example", "uids": [{"id": "e1"}]}]}}},
        {"user": {"eids": [{"source": "s.example", "uids": [{"id": "e1"}]}]}},
        id="user.ext.eids",
    ),
    pytest.param(
        {"source": {"tid": "t1", "schain": {"ver": "1.0", "complete": 1, "nodes": []}}},
        {"source": {"tid": "t1", "ext": {"schain": {"ver": "1.0", "complete": 1, "nodes": []}}}},
        {"source": {"tid": "t1", "schain": {"ver": "1.0", "complete": 1, "nodes": []}}},
        id="source.schain",
    ),
]


@pytest.mark.parametrize(("incoming", "for_25", "for_26"), MOVED)
def test_moved_fields_reach_each_bidder_in_its_version_place(incoming, for_25, for_26):
    out = split({**incoming, "imp": [imp()]})
    alpha, beta = out["alpha"], out["beta"]
    for key, value in for_25.items():
        assert alpha[key] == value
    for key, value in for_26.items():
        assert beta[key] == value
    assert [i["ext"] for i in alpha["imp"]] == [{"bidder": {"p": 1}}] and "rwdd" not in alpha["imp"][0]


@pytest.mark.parametrize(
    "rewarded",
    [
        pytest.param({**imp("imp-2"), "rwdd": 1}, id="imp.rwdd"),
        pytest.param(imp("imp-2", is_rewarded_inventory=1), id="imp.ext.prebid.is_rewarded_inventory"),
    ],
)
def test_rewarded_imp_reaches_each_bidder_in_its_version_place(rewarded):
    first, second = imp("imp-1"), copy.deepcopy(rewarded)
    out = split({"imp": [first, second]})
    alpha_imps, beta_imps = out["alpha"]["imp"], out["beta"]["imp"]
    assert [i["ext"] for i in alpha_imps] == [
        {"bidder": {"p": 1}},
        {"bidder": {"p": 1}, "prebid": {"is_rewarded_inventory": 1}},
    ]
    assert "rwdd" not in alpha_imps[0] and "rwdd" not in alpha_imps[1]
    assert [i.get("rwdd") for i in beta_imps] == [None, 1]
    assert [i["ext"] for i in beta_imps] == [{"bidder": {"p": 2}}, {"bidder": {"p": 2}}]


@pytest.mark.parametrize(
    ("fpd", "alpha_prebid", "alpha_rwdd", "beta_rwdd"),
    [
        pytest.param({"alpha": {"rwdd": 1}, "beta": {"rwdd": 1}}, {"is_rewarded_inventory": 1}, None, 1, id="both"),
        pytest.param({"alpha": {"rwdd": 1}}, {"is_rewarded_inventory": 1}, None, None, id="the-25-bidder"),
        pytest.param({"beta": {"rwdd": 1}}, None, None, 1, id="the-26-bidder"),
        pytest.param({"beta": {"rwdd": 1}, "alpha": {"instl": 1}}, None, None, 1, id="other-fpd-for-the-25-bidder"),
    ],
)
def test_rewarded_from_a_bidders_imp_fpd(fpd, alpha_prebid, alpha_rwdd, beta_rwdd):
    """Nothing in the request itself is 2.6: only the per-bidder imp data adds rwdd."""
    out = split({"imp": [imp(imp=fpd)]})
    [alpha_imp], [beta_imp] = out["alpha"]["imp"], out["beta"]["imp"]
    assert alpha_imp["ext"].get("prebid") == alpha_prebid
    assert alpha_imp.get("rwdd") == alpha_rwdd and beta_imp.get("rwdd") == beta_rwdd
    assert beta_imp["ext"] == {"bidder": {"p": 2}}  # a 2.6 bidder keeps the 2.6 place
    if "instl" in fpd.get("alpha", {}):
        assert alpha_imp["instl"] == 1
    for name in ("alpha", "beta"):
        assert "regs" not in out[name] and "user" not in out[name]


def test_nothing_to_move_leaves_the_25_bidders_request_as_it_was():
    regs = {"coppa": 0, "ext": {"dsa": {"required": 1}}}
    user = {"id": "u1", "ext": {"data": 1}}
    source = {"tid": "t1"}
    incoming_imp = imp(options={"echovideoattrs": True})
    out = split({"regs": regs, "user": user, "source": source, "imp": [incoming_imp]})
    alpha = out["alpha"]
    # the very objects of the request: nothing copied, no 2.5 ext added
    assert alpha["regs"] is regs and alpha["user"] is user and alpha["source"] is source
    assert (regs, user, source) == (
        {"coppa": 0, "ext": {"dsa": {"required": 1}}},
        {"id": "u1", "ext": {"data": 1}},
        {"tid": "t1"},
    )
    [alpha_imp] = alpha["imp"]
    assert "rwdd" not in alpha_imp
    assert alpha_imp["ext"] == {"bidder": {"p": 1}, "prebid": {"options": {"echovideoattrs": True}}}
    assert set(alpha) == {"id", "site", "regs", "user", "source", "imp"}
    assert {k: v for k, v in out["beta"].items() if k != "imp"} == {k: v for k, v in alpha.items() if k != "imp"}


def test_without_regs_or_user_none_is_added():
    out = split({"imp": [imp()]})
    for name in ("alpha", "beta"):
        assert set(out[name]) == {"id", "site", "imp"}
        assert "rwdd" not in out[name]["imp"][0] and "prebid" not in out[name]["imp"][0]["ext"]


# PBS-Go exchange/utils.go cleanOpenRTBRequests: rs.bidderInfo[bidder as the request spells it]
# must declare openrtb.version "2.6", else ConvertDownTo25; a host alias carries its parent's
# version (config/bidderinfo.go: an alias without openrtb takes its parent's).
REGISTRY_ALIASES = build_registry(
    make_config(
        adapters={
            "beta": {"alias_of": "generic", "endpoint": "http://beta.example/", "openrtb_version": "2.6"},
            # rubicon declares 2.6 (and is off until the host turns it on)
            "gamma2": {"alias_of": "rubicon", "endpoint": "http://gamma2.example/", "disabled": False},
        }
    )
)


@pytest.mark.parametrize(
    ("name", "aliases", "places"),
    [
        pytest.param("beta", {}, "2.6", id="declared-2.6"),
        pytest.param("generic", {}, "2.5", id="generic-default-2.5"),
        pytest.param("gamma2", {}, "2.6", id="host-alias-of-a-2.6-bidder"),
        pytest.param("BETA", {}, "2.5", id="other-spelling-has-no-bidder-info"),
        pytest.param("mine", {"mine": "beta"}, "2.5", id="request-alias-has-no-bidder-info"),
    ],
)
def test_which_bidders_get_26_places(name: str, aliases: dict[str, str], places: str) -> None:
    banner = {"id": "imp-1", "banner": {"format": [{"w": 300, "h": 250}]}, "ext": {"prebid": {"bidder": {name: {}}}}}
    request = upconvert({
        "id": "req-1",
        "site": {"page": "https://news.example/a"},
        "imp": [banner],
        "regs": {"gdpr": 1, "gpp": "DBAA", "gpp_sid": [2]},
        "ext": {"prebid": {"aliases": aliases}} if aliases else {},
    })  # fmt: skip
    validated = validate_request(request, REGISTRY_ALIASES, lambda _bidder, _params: None)
    [bidder] = split_request(request, validated, {}, NO_PRIVACY)
    expected = {"gdpr": 1, "gpp": "DBAA", "gpp_sid": [2]}
    if places == "2.5":  # GPP stays at the top level for a 2.5 bidder too
        expected = {"gpp": "DBAA", "gpp_sid": [2], "ext": {"gdpr": 1}}
    assert (bidder.name, bidder.request["regs"]) == (name, expected)


# --- account activity controls (privacy.allowactivities, component type "bidder") --------------

FULL_USER = {
    "id": "u1", "buyeruid": "b1", "yob": 1980, "gender": "F", "keywords": "k", "kwarray": ["k"],
    "data": [{"id": "d"}], "eids": [{"source": "x.example", "uids": [{"id": "e1"}]}],
    "geo": {"lat": 51.123456, "lon": -0.98765, "country": "GBR"},
    "ext": {"data": {"k": 1}, "other": 1},
}  # fmt: skip
FULL_DEVICE = {
    "ip": "203.0.113.77", "ipv6": "2001:db8:abcd:12ff::1", "ifa": "ifa-1", "dpidmd5": "d5", "ua": "UA",
    "geo": {"lat": 40.712776, "lon": -74.005974, "city": "NYC"},
}  # fmt: skip
# PBS-Go's scrubGeoPrecision: int(x * 100 + 0.5) / 100, so negative values round towards zero
ROUNDED_DEVICE_GEO = {"lat": 40.71, "lon": -74.0, "city": "NYC"}


# both speak 2.6, so every field stays where the request has it
REGISTRY_26 = build_registry(
    make_config(
        adapters={
            name: {"alias_of": "generic", "endpoint": f"http://{name}.example/", "openrtb_version": "2.6"}
            for name in ("alpha", "beta")
        }
    )
)


def deny(activity: str, bidder: str = "alpha") -> ActivityControl:
    return ActivityControl.from_config(
        {activity: {"rules": [{"condition": {"componentType": ["bidder"], "componentName": [bidder]}, "allow": False}]}}
    )


def split_with(activities: ActivityControl) -> tuple[dict[str, dict[str, Any]], list[str]]:
    tid_imp = imp()
    tid_imp["ext"]["tid"] = "imp-tid"
    request = upconvert({
        "id": "req-1", "site": {"page": "https://news.example/a"}, "imp": [tid_imp],
        "user": FULL_USER, "device": FULL_DEVICE, "source": {"tid": "src-tid", "fd": 1},
    })  # fmt: skip
    before = copy.deepcopy(request)
    validated = validate_request(request, REGISTRY_26, lambda _bidder, _params: None)
    blocked: dict[str, Any] = {}
    out = split_request(request, validated, {}, with_activities(activities), blocked)
    assert request == before  # the original (and so every other bidder's copy) untouched
    return {b.name: b.request for b in out}, list(blocked)


# (denied activity for alpha, what alpha's request holds there)
ACTIVITY_CASES = [
    pytest.param("transmitUfpd", {
        "user": {"geo": FULL_USER["geo"], "ext": {"other": 1}},
        "device": {k: v for k, v in FULL_DEVICE.items() if k not in ("ifa", "dpidmd5")},
    }, id="transmitUfpd"),
    pytest.param("transmitEids", {
        "user": {k: v for k, v in FULL_USER.items() if k != "eids"},
    }, id="transmitEids"),
    pytest.param("transmitPreciseGeo", {
        "user": {**FULL_USER, "geo": {"lat": 51.12, "lon": -0.98, "country": "GBR"}},
        "device": {**FULL_DEVICE, "ip": "203.0.113.0", "ipv6": "2001:db8:abcd:1200::", "geo": ROUNDED_DEVICE_GEO},
    }, id="transmitPreciseGeo"),
    pytest.param("transmitTid", {
        "source": {"fd": 1}, "imp_ext_tid": None,
    }, id="transmitTid"),
]


@pytest.mark.parametrize(("activity", "expected"), ACTIVITY_CASES)
def test_a_denied_transmit_activity_scrubs_that_bidder_only(activity: str, expected: dict[str, Any]) -> None:
    out, blocked = split_with(deny(activity))
    assert blocked == []
    alpha, beta = out["alpha"], out["beta"]
    for key, value in expected.items():
        if key == "imp_ext_tid":
            assert "tid" not in alpha["imp"][0]["ext"]
        else:
            assert alpha[key] == value, key
    # beta (not named by the rule) gets everything
    assert beta["user"] == FULL_USER and beta["device"] == FULL_DEVICE
    assert beta["source"] == {"tid": "src-tid", "fd": 1} and beta["imp"][0]["ext"]["tid"] == "imp-tid"
    untouched = {"user", "device", "source"} - set(expected)
    assert all(alpha[key] == beta[key] for key in untouched)


def test_fetch_bids_denied_keeps_the_bidder_out() -> None:
    out, blocked = split_with(deny("fetchBids", "BETA"))  # names compare case-insensitively
    assert list(out) == ["alpha"] and blocked == ["beta"]
    assert out["alpha"]["user"] == FULL_USER


@pytest.mark.parametrize(
    "controls",
    [
        pytest.param({}, id="none"),
        pytest.param({"fetchBids": {"default": True}}, id="default-allow"),
        pytest.param({"transmitUfpd": {"rules": [{"condition": {"componentType": ["analytics"]}}]}}, id="other-type"),
    ],
)
def test_activities_that_deny_nothing_change_nothing(controls: dict[str, Any]) -> None:
    out, blocked = split_with(ActivityControl.from_config(controls))
    assert blocked == [] and list(out) == ["alpha", "beta"]
    assert out["alpha"]["user"] == FULL_USER and out["alpha"]["device"] == FULL_DEVICE
