"""prebid.rulesengine: the rule set made from bidder geoscopes (PBS-Go
bidder_config_ruleset_builder_test.go, bidder_config_ruleset_test.go)."""

from __future__ import annotations

import pytest

from hbserver.hooks.api import ProcessedAuctionRequestPayload
from hbserver.modules.rulesengine.geoscope import (
    DEFAULT_COUNTRY_GROUPS,
    ParsedGeoscope,
    build_exclusions,
    build_geoscope_tree,
    excluded_in,
    initial_exclusions,
    merge_country_groups,
    parse_geoscope,
)
from hbserver.modules.rulesengine.result_functions import ExcludeBidders, Outcome

MERGE_DEFAULTS = {"EEA": ["FRA", "DEU", "ITA"], "north_america": ["USA", "CAN", "MEX"], "NORDIC": ["FIN", "NOR", "SWE"]}
MERGED = {"EEA": ("FRA", "DEU", "ITA"), "NORTH_AMERICA": ("USA", "CAN", "MEX"), "NORDIC": ("FIN", "NOR", "SWE")}


@pytest.mark.parametrize(
    ("defaults", "definitions", "expected"),
    [
        (MERGE_DEFAULTS, {}, MERGED),
        (MERGE_DEFAULTS, {"EEA": ["ESP", "PRT", "GRC"]}, {**MERGED, "EEA": ("ESP", "PRT", "GRC")}),
        (MERGE_DEFAULTS, {"asia": ["JPN", "KOR", "CHN"]}, {**MERGED, "ASIA": ("JPN", "KOR", "CHN")}),
        ({}, {"asia": ["JPN", "KOR", "CHN"]}, {"ASIA": ("JPN", "KOR", "CHN")}),
        (
            MERGE_DEFAULTS,
            {"eea": ["ESP", "PRT"], "asia": ["JPN", "KOR"], "africa": ["ZAF", "EGY", "NGA"]},
            {**MERGED, "EEA": ("ESP", "PRT"), "ASIA": ("JPN", "KOR"), "AFRICA": ("ZAF", "EGY", "NGA")},
        ),
        (MERGE_DEFAULTS, {"empty_group": []}, {**MERGED, "EMPTY_GROUP": ()}),
    ],
    ids=["empty", "override", "add", "empty-defaults", "multiple", "empty-slice"],
)
def test_merge_country_groups(defaults: dict, definitions: dict, expected: dict) -> None:
    assert merge_country_groups(defaults, definitions) == expected


GROUPS = {"EEA": ("FRA", "DEU", "ITA"), "NORTH_AMERICA": ("USA", "CAN", "MEX")}


@pytest.mark.parametrize(
    ("geoscopes", "expected"),
    [
        pytest.param({"bidder1": ["GLOBAL"]}, {"*": []}, id="global-directive-only"),
        pytest.param(
            {"bidder1": ["NORTH_AMERICA"]},
            {"*": ["bidder1"], "USA": [], "CAN": [], "MEX": []},
            id="allow-list-with-groups",
        ),
        pytest.param(
            {"bidder1": ["!NORTH_AMERICA"]},
            {"*": [], "USA": ["bidder1"], "CAN": ["bidder1"], "MEX": ["bidder1"]},
            id="block-list-with-groups",
        ),
        pytest.param(
            {"bidder1": ["ESP", "GBR"]}, {"*": ["bidder1"], "ESP": [], "GBR": []}, id="allow-list-with-countries"
        ),
        pytest.param(
            {"bidder1": ["!ESP", "!GBR"]},
            {"*": [], "ESP": ["bidder1"], "GBR": ["bidder1"]},
            id="block-list-with-countries",
        ),
        pytest.param(
            {
                "bidder1": ["NORTH_AMERICA"],
                "bidder2": ["!EEA"],
                "bidder3": ["ESP", "GBR"],
                "bidder4": ["!JPN"],
            },
            {
                "*": ["bidder1", "bidder3"],
                "USA": ["bidder3"],
                "CAN": ["bidder3"],
                "MEX": ["bidder3"],
                "FRA": ["bidder1", "bidder2", "bidder3"],
                "DEU": ["bidder1", "bidder2", "bidder3"],
                "ITA": ["bidder1", "bidder2", "bidder3"],
                "ESP": ["bidder1"],
                "GBR": ["bidder1"],
                "JPN": ["bidder1", "bidder3", "bidder4"],
            },
            id="multiple-bidders-with-different-scopes",
        ),
    ],
)
def test_build_exclusions(geoscopes: dict, expected: dict) -> None:
    got = build_exclusions(geoscopes, GROUPS)
    assert {country: sorted(bidders) for country, bidders in got.items()} == expected


