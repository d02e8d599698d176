"""The auction's privacy signals (PBS-Go gdpr.GetGDPR, GetConsent, ccpa.SelectCCPAConsent), PBS-Go's
warnings about conflicts between them, wrong types, and the legacy downgrade for non-GPP bidders."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from hbserver.privacy.regs import (
    CONSENT_CONFLICT,
    EMPTY_REGS,
    GDPR_CONFLICT,
    USP_CONFLICT,
    RegsError,
    legacy_from_gpp,
    read_regs,
)
from tests.privacy.test_gpp import TCF, TCF_B, encode_header
from tests.privacy.test_gpp_us import encode_us

W = 10001


def gpp(**sections: str) -> str:
    """A GPP string from ``s<id>=value`` sections."""
    by_id = {int(key[1:]): value for key, value in sections.items()}
    ids = sorted(by_id)
    return "~".join([encode_header(ids), *(by_id[sid] for sid in ids)])


def req(regs: dict[str, Any] | None = None, consent: str | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"id": "r", **extra}
    if regs is not None:
        out["regs"] = regs
    if consent is not None:
        out["user"] = {"consent": consent}
    return out


USNAT = encode_us(7, sale_opt_out=1)
BAD_USCA = "xlgWE"  # go-gpp's parse_test vector: cut short in SensitiveDataProcessing
BAD_USCA_TEXT = (
    "GPP consent string is invalid and will be ignored. (error parsing uspca consent string: unable to set field "
    "CoreSegment.SensitiveDataProcessing due to parse error: expected 2 bits to start at bit 32, but the byte "
    "array was only 4 bytes long)"
)

# (name, request, expected Regs fields; unnamed fields are not checked)
SIGNALS = [
    # --- GDPR signal ---
    ("regs.gdpr 1", req({"gdpr": 1}), {"gdpr_signal": 1, "warnings": ()}),
    ("regs.gdpr 0", req({"gdpr": 0}), {"gdpr_signal": 0}),
    ("no regs.gdpr is ambiguous", req({"coppa": 0}), {"gdpr_signal": -1}),
    ("user.consent alone is ambiguous", req(consent=TCF), {"gdpr_signal": -1, "consent": TCF}),
    ("gpp_sid holding 2 decides 1", req({"gpp_sid": [2, 6]}), {"gdpr_signal": 1, "gpp_sid": (2, 6)}),
    ("gpp_sid without 2 decides 0", req({"gpp_sid": [7]}), {"gdpr_signal": 0, "warnings": ()}),
    ("gpp_sid wins over regs.gdpr, conflict warned", req({"gdpr": 0, "gpp_sid": [2]}),
     {"gdpr_signal": 1, "warnings": ((W, GDPR_CONFLICT),)}),
    ("gpp_sid agreeing with regs.gdpr is not warned", req({"gdpr": 1, "gpp_sid": [2]}),
     {"gdpr_signal": 1, "warnings": ()}),
    ("empty gpp_sid: regs.gdpr decides, yet the conflict is warned (PBS-Go)", req({"gdpr": 1, "gpp_sid": []}),
     {"gdpr_signal": 1, "warnings": ((W, GDPR_CONFLICT),)}),
    ("empty gpp_sid and no regs.gdpr: ambiguous", req({"gpp_sid": []}), {"gdpr_signal": -1, "warnings": ()}),
    # --- consent ---
    ("user.consent", req({"gdpr": 1}, TCF), {"consent": TCF}),
    ("GPP section 2 is the consent", req({"gpp": gpp(s2=TCF), "gpp_sid": [2]}), {"consent": TCF, "warnings": ()}),
    ("GPP section 2 is read even when gpp_sid does not list 2", req({"gpp": gpp(s2=TCF), "gpp_sid": [6]}),
     {"consent": TCF, "gdpr_signal": 0}),
    ("GPP section 2 wins over user.consent, conflict warned", req({"gpp": gpp(s2=TCF)}, TCF_B),
     {"consent": TCF, "warnings": ((W, CONSENT_CONFLICT),)}),
    ("same consent in both is not warned", req({"gpp": gpp(s2=TCF)}, TCF), {"consent": TCF, "warnings": ()}),
    ("GPP without section 2: user.consent", req({"gpp": gpp(s6="1YNN")}, TCF_B), {"consent": TCF_B}),
    # --- US Privacy ---
    ("regs.us_privacy", req({"us_privacy": "1YYN"}), {"us_privacy": "1YYN", "warnings": ()}),
    ("GPP section 6 when gpp_sid lists 6", req({"gpp": gpp(s6="1YNN"), "gpp_sid": [6]}), {"us_privacy": "1YNN"}),
    ("GPP section 6 unused when gpp_sid does not list 6", req({"gpp": gpp(s6="1YNN"), "gpp_sid": [7]}),
     {"us_privacy": ""}),
    ("regs.us_privacy when gpp_sid does not list 6", req({"gpp": gpp(s6="1YNN"), "us_privacy": "1NNN"}),
     {"us_privacy": "1NNN", "warnings": ()}),
    ("GPP section 6 wins over regs.us_privacy, conflict warned",
     req({"gpp": gpp(s6="1YNN"), "gpp_sid": [6], "us_privacy": "1NYN"}),
     {"us_privacy": "1YNN", "warnings": ((W, USP_CONFLICT),)}),
    ("same US Privacy in both is not warned", req({"gpp": gpp(s6="1YNN"), "gpp_sid": [6], "us_privacy": "1YNN"}),
     {"us_privacy": "1YNN", "warnings": ()}),
    ("an invalid GPP section 6 is dropped and warned", req({"gpp": gpp(s6="1XNN"), "gpp_sid": [6]}),
     {"us_privacy": "", "warnings": ((W, "CCPA consent is invalid and will be ignored. (request.regs.ext.us_privacy "
                                         "must specify 'N', 'Y', or '-' for the explicit notice)"),)}),
    ("an empty GPP section 6 falls back to regs.us_privacy",
     req({"gpp": gpp(s6=""), "gpp_sid": [6], "us_privacy": "1NYN"}), {"us_privacy": "1NYN", "warnings": ()}),
    ("GPP section 6 listed but absent: regs.us_privacy", req({"gpp": gpp(s2=TCF), "gpp_sid": [6],
                                                              "us_privacy": "1NYN"}), {"us_privacy": "1NYN"}),
    # --- the GPP string ---
    ("GPP string parsed with its US sections", req({"gpp": gpp(s2=TCF, s7=USNAT), "gpp_sid": [7]}),
     {"gpp_sid": (7,), "warnings": ()}),
    ("GPP header error: warned, string ignored, user.consent used", req({"gpp": "malformed"}, TCF_B),
     {"gpp": None, "consent": TCF_B, "warnings": (
         (W, "GPP consent string is invalid and will be ignored. (error parsing GPP header, header must have "
             "type=3)"),)}),
    ("go-gpp vector: a US section that does not decode is warned", req({"gpp": "DBABBgA~xlgWE"}),
     {"warnings": ((W, BAD_USCA_TEXT),)}),
    ("a bad US section does not lose the other sections", req({"gpp": gpp(s2=TCF, s8=BAD_USCA), "gpp_sid": [2]}),
     {"consent": TCF, "warnings": ((W, BAD_USCA_TEXT),)}),
    ("only the first bad US section is warned", req({"gpp": gpp(s8=BAD_USCA, s9="")}),
     {"warnings": ((W, BAD_USCA_TEXT),)}),
    ("an empty regs.gpp is no GPP", req({"gpp": "", "gdpr": 0}), {"gpp": None, "warnings": ()}),
    # --- COPPA ---
    ("regs.coppa 1", req({"coppa": 1}), {"coppa": True}),
    ("regs.coppa 0", req({"coppa": 0}), {"coppa": False}),
    # --- every conflict at once, in PBS-Go's order ---
    ("warnings in PBS-Go's order",
     req({"gpp": gpp(s2=TCF, s6="1YNN", s8=BAD_USCA), "gpp_sid": [2, 6], "gdpr": 0, "us_privacy": "1NNN"}, TCF_B),
     {"warnings": ((W, BAD_USCA_TEXT), (W, CONSENT_CONFLICT), (W, GDPR_CONFLICT), (W, USP_CONFLICT))}),
]


@pytest.mark.parametrize(("name", "request_", "expected"), SIGNALS, ids=[row[0] for row in SIGNALS])
def test_signals(name: str, request_: dict[str, Any], expected: dict[str, Any]) -> None:
    before = copy.deepcopy(request_)
    regs = read_regs(request_)
    assert {key: getattr(regs, key) for key in expected} == expected
    assert request_ == before


def test_us_sections_are_decoded_once_for_the_modules() -> None:
    regs = read_regs(req({"gpp": gpp(s7=USNAT, s8=BAD_USCA), "gpp_sid": [7, 8]}))
    assert regs.us_sections[7] is not None and regs.us_sections[7].sale_opt_out == 1
    assert 8 in regs.us_sections and regs.us_sections[8] is None


@pytest.mark.parametrize(
    "request_", [{"id": "r"}, {"regs": {}}, {"regs": None, "user": {"id": "u"}}, {"user": {"consent": ""}}]
)
def test_no_signal_is_the_shared_empty_regs(request_: dict[str, Any]) -> None:
    assert read_regs(request_) is EMPTY_REGS
    assert (EMPTY_REGS.gdpr_signal, EMPTY_REGS.warnings, EMPTY_REGS.us_sections) == (-1, (), {})


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        ({"regs": []}, "request.regs must be an object"),
        ({"user": "u"}, "request.user must be an object"),
        ({"user": {"consent": 1}}, "request.user.consent must be a string"),
        ({"regs": {"gpp": 5}}, "request.regs.gpp must be a string"),
        ({"regs": {"us_privacy": ["1YNN"]}}, "request.regs.us_privacy must be a string"),
        ({"regs": {"gpp_sid": "2,6"}}, "request.regs.gpp_sid must be an array of integers from -128 to 127"),
        ({"regs": {"gpp_sid": [2, 200]}}, "request.regs.gpp_sid must be an array of integers from -128 to 127"),
        ({"regs": {"gpp_sid": [True]}}, "request.regs.gpp_sid must be an array of integers from -128 to 127"),
        ({"regs": {"gdpr": 2}}, "request.regs.gdpr must be either 0 or 1"),
        ({"regs": {"gdpr": True}}, "request.regs.gdpr must be either 0 or 1"),
        ({"regs": {"coppa": "1"}}, "request.regs.coppa must be an integer"),
    ],
)
def test_wrong_types(request_: dict[str, Any], message: str) -> None:
    with pytest.raises(RegsError) as info:
        read_regs(request_)
    assert str(info.value) == message and isinstance(info.value, ValueError)


# (name, request, expected regs / user after the downgrade; None = unchanged)
LEGACY = [
    ("no GPP and no gpp_sid: nothing", req({"gdpr": 1, "us_privacy": "1YNN"}, TCF), None),
    ("no regs: nothing", req(consent=TCF), None),
    ("gpp_sid holding 2 sets regs.gdpr 1", req({"gpp_sid": [2]}), ({"gpp_sid": [2], "gdpr": 1}, None)),
    ("gpp_sid without 2 sets regs.gdpr 0", req({"gpp_sid": [7]}), ({"gpp_sid": [7], "gdpr": 0}, None)),
    ("an empty gpp_sid sets regs.gdpr 0", req({"gpp_sid": []}), ({"gpp_sid": [], "gdpr": 0}, None)),
    ("regs.gdpr present is kept", req({"gpp_sid": [2], "gdpr": 0}), None),
    ("GPP section 2 fills an absent user", req({"gpp": gpp(s2=TCF), "gdpr": 1}),
     ({"gpp": gpp(s2=TCF), "gdpr": 1}, {"consent": TCF})),
    ("GPP section 2 fills an empty user.consent", req({"gpp": gpp(s2=TCF), "gdpr": 1}, ""),
     ({"gpp": gpp(s2=TCF), "gdpr": 1}, {"consent": TCF})),
    ("user.consent present is kept", req({"gpp": gpp(s2=TCF), "gdpr": 1}, TCF_B), None),
    ("GPP section 6 fills regs.us_privacy when gpp_sid lists 6", req({"gpp": gpp(s6="1YNN"), "gpp_sid": [6]}),
     ({"gpp": gpp(s6="1YNN"), "gpp_sid": [6], "gdpr": 0, "us_privacy": "1YNN"}, None)),
    ("GPP section 6 unused when gpp_sid does not list 6", req({"gpp": gpp(s6="1YNN"), "gdpr": 0}), None),
    ("regs.us_privacy present is kept", req({"gpp": gpp(s6="1YNN"), "gpp_sid": [6], "gdpr": 0, "us_privacy": "1NNN"}),
     None),
    ("everything at once", req({"gpp": gpp(s2=TCF, s6="1YNN"), "gpp_sid": [2, 6]}),
     ({"gpp": gpp(s2=TCF, s6="1YNN"), "gpp_sid": [2, 6], "gdpr": 1, "us_privacy": "1YNN"}, {"consent": TCF})),
    ("an unparseable GPP string still lets gpp_sid set regs.gdpr", req({"gpp": "malformed", "gpp_sid": [2]}),
     ({"gpp": "malformed", "gpp_sid": [2], "gdpr": 1}, None)),
]


@pytest.mark.parametrize(("name", "request_", "expected"), LEGACY, ids=[row[0] for row in LEGACY])
def test_legacy_from_gpp(name: str, request_: dict[str, Any], expected: tuple[Any, Any] | None) -> None:
    before = copy.deepcopy(request_)
    out = legacy_from_gpp(request_, read_regs(request_))
    assert request_ == before
    if expected is None:
        assert out is None
        return
    assert out is not None
    regs, user = expected
    assert out["regs"] == regs
    assert out.get("user") == (user if user is not None else request_.get("user"))
    assert out["id"] == "r"


def test_legacy_keeps_the_other_user_fields() -> None:
    request = {"regs": {"gpp": gpp(s2=TCF), "gdpr": 1}, "user": {"id": "u1", "consent": ""}}
    out = legacy_from_gpp(request, read_regs(request))
    assert out is not None and out["user"] == {"id": "u1", "consent": TCF}
    assert out["regs"] is request["regs"]  # unchanged objects are shared, not copied
