"""The rule set made from the bidders' geoscopes (PBS-Go ``bidder_config_ruleset*.go``), used
when an account sets ``generate_rules_from_bidderconfig``.

A bidder's geoscope is a list of ``GLOBAL``, countries (``USA``), country groups (``EEA`` or an
account's ``set_definitions.country_groups``) and their negations (``!FRA``, ``!EEA``). The tree
has one level (``deviceCountry``): a child per country any geoscope names (or any member of a
group one names) and ``"*"``, each excluding the bidders not allowed there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from hbserver.modules.rulesengine.result_functions import ExcludeBidders, ResultParams
from hbserver.modules.rulesengine.schema_functions import DEVICE_COUNTRY, new_schema_function
from hbserver.modules.rulesengine.tree import WILDCARD, Node, Tree

GLOBAL = "GLOBAL"
DEFAULT_COUNTRY_GROUPS: dict[str, tuple[str, ...]] = {
    "EEA": tuple(
        "AUT BEL BGR CYP CZE DEU DNK EST ESP FIN FRA GRC HRV HUN IRL "
        "ISL ITA LIE LTU LUX LVA MLT NLD NOR POL PRT ROU SWE SVN SVK".split()
    ),
}

Exclusions = dict[str, list[str]]  # country -> bidders excluded there


def merge_country_groups(
    defaults: Mapping[str, Sequence[str]], definitions: Mapping[str, Sequence[str]]
) -> dict[str, tuple[str, ...]]:
    """The default groups overlaid with the account's, names upper-cased."""
    merged = {name.upper(): tuple(countries) for name, countries in defaults.items()}
    merged.update({name.upper(): tuple(countries) for name, countries in definitions.items()})
    return merged


@dataclass(slots=True)
class ParsedGeoscope:
    """One bidder's geoscope sorted by kind (PBS-Go ``parsedConfig``)."""

    bidder: str
    global_included: bool = False
    groups_included: list[str] = field(default_factory=list)
    groups_excluded: list[str] = field(default_factory=list)
    countries_included: list[str] = field(default_factory=list)
    countries_excluded: list[str] = field(default_factory=list)


def parse_geoscope(bidder: str, geoscope: Sequence[str], groups: Mapping[str, Sequence[str]]) -> ParsedGeoscope:
    parsed = ParsedGeoscope(bidder)
    for entry in geoscope:
        if entry == GLOBAL:
            parsed.global_included = True
        elif entry in groups:
            parsed.groups_included.append(entry)
        elif entry.startswith("!") and entry[1:] in groups:
            parsed.groups_excluded.append(entry[1:])
        elif not entry.startswith("!"):
            parsed.countries_included.append(entry)
        else:
            parsed.countries_excluded.append(entry[1:])
    return parsed


def initial_exclusions(geoscopes: Mapping[str, Sequence[str]], groups: Mapping[str, Sequence[str]]) -> Exclusions:
    """Every country named (directly or through a group) and ``"*"``, none excluding anyone yet."""
    exclusions: Exclusions = {}
    for geoscope in geoscopes.values():
        for entry in geoscope:
            if entry == GLOBAL:
                continue
            name = entry.removeprefix("!")
            for country in groups.get(name, (name,)):
                exclusions.setdefault(country, [])
    exclusions[WILDCARD] = []
    return exclusions


def _in_groups(country: str, names: Sequence[str], groups: Mapping[str, Sequence[str]]) -> bool:
    return any(country in groups.get(name, ()) for name in names)


def excluded_in(country: str, parsed: ParsedGeoscope, groups: Mapping[str, Sequence[str]]) -> bool:
    """Whether ``country`` excludes the bidder: its geoscope is an allow list when it names an
    included group, else a block list when it names an excluded group, else an allow list of
    countries, else a block list of countries (PBS-Go's ``mark...Exclusions``)."""
    included = country in parsed.countries_included
    excluded = country in parsed.countries_excluded
    if parsed.global_included:
        return False
    if parsed.groups_included:
        in_group = _in_groups(country, parsed.groups_included, groups)
        return (in_group and excluded) or (not in_group and not included)
    if parsed.groups_excluded:
        in_group = _in_groups(country, parsed.groups_excluded, groups)
        return (in_group and not included) or (not in_group and excluded)
    if parsed.countries_included:
        return not included
    return excluded


def build_exclusions(geoscopes: Mapping[str, Sequence[str]], groups: Mapping[str, Sequence[str]]) -> Exclusions:
    exclusions = initial_exclusions(geoscopes, groups)
    for bidder, geoscope in geoscopes.items():
        parsed = parse_geoscope(bidder, geoscope, groups)
        for country, bidders in exclusions.items():
            if excluded_in(country, parsed, groups):
                bidders.append(bidder)
    return exclusions


def build_geoscope_tree(geoscopes: Mapping[str, Sequence[str]], country_groups: Mapping[str, Sequence[str]]) -> Tree:
    """PBS-Go ``bidderConfigRuleSetBuilder.Build`` (no geoscopes: a root that does nothing)."""
    tree = Tree()
    if not geoscopes:
        return tree
    groups = merge_country_groups(DEFAULT_COUNTRY_GROUPS, country_groups)
    root = Node(schema_function=new_schema_function(DEVICE_COUNTRY, {}, lambda n: 0))
    for country, bidders in build_exclusions(geoscopes, groups).items():
        root.children[country] = Node(results=[ExcludeBidders(ResultParams(tuple(bidders)))])
    tree.root = root
    return tree
