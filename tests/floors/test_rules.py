"""Rule keys and rule selection: PBS-Go floors/rule_test.go tables translated."""

from __future__ import annotations

import random

import pytest

from hbserver.floors.data import ModelGroup
from hbserver.floors.rules import (
    _scan_rules,
    ad_unit_code_value,
    combination_order,
    create_rule_key,
    device_type_value,
    domain_value,
    find_rule,
    gpt_slot_value,
    media_type_value,
    prepare_rule_combinations,
    pub_domain_value,
    site_domain_value,
    size_value,
)

# ---- TestPrepareRuleCombinations ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        pytest.param(["A"], ["a", "*"], id="n=1"),
        pytest.param(["A", "B"], ["a|b", "a|*", "*|b", "*|*"], id="n=2"),
        pytest.param(
            ["A", "B", "C"], ["a|b|c", "a|b|*", "a|*|c", "*|b|c", "a|*|*", "*|b|*", "*|*|c", "*|*|*"], id="n=3"
        ),
        pytest.param(
            ["A", "B", "C", "D"],
            [
                "a|b|c|d",
                "a|b|c|*",
                "a|b|*|d",
                "a|*|c|d",
                "*|b|c|d",
                "a|b|*|*",
                "a|*|c|*",
                "a|*|*|d",
                "*|b|c|*",
                "*|b|*|d",
                "*|*|c|d",
                "a|*|*|*",
                "*|b|*|*",
                "*|*|c|*",
                "*|*|*|d",
                "*|*|*|*",
            ],
            id="n=4",
        ),
        pytest.param(["*"], ["*"], id="n=1 wildcard"),
        pytest.param(["*", "B"], ["*|b", "*|*"], id="n=2 wildcard 0"),
        pytest.param(["A", "*"], ["a|*", "*|*"], id="n=2 wildcard 1"),
        pytest.param(["*", "*"], ["*|*"], id="n=2 wildcards 0,1"),
        pytest.param(["*", "B", "C"], ["*|b|c", "*|b|*", "*|*|c", "*|*|*"], id="n=3 wildcard 0"),
        pytest.param(["A", "*", "C"], ["a|*|c", "a|*|*", "*|*|c", "*|*|*"], id="n=3 wildcard 1"),
        pytest.param(["A", "B", "*"], ["a|b|*", "a|*|*", "*|b|*", "*|*|*"], id="n=3 wildcard 2"),
        pytest.param(["*", "B", "*"], ["*|b|*", "*|*|*"], id="n=3 wildcards 0,2"),
        pytest.param(["*", "*", "C"], ["*|*|c", "*|*|*"], id="n=3 wildcards 0,1"),
        pytest.param(["A", "*", "*"], ["a|*|*", "*|*|*"], id="n=3 wildcards 1,2"),
    ],
)
def test_prepare_rule_combinations(values, expected):
    assert prepare_rule_combinations(values, "|") == expected


def test_combination_order_follows_go_int64_weights():
    # 6 fields: PBS-Go's weight for field 0 is 1<<64 = 0 and for field 1 is 1<<63 = MinInt64, the
    # others 1<<62..1<<59: one wildcard comes first on field 1, then field 0, then 5..2.
    singles = [flags.index(True) for flags in combination_order(6) if sum(flags) == 1]
    assert singles == [1, 0, 5, 4, 3, 2]
    # 7 fields and more: every weight overflows to 0, the stable sort keeps generation order
    singles7 = [flags.index(True) for flags in combination_order(7) if sum(flags) == 1]
    assert singles7 == [0, 1, 2, 3, 4, 5, 6]
    pairs7 = [tuple(i for i, f in enumerate(flags) if f) for flags in combination_order(7) if sum(flags) == 2]
    assert pairs7[:3] == [(0, 1), (0, 2), (1, 2)]


# ---- TestCreateRuleKeys ---------------------------------------------------------------------------

_CH = {"prebid": {"channel": {"name": "chName", "version": "ver1"}}}