INIT_GROUPS = {**GROUPS, "TEST_GROUP1": ("USA", "CAN", "MEX"), "EMPTY_GROUP": ()}


@pytest.mark.parametrize(
    ("geoscopes", "keys"),
    [
        pytest.param({}, {"*"}, id="empty"),
        pytest.param({"bidder1": ["USA"]}, {"USA", "*"}, id="single-country"),
        pytest.param({"bidder1": ["USA", "CAN"]}, {"USA", "CAN", "*"}, id="multiple-countries"),
        pytest.param({"bidder1": ["EEA"]}, {"FRA", "DEU", "ITA", "*"}, id="group-expands"),
        pytest.param({"bidder1": ["!USA"]}, {"USA", "*"}, id="excluded-country"),
        pytest.param({"bidder1": ["!EEA"]}, {"FRA", "DEU", "ITA", "*"}, id="excluded-group-expands"),
        pytest.param(
            {"bidder1": ["USA", "EEA"], "bidder2": ["!GBR"]},
            {"USA", "FRA", "DEU", "ITA", "GBR", "*"},
            id="mix-of-countries-and-groups",
        ),
        pytest.param({"bidder1": ["GLOBAL"]}, {"*"}, id="global-skipped"),
        pytest.param({"bidder1": ["EMPTY_GROUP"]}, {"*"}, id="empty-group-not-expanded"),
        pytest.param(
            {"bidder1": ["USA", "CAN"], "bidder2": ["USA", "MEX"]}, {"USA", "CAN", "MEX", "*"}, id="same-countries"
        ),
        pytest.param(
            {"bidder1": ["TEST_GROUP1"], "bidder2": ["TEST_GROUP1"]}, {"USA", "CAN", "MEX", "*"}, id="group-twice"
        ),
    ],
)
def test_initial_exclusions(geoscopes: dict, keys: set[str]) -> None:
    got = initial_exclusions(geoscopes, INIT_GROUPS)
    assert set(got) == keys
    assert all(bidders == [] for bidders in got.values())


@pytest.mark.parametrize(
    ("geoscope", "expected"),
    [
        ([], ParsedGeoscope("b")),
        (["GLOBAL"], ParsedGeoscope("b", global_included=True)),
        (["EEA"], ParsedGeoscope("b", groups_included=["EEA"])),
        (["!EEA"], ParsedGeoscope("b", groups_excluded=["EEA"])),
        (["USA"], ParsedGeoscope("b", countries_included=["USA"])),
        (["!USA"], ParsedGeoscope("b", countries_excluded=["USA"])),
        (
            ["GLOBAL", "EEA", "!NORTH_AMERICA", "GBR", "!JPN"],
            ParsedGeoscope("b", True, ["EEA"], ["NORTH_AMERICA"], ["GBR"], ["JPN"]),
        ),
        (["eea"], ParsedGeoscope("b", countries_included=["eea"])),  # group names are case-sensitive here
    ],
)
def test_parse_geoscope(geoscope: list[str], expected: ParsedGeoscope) -> None:
    assert parse_geoscope("b", geoscope, GROUPS) == expected


def _marked(parsed: ParsedGeoscope, countries: list[str]) -> dict[str, bool]:
    return {country: excluded_in(country, parsed, GROUPS) for country in countries}


