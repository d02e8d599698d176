"""PBS-Java's iab.usgeneral module: one row per rule of USNatSyncUser / USNatTransmitUfpd /
USNatTransmitGeo and per state reader mapping, built from real section strings; then the config."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.privacy.gpp_us import decode_us_section
from hbserver.privacy.usnat import ModuleResult, PrivacyModuleConfigError, USNatModule, parse_modules
from tests.privacy.test_gpp_us import encode_us

ALLOW, DENY, ABSTAIN = ModuleResult.ALLOW, ModuleResult.DENY, ModuleResult.ABSTAIN
SYNC, UFPD, EIDS, GEO, ENRICH = "syncUser", "transmitUfpd", "transmitEids", "transmitPreciseGeo", "enrichUfpd"
# usnat with every notice given and nothing opted out or consented: the baseline that allows everything
CLEAN = {
    "sharing_notice": 1, "sale_opt_out_notice": 1, "sharing_opt_out_notice": 1,
    "targeted_advertising_opt_out_notice": 1, "sensitive_data_processing_opt_out_notice": 1,
    "sensitive_data_limit_use_notice": 1,
}


def nat(**changes: Any) -> dict[str, Any]:
    return {**CLEAN, **changes}


def sdp(size: int = 16, **items: int) -> tuple[int, ...]:
    """A SensitiveDataProcessing list with ``i<n>=value`` items set."""
    out = [0] * size
    for key, value in items.items():
        out[int(key[1:])] = value
    return tuple(out)


# (name, section id, section fields (None: listed in gpp_sid but not in the string), gpc, activity, expected)
RULES = [
    # --- usnat: sale, sharing, targeted advertising (syncUser and transmitUfpd) ---
    ("clean usnat allows syncUser", 7, nat(), None, SYNC, ALLOW),
    ("clean usnat allows transmitUfpd", 7, nat(), None, UFPD, ALLOW),
    ("clean usnat allows transmitPreciseGeo", 7, nat(), None, GEO, ALLOW),
    ("all not applicable allows syncUser", 7, {}, None, SYNC, ALLOW),
    ("service provider mode denies syncUser", 7, nat(mspa_service_provider_mode=1), None, SYNC, DENY),
    ("service provider mode denies transmitPreciseGeo", 7, nat(mspa_service_provider_mode=1), None, GEO, DENY),
    ("service provider mode 2 allows", 7, nat(mspa_service_provider_mode=2), None, SYNC, ALLOW),
    ("GPC denies syncUser", 7, nat(), True, SYNC, DENY),
    ("GPC denies transmitPreciseGeo", 7, nat(), True, GEO, DENY),
    ("GPC false allows", 7, nat(), False, UFPD, ALLOW),
    ("sale opted out denies syncUser", 7, nat(sale_opt_out=1), None, SYNC, DENY),
    ("sale opted out denies transmitUfpd", 7, nat(sale_opt_out=1), None, UFPD, DENY),
    ("sale opted out does not judge precise geo", 7, nat(sale_opt_out=1), None, GEO, ALLOW),
    ("sale notice not given denies", 7, nat(sale_opt_out_notice=2), None, SYNC, DENY),
    ("sale notice n/a and did not opt out denies", 7, nat(sale_opt_out_notice=0, sale_opt_out=2), None, SYNC, DENY),
    ("sale notice given and did not opt out allows", 7, nat(sale_opt_out=2), None, SYNC, ALLOW),
    ("sharing notice not given denies", 7, nat(sharing_notice=2), None, SYNC, DENY),
    ("sharing opted out denies", 7, nat(sharing_opt_out=1), None, UFPD, DENY),
    ("sharing opt-out notice not given denies", 7, nat(sharing_opt_out_notice=2), None, SYNC, DENY),
    ("sharing notice n/a and did not opt out denies", 7, nat(sharing_notice=0, sharing_opt_out=2), None, SYNC, DENY),
    ("sharing opt-out notice n/a and did not opt out denies", 7,
     nat(sharing_opt_out_notice=0, sharing_opt_out=2), None, SYNC, DENY),
    ("sharing notices given and did not opt out allows", 7, nat(sharing_opt_out=2), None, SYNC, ALLOW),
    ("targeted advertising opted out denies", 7, nat(targeted_advertising_opt_out=1), None, SYNC, DENY),
    ("targeted advertising notice not given denies", 7,
     nat(targeted_advertising_opt_out_notice=2), None, SYNC, DENY),
    ("targeted advertising notice n/a and did not opt out denies", 7,
     nat(targeted_advertising_opt_out_notice=0, targeted_advertising_opt_out=2), None, SYNC, DENY),
    ("targeted advertising notice given and did not opt out allows", 7,
     nat(targeted_advertising_opt_out=2), None, SYNC, ALLOW),
    # --- known child and personal data (every judged activity) ---
    ("known child 13-16 no consent denies", 7, nat(known_child_sensitive_data_consents=(1, 0, 0)), None, SYNC, DENY),
    ("known child under 13 no consent denies", 7, nat(known_child_sensitive_data_consents=(0, 1, 0)), None, GEO, DENY),
    ("known child under 13 consent denies", 7, nat(known_child_sensitive_data_consents=(0, 2, 0)), None, UFPD, DENY),
    ("known child third item no consent denies", 7,
     nat(known_child_sensitive_data_consents=(0, 0, 1)), None, SYNC, DENY),
    ("known child 13-16 consent allows", 7, nat(known_child_sensitive_data_consents=(2, 0, 2)), None, SYNC, ALLOW),
    ("personal data consent denies", 7, nat(personal_data_consents=2), None, SYNC, DENY),
    ("personal data consent denies precise geo", 7, nat(personal_data_consents=2), None, GEO, DENY),
    ("personal data no consent allows", 7, nat(personal_data_consents=1), None, SYNC, ALLOW),
    # --- sensitive data: transmitUfpd ---
    ("sensitive opt-out notice not given denies transmitUfpd", 7,
     nat(sensitive_data_processing_opt_out_notice=2), None, UFPD, DENY),
    ("sensitive opt-out notice not given does not judge syncUser", 7,
     nat(sensitive_data_processing_opt_out_notice=2), None, SYNC, ALLOW),
    ("sensitive limit-use notice not given denies transmitUfpd", 7,
     nat(sensitive_data_limit_use_notice=2), None, UFPD, DENY),
    ("notice n/a and a sensitive consent denies transmitUfpd", 7,
     nat(sensitive_data_limit_use_notice=0, sensitive_data_processing=sdp(i0=2)), None, UFPD, DENY),
    ("notices given and an opt-out item consented allows", 7,
     nat(sensitive_data_processing=sdp(i0=2)), None, UFPD, ALLOW),
    ("opt-out item not consented denies transmitUfpd", 7, nat(sensitive_data_processing=sdp(i4=1)), None, UFPD, DENY),
    ("opt-in item not consented denies transmitUfpd", 7, nat(sensitive_data_processing=sdp(i5=1)), None, UFPD, DENY),
    ("opt-in item consented denies transmitUfpd", 7, nat(sensitive_data_processing=sdp(i15=2)), None, UFPD, DENY),
    ("precise geo item is not judged for transmitUfpd", 7,
     nat(sensitive_data_processing=sdp(i7=1)), None, UFPD, ALLOW),
    ("transmitEids follows transmitUfpd", 7, nat(sensitive_data_processing=sdp(i5=1)), None, EIDS, DENY),
    ("enrichUfpd follows syncUser", 7, nat(sensitive_data_processing=sdp(i5=1)), None, ENRICH, ALLOW),
    ("enrichUfpd denied like syncUser", 7, nat(sale_opt_out=1), None, ENRICH, DENY),
    # --- sensitive data: transmitPreciseGeo (item 8, index 7) ---
    ("precise geo not consented denies", 7, nat(sensitive_data_processing=sdp(i7=1)), None, GEO, DENY),
    ("precise geo consented with notices allows", 7, nat(sensitive_data_processing=sdp(i7=2)), None, GEO, ALLOW),
    ("precise geo consented, notice n/a denies", 7,
     nat(sensitive_data_processing_opt_out_notice=0, sensitive_data_processing=sdp(i7=2)), None, GEO, DENY),
    ("other sensitive items do not judge precise geo", 7,
     nat(sensitive_data_processing=sdp(i5=1, i6=2)), None, GEO, ALLOW),
    ("sensitive notice not given denies precise geo", 7, nat(sensitive_data_limit_use_notice=2), None, GEO, DENY),
    # --- activities the module does not judge ---
    ("fetchBids abstains", 7, nat(sale_opt_out=1), None, "fetchBids", ABSTAIN),
    ("transmitTid abstains", 7, nat(sale_opt_out=1), None, "transmitTid", ABSTAIN),
    ("reportAnalytics abstains", 7, nat(sale_opt_out=1), None, "reportAnalytics", ABSTAIN),
    ("an unknown activity abstains", 7, nat(sale_opt_out=1), None, "somethingElse", ABSTAIN),
    ("activity names are case-insensitive", 7, nat(sale_opt_out=1), None, "SYNCUSER", DENY),
    # --- usca: no sharing/targeting notices, its own sensitive items, two known child values ---
    ("usca clean allows", 8, {"sale_opt_out_notice": 1, "sharing_opt_out_notice": 1,
                              "sensitive_data_limit_use_notice": 1}, None, UFPD, ALLOW),
    ("usca sale opted out denies", 8, {"sale_opt_out_notice": 1, "sale_opt_out": 1}, None, SYNC, DENY),
    ("usca sharing opted out denies", 8, {"sale_opt_out_notice": 1, "sharing_opt_out": 1}, None, SYNC, DENY),
    ("usca known child not 0,0 is a child", 8,
     {"sale_opt_out_notice": 1, "known_child_sensitive_data_consents": (2, 0)}, None, SYNC, DENY),
    ("usca item 3 (precise geo) maps to usnat item 8", 8,
     {"sale_opt_out_notice": 1, "sensitive_data_limit_use_notice": 1,
      "sensitive_data_processing": (0, 0, 1, 0, 0, 0, 0, 0, 0)}, None, GEO, DENY),
    ("usca item 3 is not an ufpd item", 8,
     {"sale_opt_out_notice": 1, "sharing_opt_out_notice": 1, "sensitive_data_limit_use_notice": 1,
      "sensitive_data_processing": (0, 0, 1, 0, 0, 0, 0, 0, 0)}, None, UFPD, ALLOW),
    ("usca item 4 maps to usnat items 1 and 2", 8,
     {"sale_opt_out_notice": 1, "sharing_opt_out_notice": 1, "sensitive_data_limit_use_notice": 1,
      "sensitive_data_processing": (0, 0, 0, 1, 0, 0, 0, 0, 0)}, None, UFPD, DENY),
    ("usca personal data consent denies", 8, {"sale_opt_out_notice": 1, "personal_data_consents": 2}, None, SYNC, DENY),
    ("usca GPC denies", 8, {"sale_opt_out_notice": 1}, True, SYNC, DENY),
    ("usca listed but absent: a known child by default", 8, None, None, SYNC, DENY),
    # --- usva / usco / usut: one known child value ---
    ("usva clean allows", 9, {"sharing_notice": 1, "sale_opt_out_notice": 1,
                              "targeted_advertising_opt_out_notice": 1}, None, SYNC, ALLOW),
    ("usva known child 1 denies", 9, {"sharing_notice": 1, "sale_opt_out_notice": 1,
                                      "targeted_advertising_opt_out_notice": 1,
                                      "known_child_sensitive_data_consents": 1}, None, SYNC, DENY),
    ("usva known child 2 denies", 9, {"sharing_notice": 1, "sale_opt_out_notice": 1,
                                      "targeted_advertising_opt_out_notice": 1,
                                      "known_child_sensitive_data_consents": 2}, None, GEO, DENY),
    ("usva targeted opted out denies", 9, {"sharing_notice": 1, "sale_opt_out_notice": 1,
                                           "targeted_advertising_opt_out": 1}, None, SYNC, DENY),
    ("usva sensitive item not consented denies transmitUfpd", 9,
     {"sharing_notice": 1, "sale_opt_out_notice": 1, "targeted_advertising_opt_out_notice": 1,
      "sensitive_data_processing": (1, 0, 0, 0, 0, 0, 0, 0)}, None, UFPD, DENY),
    ("usva has no sensitive notices: an opt-out item consented allows", 9,
     {"sharing_notice": 1, "sale_opt_out_notice": 1, "targeted_advertising_opt_out_notice": 1,
      "sensitive_data_processing": (2, 0, 0, 0, 0, 0, 0, 0)}, None, UFPD, ALLOW),
    ("usva listed but absent allows", 9, None, None, SYNC, ALLOW),
    ("usco GPC denies", 10, {"sharing_notice": 1, "sale_opt_out_notice": 1,
                             "targeted_advertising_opt_out_notice": 1}, True, SYNC, DENY),
    ("usco clean allows", 10, {"sharing_notice": 1, "sale_opt_out_notice": 1,
                               "targeted_advertising_opt_out_notice": 1}, False, SYNC, ALLOW),
    ("usut item 5 maps to usnat item 3", 11,
     {"sharing_notice": 1, "sale_opt_out_notice": 1, "targeted_advertising_opt_out_notice": 1,
      "sensitive_data_processing_opt_out_notice": 1, "sensitive_data_processing": (0, 0, 0, 0, 1, 0, 0, 0)},
     None, UFPD, DENY),
    ("usut sensitive opt-out notice not given denies", 11,
     {"sharing_notice": 1, "sale_opt_out_notice": 1, "targeted_advertising_opt_out_notice": 1,
      "sensitive_data_processing_opt_out_notice": 2}, None, UFPD, DENY),
    ("usut item 8 is precise geo", 11,
     {"sharing_notice": 1, "sale_opt_out_notice": 1, "targeted_advertising_opt_out_notice": 1,
      "sensitive_data_processing_opt_out_notice": 1, "sensitive_data_processing": (0, 0, 0, 0, 0, 0, 0, 1)},
     None, GEO, DENY),
    # --- usct: three known child values ---
    ("usct no child allows", 12, {"sharing_notice": 1, "sale_opt_out_notice": 1,
                                  "targeted_advertising_opt_out_notice": 1}, None, SYNC, ALLOW),
    ("usct consents 2,2 for the younger: still denied", 12,
     {"sharing_notice": 1, "sale_opt_out_notice": 1, "targeted_advertising_opt_out_notice": 1,
      "known_child_sensitive_data_consents": (0, 2, 2)}, None, SYNC, DENY),
    ("usct any other known child denies", 12,
     {"sharing_notice": 1, "sale_opt_out_notice": 1, "targeted_advertising_opt_out_notice": 1,
      "known_child_sensitive_data_consents": (2, 0, 0)}, None, SYNC, DENY),
    ("usct listed but absent: a known child by default", 12, None, None, GEO, DENY),
    ("usnat listed but absent allows", 7, None, None, UFPD, ALLOW),
]


def _sections(sid: int, fields: dict[str, Any] | None, gpc: bool | None) -> dict[int, Any]:
    if fields is None:
        return {}
    return {sid: decode_us_section(sid, encode_us(sid, gpc=gpc, **fields))}


@pytest.mark.parametrize(
    ("name", "sid", "fields", "gpc", "activity", "expected"),
    RULES,
    ids=[row[0] for row in RULES],
)
def test_rules(name: str, sid: int, fields: dict[str, Any] | None, gpc: bool | None, activity: str,
               expected: ModuleResult) -> None:
    assert USNatModule().result(activity, [sid], _sections(sid, fields, gpc)) == expected


@pytest.mark.parametrize(
    ("name", "value", "activity", "allow_pdc2", "expected"),
    [
        # iabgpp-java's first-shape string: notices given, did not opt out, PersonalDataConsents 2
        ("first shape: personal data consent denies", "BVQqAAAACg", SYNC, False, DENY),
        ("first shape: allowed with allowPersonalDataConsent2", "BVQqAAAACg", SYNC, True, ALLOW),
        ("first shape: precise geo allowed with allowPersonalDataConsent2", "BVQqAAAACg", GEO, True, ALLOW),
        ("current shape: opted out of everything", "BVVVkkkkkpFY.YA", SYNC, True, DENY),
        ("iabgpp-java defaults: nothing applies", "BAAAAAAAAABA.QA", UFPD, False, ALLOW),
        ("go-gpp usnat: service provider mode 2, sale did not opt out", "DSJgmkoZJSA.YA", GEO, False, DENY),
    ],
)
def test_public_strings(name: str, value: str, activity: str, allow_pdc2: bool, expected: ModuleResult) -> None:
    module = USNatModule(allow_personal_data_consent_2=allow_pdc2)
    assert module.result(activity, [7], {7: decode_us_section(7, value)}) == expected


def test_personal_data_consent_2_allowed_by_config() -> None:
    sections = _sections(7, nat(personal_data_consents=2), None)
    assert USNatModule().result(SYNC, [7], sections) == DENY
    assert USNatModule(allow_personal_data_consent_2=True).result(SYNC, [7], sections) == ALLOW


SECTIONS = {
    7: decode_us_section(7, encode_us(7, **nat())),
    9: decode_us_section(9, encode_us(9, known_child_sensitive_data_consents=1)),
    8: None,  # in the string but did not decode
}

# (name, gpp_sid, skip_sids, expected) over SECTIONS: usnat allows, usva denies, usca is malformed
COMBINATIONS = [
    ("no US section listed abstains", [2, 6], [], ABSTAIN),
    ("nothing listed abstains", [], [], ABSTAIN),
    ("one allowing section", [7], [], ALLOW),
    ("any denial denies", [7, 9], [], DENY),
    ("order does not matter", [9, 7], [], DENY),
    ("a section that did not decode is left out", [8], [], ABSTAIN),
    ("malformed next to an allowing one", [7, 8], [], ALLOW),
    ("skipSids leaves a section out", [7, 9], [9], ALLOW),
    ("every listed section skipped abstains", [7], [7], ABSTAIN),
    ("a listed but absent usct denies (known child default)", [7, 12], [], DENY),
    ("section ids above 12 are not US sections", [13, 20], [], ABSTAIN),
    ("duplicates count once", [7, 7], [], ALLOW),
]


@pytest.mark.parametrize(("name", "sids", "skip", "expected"), COMBINATIONS, ids=[row[0] for row in COMBINATIONS])
def test_sections_combine(name: str, sids: list[int], skip: list[int], expected: ModuleResult) -> None:
    assert USNatModule(skip_sids=skip).result(SYNC, sids, SECTIONS) == expected


# --- config (privacy.modules) ---

def test_parse_modules_builds_the_enabled_usgeneral() -> None:
    [module] = parse_modules([{"code": "iab.usgeneral", "config": {"skipSids": [8, 9],
                                                                   "allowPersonalDataConsent2": True}}])
    assert (module.skip_sids, module.allow_personal_data_consent_2, module.skip_rate) == (frozenset({8, 9}), True, 0)


@pytest.mark.parametrize(
    ("name", "modules", "count"),
    [
        ("None is no module", None, 0),
        ("empty list", [], 0),
        ("enabled absent means enabled", [{"code": "iab.usgeneral"}], 1),
        ("disabled is validated but not used", [{"code": "iab.usgeneral", "enabled": False}], 0),
        ("a second entry with the same code is ignored",
         [{"code": "iab.usgeneral", "enabled": False}, {"code": "iab.usgeneral"}], 0),
        ("disabled uscustomlogic is accepted", [{"code": "iab.uscustomlogic", "enabled": False}], 0),
        ("null entries are skipped", [None, {"code": "iab.usgeneral"}], 1),
        ("PBS-Java's snake_case keys", [{"code": "iab.usgeneral", "config": {"skip_sids": [7],
                                                                          "allow_personal_data_consent_2": True}}], 1),
        ("keys are case-insensitive", [{"CODE": "iab.usgeneral", "Config": {"SKIPSIDS": [7]}}], 1),
        ("skipRate", [{"code": "iab.usgeneral", "skipRate": 100}], 1),
    ],
)
def test_parse_modules(name: str, modules: Any, count: int) -> None:
    assert len(parse_modules(modules)) == count


def test_parse_modules_aliases_take_effect() -> None:
    [module] = parse_modules([{"code": "iab.usgeneral", "config": {"skip-sids": [7],
                                                                   "allow-personal-data-consent-2": True}}])
    assert module.skip_sids == {7} and module.allow_personal_data_consent_2


@pytest.mark.parametrize(
    ("modules", "message"),
    [
        ({"code": "iab.usgeneral"}, "privacy.modules: expected a list"),
        (["iab.usgeneral"], "privacy.modules[0]: expected an object"),
        ([{}], "privacy.modules[0].code: required"),
        ([{"code": "iab.usnat"}], "privacy.modules[0].code: unknown privacy module 'iab.usnat'"),
        ([{"code": "iab.usgeneral"}, {"code": "iab.uscustomlogic"}],
         "privacy.modules[1].code: privacy module 'iab.uscustomlogic' (JsonLogic rules) is not supported"),
        ([{"code": "iab.uscustomlogic", "enabled": True}],
         "privacy.modules[0].code: privacy module 'iab.uscustomlogic'"),
        ([{"code": "iab.usgeneral", "enabled": "yes"}], "privacy.modules[0].enabled: expected true or false"),
        ([{"code": "iab.usgeneral", "skipRate": 101}],
         "privacy.modules[0].skipRate: expected an integer from 0 to 100"),
        ([{"code": "iab.usgeneral", "skipRate": "5"}], "privacy.modules[0].skipRate: expected an integer"),
        ([{"code": "iab.usgeneral", "config": []}], "privacy.modules[0].config: expected an object"),
        ([{"code": "iab.usgeneral", "config": {"skipSids": 7}}],
         "privacy.modules[0].config.skipSids: expected a list of integers"),
        ([{"code": "iab.usgeneral", "config": {"skipSids": [7, "8"]}}],
         "privacy.modules[0].config.skipSids[1]: expected an integer"),
        ([{"code": "iab.usgeneral", "config": {"allowPersonalDataConsent2": 1}}],
         "privacy.modules[0].config.allowPersonalDataConsent2: expected true or false"),
        ([{"code": "iab.usgeneral", "enabled": False, "config": {"skip_sids": "x"}}],
         "privacy.modules[0].config.skip_sids: expected a list"),
    ],
)
def test_parse_modules_errors(modules: Any, message: str) -> None:
    with pytest.raises(PrivacyModuleConfigError) as info:
        parse_modules(modules)
    assert str(info.value).startswith(message)
    assert isinstance(info.value, ValueError)