@pytest.mark.parametrize(
    ("request_", "fields", "expected"),
    [
        pytest.param(
            {"site": {"domain": "www.test.com"}, "imp": [{"id": "1234", "banner": {"format": [{"w": 300, "h": 250}]}}]},
            ["mediaType", "size", "domain"],
            ["banner", "300x250", "www.test.com"],
            id="banner size domain",
        ),
        pytest.param(
            {"site": {"domain": "www.test.com"}, "imp": [{"id": "1", "video": {"w": 640, "h": 480, "placement": 1}}]},
            ["mediaType", "size", "domain"],
            ["video", "640x480", "www.test.com"],
            id="video instream",
        ),
        pytest.param(
            {"site": {"domain": "www.test.com"}, "imp": [{"id": "1", "video": {"w": 300, "h": 250, "placement": 2}}]},
            ["mediaType", "size", "domain"],
            ["video-outstream", "300x250", "www.test.com"],
            id="video outstream",
        ),
        pytest.param(
            {
                "site": {"domain": "www.test.com"},
                "imp": [{"id": "1", "tagid": "tag123", "audio": {"maxduration": 300}}],
            },
            ["mediaType", "adUnitCode", "siteDomain"],
            ["audio", "tag123", "www.test.com"],
            id="audio adUnitCode siteDomain",
        ),
        pytest.param(
            {"site": {"domain": "www.test.com"}, "imp": [{"id": "1", "audio": {"maxduration": 300}}]},
            ["mediaType", "adUnitCode", "siteDomain"],
            ["audio", "*", "www.test.com"],
            id="audio adUnitCode *",
        ),
        pytest.param(
            {
                "app": {"domain": "www.test.com", "bundle": "bundle123"},
                "imp": [{"id": "1", "native": {"request": "T"}}],
            },
            ["mediaType", "bundle", "siteDomain"],
            ["native", "bundle123", "www.test.com"],
            id="native bundle siteDomain",
        ),
        pytest.param(
            {
                "app": {"domain": "www.test.com", "bundle": "bundle123"},
                "imp": [{"id": "1", "audio": {"maxduration": 300}, "native": {"request": "T"}}],
            },
            ["mediaType", "bundle", "siteDomain"],
            ["*", "bundle123", "www.test.com"],
            id="two media types",
        ),
        pytest.param(
            {
                "app": {"publisher": {"domain": "www.test.com"}, "bundle": "bundle123"},
                "device": {"geo": {"country": "USA"}, "ua": "tablet"},
                "imp": [{"id": "1", "native": {"request": "T"}}],
                "ext": _CH,
            },
            ["channel", "country", "deviceType"],
            ["chName", "USA", "tablet"],
            id="channel country tablet",
        ),
        pytest.param(
            {
                "app": {"publisher": {"domain": "www.test.com"}},
                "device": {"geo": {"country": "USA"}, "ua": "Windows NT touch"},
                "imp": [{"id": "1", "native": {"request": "T"}}],
                "ext": _CH,
            },
            ["channel", "country", "deviceType"],
            ["chName", "USA", "tablet"],
            id="Windows NT touch tablet",
        ),
        pytest.param(
            {
                "app": {"publisher": {"domain": "www.test.com"}},
                "device": {"geo": {"country": "USA"}, "ua": "Windows NT"},
                "imp": [{"id": "1", "native": {"request": "T"}}],
                "ext": _CH,
            },
            ["channel", "country", "deviceType"],
            ["chName", "USA", "desktop"],
            id="desktop",
        ),
        pytest.param(
            {
                "app": {"publisher": {"domain": "www.test.com"}},
                "device": {"geo": {"country": "USA"}, "ua": "SomeDevice"},
                "imp": [{"id": "1", "banner": {"format": [{"w": 100, "h": 200}, {"w": 200, "h": 300}]}}],
                "ext": {"prebid": {"test": "1"}},
            },
            ["channel", "size", "deviceType"],
            ["*", "*", "desktop"],
            id="no channel, two formats",
        ),
        pytest.param(
            {
                "app": {"publisher": {"domain": "www.test.com"}},
                "device": {"geo": {"country": "USA"}, "ua": "Phone"},
                "imp": [{"id": "1", "native": {"request": "T"}}],
                "ext": _CH,
            },
            ["pubDomain", "country", "deviceType"],
            ["www.test.com", "USA", "phone"],
            id="pubDomain phone",
        ),
        pytest.param(
            {
                "site": {"publisher": {"domain": "www.test.com"}},
                "device": {"geo": {"country": "USA"}},
                "imp": [
                    {
                        "id": "1",
                        "native": {"request": "T"},
                        "ext": {
                            "data": {"adserver": {"name": "gam", "adslot": "adslot123"}, "pbadslot": "pbadslot123"}
                        },
                    }
                ],
                "ext": _CH,
            },
            ["pubDomain", "gptSlot", "deviceType"],
            ["www.test.com", "adslot123", "*"],
            id="gptSlot from gam adslot",
        ),
        pytest.param(
            {
                "site": {"publisher": {"domain": "www.test.com"}},
                "device": {"geo": {"country": "USA"}},
                "imp": [
                    {
                        "id": "1",
                        "native": {"request": "T"},
                        "ext": {
                            "data": {"adserver": {"name": "test", "adslot": "adslot123"}, "pbadslot": "pbadslot123"}
                        },
                    }
                ],
            },
            ["pubDomain", "gptSlot", "deviceType"],
            ["www.test.com", "pbadslot123", "*"],
            id="gptSlot from pbadslot",
        ),
        pytest.param(
            {
                "app": {"publisher": {"domain": "www.test.com"}},
                "imp": [{"id": "1", "native": {"request": "T"}, "ext": {"data": {"pbadslot": "pbadslot123"}}}],
            },
            ["domain", "adUnitCode", "channel"],
            ["www.test.com", "pbadslot123", "*"],
            id="adUnitCode pbadslot",
        ),
        pytest.param(
            {"app": {"publisher": {"domain": "www.test.com"}}, "imp": [{"id": "1", "ext": {"gpid": "gpid_134"}}]},
            ["domain", "adUnitCode", "channel"],
            ["www.test.com", "gpid_134", "*"],
            id="adUnitCode gpid",
        ),
        pytest.param(
            {
                "app": {"publisher": {"domain": "www.test.com"}},
                "imp": [{"id": "1", "native": {}, "ext": {"prebid": {"storedrequest": {"id": "storedid_123"}}}}],
            },
            ["domain", "adUnitCode", "channel"],
            ["www.test.com", "storedid_123", "*"],
            id="adUnitCode stored request",
        ),
        pytest.param(
            {"device": {"geo": {}}, "imp": [{"id": "1"}]},
            ["country", "bundle"],
            ["", "*"],
            id="geo without country is empty, not *",
        ),
        pytest.param(
            {"imp": [{"id": "1"}]},
            ["mediaType", "size", "country", "deviceType", "channel"],
            ["*", "*", "*", "*", "*"],
            id="nothing known",
        ),
    ],
)
def test_create_rule_key(request_, fields, expected):
    assert create_rule_key(fields, request_, request_["imp"][0]) == expected


