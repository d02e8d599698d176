"""OpenRTB 2.4/2.5 <-> 2.6 field places (hbserver.auction.request.ortb), rule for rule against PBS-Go's
openrtb_ext/convert_up.go and convert_down.go. Each row names the PBS-Go test case (or, where
PBS-Go has none, the line of code) it carries over: CU = openrtb_ext/convert_up_test.go,
CD = openrtb_ext/convert_down_test.go."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from hbserver.auction.request.ortb import downconvert, upconvert

S1 = {"complete": 1, "nodes": [], "ver": "2"}
S2 = {"complete": 0, "nodes": [{"asi": "b.example", "sid": "2", "hp": 1}], "ver": "1.0"}
EIDS = [{"source": "42"}]


def row(ident: str, given: dict, expected: dict) -> Any:
    return pytest.param(given, expected, id=ident)


UP = [
    row(
        "CU TestConvertUpTo26 2.4 -> 2.6",
        {
            "id": "anyID",
            "imp": [{"id": "1", "ext": {"prebid": {"is_rewarded_inventory": 1}}}],
            "ext": {"schain": S1},
            "regs": {"ext": {"gdpr": 1, "us_privacy": "3"}},
            "user": {"ext": {"consent": "1", "eids": EIDS}},
        },
        {
            "id": "anyID",
            # PBS-Go validates before it rebuilds the imp, so the emptied prebid is still there then
            "imp": [{"id": "1", "ext": {"prebid": {}}, "rwdd": 1}],
            "source": {"schain": S1},
            "regs": {"gdpr": 1, "us_privacy": "3"},
            "user": {"consent": "1", "eids": EIDS},
        },
    ),
    row(
        "CU TestConvertUpTo26 2.4 -> 2.6 + Other Ext Fields",
        {
            "imp": [{"id": "1", "ext": {"prebid": {"is_rewarded_inventory": 1}, "other": "otherImp"}}],
            "ext": {"schain": S1, "other": "otherExt"},
            "regs": {"ext": {"gdpr": 1, "other": "otherRegs", "us_privacy": "3"}},
            "user": {"ext": {"consent": "1", "eids": EIDS, "other": "otherUser"}},
        },
        {
            "imp": [{"id": "1", "ext": {"prebid": {}, "other": "otherImp"}, "rwdd": 1}],
            "ext": {"other": "otherExt"},
            "source": {"schain": S1},
            "regs": {"gdpr": 1, "us_privacy": "3", "ext": {"other": "otherRegs"}},
            "user": {"consent": "1", "eids": EIDS, "ext": {"other": "otherUser"}},
        },
    ),
    row(
        "CU TestConvertUpTo26 2.5 -> 2.6 + Other Ext Fields",
        {"source": {"ext": {"schain": S1, "other": "otherSource"}}, "ext": {"other": "otherExt"}},
        {"source": {"schain": S1, "ext": {"other": "otherSource"}}, "ext": {"other": "otherExt"}},
    ),
    row("CU TestMoveSupplyChainFrom24To25 Source Doesn't Exist", {"ext": {"schain": S1}}, {"source": {"schain": S1}}),
    row(
        "CU TestMoveSupplyChainFrom24To25 Source Exists",
        {"source": {"tid": "t"}, "ext": {"schain": S1}},
        {"source": {"tid": "t", "schain": S1}},
    ),
    row(
        "CU TestMoveSupplyChainFrom24To25 2.4 Dropped",
        {"source": {"ext": {"schain": S1}}, "ext": {"schain": S2}},
        {"source": {"schain": S1}},
    ),
    row(
        "convert_up.go moveSupplyChainFrom24To25 2.4 dropped under a 2.6 chain",
        {"source": {"schain": S1}, "ext": {"schain": S2, "prebid": {}}},
        {"source": {"schain": S1}, "ext": {"prebid": {}}},
    ),
    row(
        "CU TestConvertSupplyChainFrom25To26 2.5 Dropped",
        {"source": {"schain": S1, "ext": {"schain": S2}}},
        {"source": {"schain": S1}},
    ),
    row("CU TestMoveGDPRFrom25To26 2.5 Migrated To 2.6", {"regs": {"ext": {"gdpr": 0}}}, {"regs": {"gdpr": 0}}),
    row("CU TestMoveGDPRFrom25To26 2.5 Dropped", {"regs": {"gdpr": 0, "ext": {"gdpr": 1}}}, {"regs": {"gdpr": 0}}),
    row(
        "convert_up.go moveGDPRFrom25To26 null", {"regs": {"ext": {"gdpr": None, "x": 1}}}, {"regs": {"ext": {"x": 1}}}
    ),
    row("CU TestMoveConsentFrom25To26 2.5 Migrated", {"user": {"ext": {"consent": "1"}}}, {"user": {"consent": "1"}}),
    row(
        "CU TestMoveConsentFrom25To26 2.5 Dropped",
        {"user": {"consent": "1", "ext": {"consent": "2"}}},
        {"user": {"consent": "1"}},
    ),
    row(
        "convert_up.go moveConsentFrom25To26 an empty 2.6 consent is unset",
        {"user": {"consent": "", "ext": {"consent": "2"}}},
        {"user": {"consent": "2"}},
    ),
    row("convert_up.go moveConsentFrom25To26 empty 2.5 consent", {"user": {"ext": {"consent": ""}}}, {"user": {}}),
    row(
        "CU TestMoveUSPrivacyFrom25To26 2.5 Migrated",
        {"regs": {"ext": {"us_privacy": "1"}}},
        {"regs": {"us_privacy": "1"}},
    ),
    row(
        "CU TestMoveUSPrivacyFrom25To26 2.5 Dropped",
        {"regs": {"us_privacy": "1", "ext": {"us_privacy": "2"}}},
        {"regs": {"us_privacy": "1"}},
    ),
    row(
        "convert_up.go moveUSPrivacyFrom25To26 an empty 2.6 string is unset",
        {"regs": {"us_privacy": "", "ext": {"us_privacy": "2"}}},
        {"regs": {"us_privacy": "2"}},
    ),
    row("convert_up.go moveUSPrivacyFrom25To26 empty 2.5", {"regs": {"ext": {"us_privacy": ""}}}, {"regs": {}}),
    row("CU TestMoveEIDFrom25To26 2.5 Migrated To 2.6", {"user": {"ext": {"eids": EIDS}}}, {"user": {"eids": EIDS}}),
    row(
        "CU TestMoveEIDFrom25To26 2.5 Dropped",
        {"user": {"eids": EIDS, "ext": {"eids": [{"source": "2"}]}}},
        {"user": {"eids": EIDS}},
    ),
    row("convert_up.go moveEIDFrom25To26 empty 2.5 eids", {"user": {"ext": {"eids": []}}}, {"user": {}}),
    row(
        "CU TestMoveRewardedFromPrebidExtTo26 2.5 Dropped",
        {"imp": [{"id": "1", "rwdd": 1, "ext": {"prebid": {"is_rewarded_inventory": 2, "bidder": {}}}}]},
        {"imp": [{"id": "1", "rwdd": 1, "ext": {"prebid": {"bidder": {}}}}]},
    ),
    row(
        "CU TestMoveRewardedFromPrebidExtTo26 Not Present - Null Prebid Ext",
        {"imp": [{"id": "1", "ext": {"prebid": None}}]},
        {"imp": [{"id": "1", "ext": {"prebid": None}}]},
    ),
    row(
        "convert_up.go moveRewardedFromPrebidExtTo26 a null value is left alone",
        {"imp": [{"id": "1", "ext": {"prebid": {"is_rewarded_inventory": None}}}]},
        {"imp": [{"id": "1", "ext": {"prebid": {"is_rewarded_inventory": None}}}]},
    ),
    row(
        "convert_up.go moveRewardedFromPrebidExtTo26 rwdd 0 is unset",
        {"imp": [{"id": "1", "rwdd": 0, "ext": {"prebid": {"is_rewarded_inventory": 1}}}]},
        {"imp": [{"id": "1", "rwdd": 1, "ext": {"prebid": {}}}]},
    ),
    row(
        "convert_up.go moves no GPP: regs.ext.gpp stays (and is not read as GPP)",
        {"regs": {"ext": {"gpp": "DBAA", "gpp_sid": [2], "gdpr": 1}}},
        {"regs": {"gdpr": 1, "ext": {"gpp": "DBAA", "gpp_sid": [2]}}},
    ),
    row(
        "CU TestConvertUpTo26 nothing to move",
        {"id": "r", "regs": {"gpp": "DBAA", "gpp_sid": [2]}, "imp": [{"id": "1", "rwdd": 1}]},
        {"id": "r", "regs": {"gpp": "DBAA", "gpp_sid": [2]}, "imp": [{"id": "1", "rwdd": 1}]},
    ),
]


@pytest.mark.parametrize(("given", "expected"), UP)
def test_upconvert(given: dict, expected: dict) -> None:
    before = copy.deepcopy(given)
    assert upconvert(given) == expected
    assert given == before  # the request is never mutated


DOWN = [
    row(
        "CD TestConvertDownTo25 2.6-to-2.5",
        {
            "id": "anyID",
            "imp": [{"id": "1", "rwdd": 1}],
            "source": {"schain": S1},
            "regs": {"gdpr": 1, "us_privacy": "3"},
            "user": {"consent": "1", "eids": EIDS},
        },
        {
            "id": "anyID",
            "imp": [{"id": "1", "ext": {"prebid": {"is_rewarded_inventory": 1}}}],
            "source": {"ext": {"schain": S1}},
            "regs": {"ext": {"gdpr": 1, "us_privacy": "3"}},
            "user": {"ext": {"consent": "1", "eids": EIDS}},
        },
    ),
    row(
        "CD TestConvertDownTo25 2.6-to-2.5-OtherExtFields",
        {
            "imp": [{"id": "1", "rwdd": 1, "ext": {"other": "otherImp"}}],
            "ext": {"other": "otherExt"},
            "source": {"schain": S1, "ext": {"other": "otherSource"}},
            "regs": {"gdpr": 1, "us_privacy": "3", "ext": {"other": "otherRegs"}},
            "user": {"consent": "1", "eids": EIDS, "ext": {"other": "otherUser"}},
        },
        {
            "imp": [{"id": "1", "ext": {"other": "otherImp", "prebid": {"is_rewarded_inventory": 1}}}],
            "ext": {"other": "otherExt"},
            "source": {"ext": {"other": "otherSource", "schain": S1}},
            "regs": {"ext": {"gdpr": 1, "other": "otherRegs", "us_privacy": "3"}},
            "user": {"ext": {"consent": "1", "eids": EIDS, "other": "otherUser"}},
        },
    ),
    row(
        "CD TestConvertDownTo25 GPP stays at the top level (ConvertDownTo25 has no GPP move)",
        {"regs": {"gpp": "DBAA", "gpp_sid": [2], "gdpr": 1, "ext": {"dsa": {"required": 1}}}},
        {"regs": {"gpp": "DBAA", "gpp_sid": [2], "ext": {"dsa": {"required": 1}, "gdpr": 1}}},
    ),
    row(
        "CD TestMoveSupplyChainFrom26To25 2.5-overwritten",
        {"source": {"schain": S1, "ext": {"schain": S2}}},
        {"source": {"ext": {"schain": S1}}},
    ),
    row(
        "CD TestMoveGDPRFrom26To25 2.5-overwritten",
        {"regs": {"gdpr": 0, "ext": {"gdpr": 1}}},
        {"regs": {"ext": {"gdpr": 0}}},
    ),
    row(
        "convert_down.go moveGDPRFrom26To25 null is not moved",
        {"regs": {"gdpr": None, "coppa": 1}},
        {"regs": {"coppa": 1}},
    ),
    row(
        "CD TestMoveConsentFrom26To25 2.5-overwritten",
        {"user": {"consent": "1", "ext": {"consent": "2"}}},
        {"user": {"ext": {"consent": "1"}}},
    ),
    row(
        "convert_down.go moveConsentFrom26To25 empty is not moved",
        {"user": {"id": "u", "consent": ""}},
        {"user": {"id": "u"}},
    ),
    row(
        "CD TestMoveUSPrivacyFrom26To25 2.5-overwritten",
        {"regs": {"us_privacy": "1", "ext": {"us_privacy": "2"}}},
        {"regs": {"ext": {"us_privacy": "1"}}},
    ),
    row("convert_down.go moveUSPrivacyFrom26To25 empty is not moved", {"regs": {"us_privacy": ""}}, {"regs": {}}),
    row(
        "CD TestMoveEIDFrom26To25 2.5-overwritten",
        {"user": {"eids": EIDS, "ext": {"eids": [{"source": "2"}]}}},
        {"user": {"ext": {"eids": EIDS}}},
    ),
    row("CD TestMoveEIDFrom26To25 2.6-migratedto-2.5-empty", {"user": {"eids": []}}, {"user": {}}),
    row(
        "CD TestMoveEIDFrom26To25 empty eids clear the 2.5 place (UserExt.marshal)",
        {"user": {"eids": [], "ext": {"eids": EIDS, "other": 1}}},
        {"user": {"ext": {"other": 1}}},
    ),
    row(
        "CD TestMoveRewardedFrom26ToPrebidExt 2.5-overwritten",
        {"imp": [{"id": "1", "rwdd": 1, "ext": {"prebid": {"is_rewarded_inventory": 2}}}]},
        {"imp": [{"id": "1", "ext": {"prebid": {"is_rewarded_inventory": 1}}}]},
    ),
    row(
        "convert_down.go moveRewardedFrom26ToPrebidExt rwdd 0 is not moved",
        {"imp": [{"id": "1", "rwdd": 0, "ext": {"bidder": {}}}]},
        {"imp": [{"id": "1", "ext": {"bidder": {}}}]},
    ),
    row(
        "CD TestMoveSupplyChainFrom26To25 notpresent-source-schain",
        {"source": {"tid": "t"}, "regs": {"coppa": 1}, "user": {"id": "u"}, "imp": [{"id": "1"}]},
        {"source": {"tid": "t"}, "regs": {"coppa": 1}, "user": {"id": "u"}, "imp": [{"id": "1"}]},
    ),
]


@pytest.mark.parametrize(("given", "expected"), DOWN)
@pytest.mark.parametrize("memo", [None, {}], ids=["alone", "memo"])
def test_downconvert(given: dict, expected: dict, memo: dict | None) -> None:
    before = copy.deepcopy(given)
    own = {**given, "imp": list(given["imp"])} if "imp" in given else dict(given)  # as split_request makes it
    assert downconvert(own, memo) == expected
    assert given == before  # the shared objects are copied, never changed


@pytest.mark.parametrize(("given", "expected"), UP)
def test_what_a_25_bidder_gets_reads_back_as_the_26_request(given: dict, expected: dict) -> None:
    """ConvertUpTo26 of what ConvertDownTo25 made is the 2.6 request again (up to the empty
    ``imp.ext.prebid`` the rewarded flag leaves behind)."""
    assert _no_empty_prebid(upconvert(downconvert(copy.deepcopy(expected)))) == _no_empty_prebid(expected)


def _no_empty_prebid(request: dict) -> dict:
    out = copy.deepcopy(request)
    for imp in out.get("imp") or ():
        ext = imp.get("ext")
        if isinstance(ext, dict) and ext.get("prebid") == {}:
            del ext["prebid"]
            if not ext:
                del imp["ext"]
    return out