@pytest.mark.parametrize(
    ("parsed", "countries", "excluded"),
    [
        # allow list with groups
        (ParsedGeoscope("b", groups_included=["NORTH_AMERICA"]), ["USA", "GBR", "*"], ["GBR", "*"]),
        (ParsedGeoscope("b", groups_included=["NORTH_AMERICA"], countries_excluded=["USA"]), ["USA", "CAN"], ["USA"]),
        (ParsedGeoscope("b", groups_included=["NORTH_AMERICA"], countries_included=["GBR"]), ["GBR", "JPN"], ["JPN"]),
        (ParsedGeoscope("b", groups_included=["NORTH_AMERICA", "EEA"]), ["USA", "FRA", "JPN"], ["JPN"]),
        # block list with groups
        (ParsedGeoscope("b", groups_excluded=["NORTH_AMERICA"]), ["USA", "GBR", "*"], ["USA"]),
        (ParsedGeoscope("b", groups_excluded=["NORTH_AMERICA"], countries_included=["USA"]), ["USA", "CAN"], ["CAN"]),
        (ParsedGeoscope("b", groups_excluded=["NORTH_AMERICA"], countries_excluded=["GBR"]), ["GBR", "JPN"], ["GBR"]),
        (ParsedGeoscope("b", groups_excluded=["NORTH_AMERICA", "EEA"]), ["USA", "FRA", "JPN"], ["USA", "FRA"]),
        (
            ParsedGeoscope("b", groups_excluded=["NORTH_AMERICA"], countries_excluded=["USA"]),
            ["USA", "CAN", "*"],
            ["USA", "CAN"],
        ),
        # allow list of countries
        (ParsedGeoscope("b", countries_included=["USA"]), ["USA", "CAN", "*"], ["CAN", "*"]),
        (ParsedGeoscope("b", countries_included=["*"]), ["USA", "CAN", "GBR", "*"], ["USA", "CAN", "GBR"]),
        (ParsedGeoscope("b", countries_included=["BRA"]), ["USA", "*"], ["USA", "*"]),
        # block list of countries
        (ParsedGeoscope("b", countries_excluded=["USA", "CAN"]), ["USA", "CAN", "GBR", "*"], ["USA", "CAN"]),
        (ParsedGeoscope("b", countries_excluded=["*"]), ["USA", "*"], ["*"]),
        (ParsedGeoscope("b", countries_excluded=["BRA"]), ["USA", "*"], []),
        # nothing said: never excluded
        (ParsedGeoscope("b"), ["USA", "*"], []),
        (ParsedGeoscope("b", global_included=True, countries_excluded=["USA"]), ["USA", "*"], []),
    ],
)
def test_excluded_in(parsed: ParsedGeoscope, countries: list[str], excluded: list[str]) -> None:
    assert [country for country, out in _marked(parsed, countries).items() if out] == excluded


def test_build_geoscope_tree_without_geoscopes() -> None:
    tree = build_geoscope_tree({}, {})
    assert tree.root is not None
    assert tree.root.schema_function is None and tree.root.children == {}


def test_build_geoscope_tree() -> None:
    tree = build_geoscope_tree({"bidder1": ["USA", "CAN"], "bidder2": ["GBR", "FRA"]}, {})
    root = tree.root
    assert root is not None and root.schema_function is not None
    assert root.schema_function.name == "deviceCountry"
    got = {country: node.results for country, node in root.children.items()}
    assert set(got) == {"USA", "CAN", "GBR", "FRA", "*"}
    for results in got.values():
        assert len(results) == 1 and isinstance(results[0], ExcludeBidders)
    bidders = {country: sorted(results[0].params.bidders) for country, results in got.items()}  # type: ignore[attr-defined]
    assert bidders == {
        "USA": ["bidder2"],
        "CAN": ["bidder2"],
        "GBR": ["bidder1"],
        "FRA": ["bidder1"],
        "*": ["bidder1", "bidder2"],
    }


def test_account_groups_and_the_default_eea() -> None:
    tree = build_geoscope_tree({"b1": ["EEA"], "b2": ["!CUSTOM"]}, {"custom": ["USA"]})
    assert tree.root is not None
    assert set(tree.root.children) == {*DEFAULT_COUNTRY_GROUPS["EEA"], "USA", "*"}

    def excluded(country: str) -> list[str]:
        outcome = Outcome()
        tree.run({"device": {"geo": {"country": country}}}, outcome)
        request = {"imp": [{"id": "1", "ext": {"prebid": {"bidder": {"b1": {}, "b2": {}}}}}]}
        payload = ProcessedAuctionRequestPayload(request)
        for mutation in outcome.mutations:
            payload = mutation.apply(payload)
        return sorted({"b1", "b2"} - set(payload.request["imp"][0]["ext"]["prebid"]["bidder"]))

    assert excluded("FRA") == []
    assert excluded("USA") == ["b1", "b2"]
    assert excluded("JPN") == ["b1"]
    assert excluded("") == ["b1"]