@pytest.mark.parametrize(
    ("ua", "expected"),
    [
        pytest.param("Mozilla/5.0 (Phone Samsung Mobile; Win64; x64)", "phone", id="Phone"),
        pytest.param("Safari(iPhone Apple Mobile)", "phone", id="iPhone"),
        pytest.param("Mozilla/5.0 (Mobile Android; Win64; x64)", "phone", id="Mobile.*Android"),
        pytest.param("Mozilla/5.0 (Android Redmi Mobile; Win64; x64)", "phone", id="Android.*Mobile"),
        pytest.param("Mozilla/5.0 (Mobile pixel Android; Win64; x64)", "phone", id="Mobile pixel Android"),
        pytest.param("Mozilla/5.0 (Windows NT touch 10.0; Win64; x64)", "tablet", id="Windows NT touch"),
        pytest.param("Mozilla/5.0 (ipad 13.10; Win64; x64)", "tablet", id="ipad"),
        pytest.param(
            "Mozilla/5.0 (compatible; MSIE 10.0; Windows NT 6.2; Win64; x64; Trident/6.0; Touch)",
            "tablet",
            id="Windows NT.*touch",
        ),
        pytest.param("Mozilla/5.0 (touch realme Windows NT Win64; x64)", "tablet", id="touch.*Windows NT"),
        pytest.param("Mozilla/5.0 (Android; Win64; x64)", "tablet", id="Android"),
        pytest.param("Mozilla/5.0 (Windows NT 10.0; Win64; x64)", "desktop", id="desktop"),
        pytest.param("", "*", id="empty"),
    ],
)
def test_device_type(ua, expected):
    assert device_type_value({"device": {"ua": ua}}) == expected


@pytest.mark.parametrize(
    ("imp", "expected"),
    [
        pytest.param({"ext": {"gpid": "test_gpid"}}, "test_gpid", id="gpid"),
        pytest.param({"tagid": "tag_1"}, "tag_1", id="tagid"),
        pytest.param({"ext": {"data": {"pbadslot": "pbslot_1"}}}, "pbslot_1", id="pbadslot"),
        pytest.param({"ext": {"prebid": {"storedrequest": {"id": "123"}}}}, "123", id="stored request"),
        pytest.param({}, "*", id="empty"),
        pytest.param({"ext": {"prebid": {"custom": {"id": "123"}}}}, "*", id="no stored request"),
        pytest.param({"tagid": "tag_1", "ext": {"gpid": "g"}}, "g", id="gpid before tagid"),
    ],
)
def test_ad_unit_code(imp, expected):
    assert ad_unit_code_value(imp) == expected


@pytest.mark.parametrize(
    ("imp", "expected"),
    [
        pytest.param({"ext": {"data": {"adserver": {"name": "gam", "adslot": "slot_1"}}}}, "slot_1", id="gam adslot"),
        pytest.param({"ext": {"data": {"pbadslot": "pbslot_1"}}}, "pbslot_1", id="pbadslot"),
        pytest.param({}, "*", id="empty"),
        pytest.param(
            {"ext": {"data": {"adserver": {"name": "gam"}, "pbadslot": "p"}}}, "*", id="gam without adslot stops"
        ),
    ],
)
def test_gpt_slot(imp, expected):
    assert gpt_slot_value(imp) == expected


@pytest.mark.parametrize(
    ("imp", "expected"),
    [
        pytest.param({"banner": {"format": [{"w": 300, "h": 250}]}}, "300x250", id="one format"),
        pytest.param({"banner": {"w": 320, "h": 240}}, "320x240", id="banner w h"),
        pytest.param({"video": {"w": 120, "h": 240}}, "120x240", id="video"),
        pytest.param({"banner": {"format": [{"w": 300, "h": 250}, {"w": 200, "h": 300}]}}, "*", id="two formats"),
        pytest.param({"audio": {}}, "*", id="audio"),
        pytest.param({"banner": {"format": [], "w": 1, "h": 2}}, "1x2", id="empty format list"),
    ],
)
def test_size(imp, expected):
    assert size_value(imp) == expected


@pytest.mark.parametrize(
    ("imp", "expected"),
    [
        pytest.param({"video": {"w": 120, "h": 240}, "banner": {"w": 320, "h": 240}}, "*", id="two types"),
        pytest.param({"banner": {"w": 320, "h": 240}}, "banner", id="banner"),
        pytest.param({"video": {"placement": 2}}, "video-outstream", id="outstream"),
        pytest.param({"video": {"placement": 1}}, "video", id="instream"),
        pytest.param({"video": {}}, "video-outstream", id="no placement is outstream"),
        pytest.param({"audio": {"minduration": 10}}, "audio", id="audio"),
        pytest.param({"native": {"request": "r"}}, "native", id="native"),
    ],
)
def test_media_type(imp, expected):
    assert media_type_value(imp) == expected


@pytest.mark.parametrize(
    ("request_", "site_domain", "pub_domain", "domain"),
    [
        pytest.param({"site": {"domain": "abc.xyz.com"}}, "abc.xyz.com", "*", "abc.xyz.com", id="site domain"),
        pytest.param({"site": {}}, "*", "*", "*", id="site without domain"),
        pytest.param({"app": {"domain": "cde.rtu.com"}}, "cde.rtu.com", "*", "cde.rtu.com", id="app domain"),
        pytest.param({"app": {}}, "*", "*", "*", id="app without domain"),
        pytest.param(
            {"site": {"publisher": {"domain": "qwe.xyz.com"}}}, "*", "qwe.xyz.com", "qwe.xyz.com", id="site publisher"
        ),
        pytest.param({"app": {"publisher": {"domain": "xyz.com"}}}, "*", "xyz.com", "xyz.com", id="app publisher"),
        pytest.param(
            {"site": {"domain": "qwe.xyz.com", "publisher": {"domain": "abc.xyz.com"}}},
            "qwe.xyz.com",
            "abc.xyz.com",
            "qwe.xyz.com",
            id="site domain before publisher",
        ),
        pytest.param(
            {"app": {"domain": "abc.com", "publisher": {"domain": "xyz.com"}}},
            "abc.com",
            "xyz.com",
            "abc.com",
            id="app domain before publisher",
        ),
        pytest.param(
            {"site": {}, "app": {"domain": "a.com"}},
            "a.com",
            "*",
            "*",
            id="domain stays on site, siteDomain falls back",
        ),
    ],
)
def test_domains(request_, site_domain, pub_domain, domain):
    assert site_domain_value(request_) == site_domain
    assert pub_domain_value(request_) == pub_domain
    assert domain_value(request_) == domain


# ---- findRule ------------------------------------------------------------------------------------

_RULES_3 = {
    "banner|300x250|www.website.com": 1.01, "banner|300x250|*": 2.01, "banner|300x600|www.website.com": 3.01,
    "banner|300x600|*": 4.01, "banner|728x90|www.website.com": 5.01, "banner|728x90|*": 6.01,
    "banner|*|www.website.com": 7.01, "banner|*|*": 8.01, "*|300x250|www.website.com": 9.01,
    "*|300x250|*": 10.01, "*|300x600|www.website.com": 11.01, "*|300x600|*": 12.01,
    "*|728x90|www.website.com": 13.01, "*|728x90|*": 14.01, "*|*|www.website.com": 15.01, "*|*|*": 16.01,
}  # fmt: skip


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        pytest.param(["banner", "300x250", "www.website.com"], "banner|300x250|www.website.com", id="exact"),
        pytest.param(["BANNER", "300X250", "WWW.WEBSITE.COM"], "banner|300x250|www.website.com", id="lower-cased"),
        pytest.param(["banner", "300x250", "other.com"], "banner|300x250|*", id="right wildcard first"),
        pytest.param(["video", "300x250", "www.website.com"], "*|300x250|www.website.com", id="left wildcard"),
        pytest.param(["banner", "1x1", "www.website.com"], "banner|*|www.website.com", id="middle wildcard"),
        pytest.param(["video", "1x1", "x.com"], "*|*|*", id="catch-all"),
        pytest.param(["*", "300x600", "*"], "*|300x600|*", id="request wildcards"),
    ],
)
def test_find_rule(values, expected):
    group = ModelGroup(fields=("mediaType", "size", "domain"), values=_RULES_3)
    assert find_rule(group, values) == expected


def test_find_rule_custom_delimiter_and_no_match():
    group = ModelGroup(fields=("mediaType", "domain"), delimiter=",", values={"banner,a.com": 1.0})
    assert find_rule(group, ["banner", "A.com"]) == "banner,a.com"
    assert find_rule(group, ["video", "a.com"]) is None
    assert find_rule(ModelGroup(fields=("domain",)), ["a.com"]) is None


@pytest.mark.parametrize("fields", [1, 2, 3, 4, 5, 6, 7, 8])
def test_rule_scan_agrees_with_combinations(fields):
    """Scanning the rules (large schemas) gives what trying PBS-Go's combinations in order gives."""
    rng = random.Random(fields)
    alphabet = ["a", "b", "*"]
    for _ in range(150):
        values = {"|".join(rng.choice(alphabet) for _ in range(fields)): float(i) for i in range(rng.randint(1, 12))}
        group = ModelGroup(fields=("domain",) * fields, values=values)
        request_values = [rng.choice(alphabet) for _ in range(fields)]
        by_order = next((k for k in prepare_rule_combinations(request_values, "|") if k in group.rules), None)
        assert _scan_rules(group, [v.lower() for v in request_values]) == by_order
        assert find_rule(group, request_values) == by_order


def test_find_rule_many_fields_is_cheap():
    group = ModelGroup(fields=("domain",) * 20, values={"|".join(["*"] * 20): 3.0, "|".join(["a"] * 20): 1.0})
    assert find_rule(group, ["b"] * 20) == "|".join(["*"] * 20)
    assert find_rule(group, ["a"] * 20) == "|".join(["a"] * 20)
