"""Privacy in the auction end to end: the real app, mock bidders on real sockets, real consent strings.

Each row of ``CASES`` is one rule of PBS-Go's ``cleanOpenRTBRequests``/``applyPrivacy`` with the
TCF engine of ``gdpr/``: which bidders are called and what each one receives. ``alpha`` has GVL
vendor id 32, ``beta`` 52 (the browser findings of issue 18: consent for vendor 32 only). Consent
strings are built with the project's own TCF encoder. Without a vendor list file enforcement is
"basic" (purpose and vendor consent); one row loads a vendor list for the "full" algorithm.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.auction.helpers import banner_imp, bid, bidder_config
from tests.conftest import write_account
from tests.privacy.tcf_encoder import CoreSegment, Restriction
from tests.privacy.test_gpp_us import encode_us

ALPHA, BETA = 32, 52
FULL_USER = {
    "id": "user-1",
    "buyeruid": "explicit",
    "yob": 1980,
    "gender": "F",
    "keywords": "cars",
    "data": [{"id": "seg", "segment": [{"id": "1"}]}],
    "eids": [{"source": "id5-sync.com", "uids": [{"id": "ID5-1"}]}],
}
FULL_DEVICE = {
    "ua": "test-agent",
    "ip": "203.0.113.77",
    "ipv6": "2001:db8:85a3:1234:5678:8a2e:370:7334",
    "ifa": "ifa-1",
    "geo": {"lat": 51.123456, "lon": -0.98765, "country": "DEU", "city": "Berlin"},
}


def consent(**fields: Any) -> str:
    return CoreSegment(**fields).encode()


BROWSER_CONSENT = consent(purposes=[1, 2, 3, 4, 7], vendors=[ALPHA])
BOTH_CONSENT = consent(purposes=list(range(1, 11)), vendors=[ALPHA, BETA], special_features=[1])
PURPOSE_ONE_ONLY = consent(purposes=[1], vendors=[ALPHA, BETA])
NO_GDPR = {"gdpr": 0}
# GPP with only a US National section (header "DBABL": section 7): every notice given, and
# opted out of the sale of personal information
USNAT_NOTICES = {
    "sharing_notice": 1, "sale_opt_out_notice": 1, "sharing_opt_out_notice": 1,
    "targeted_advertising_opt_out_notice": 1, "sensitive_data_processing_opt_out_notice": 1,
    "sensitive_data_limit_use_notice": 1,
}  # fmt: skip
USNAT_SALE_OPT_OUT = {"gdpr": 0, "gpp_sid": [7], "gpp": "DBABL~" + encode_us(7, **USNAT_NOTICES, sale_opt_out=1)}
USNAT_CLEAN = {"gdpr": 0, "gpp_sid": [7], "gpp": "DBABL~" + encode_us(7, **USNAT_NOTICES)}
US_GENERAL = {
    "modules": [{"code": "iab.usgeneral", "enabled": True}],
    "allowactivities": {
        "transmitUfpd": {"rules": [{"privacyreg": ["iab.usgeneral"]}]},
        "transmitPreciseGeo": {"rules": [{"privacyreg": ["iab.usgeneral"]}]},
    },
}


@dataclass
class Case:
    regs: dict[str, Any] | None = None
    consent: str | None = None
    account: dict[str, Any] | None = None
    config: dict[str, Any] = field(default_factory=dict)
    device: dict[str, Any] = field(default_factory=lambda: dict(FULL_DEVICE))
    ext_prebid: dict[str, Any] = field(default_factory=dict)
    called: tuple[str, ...] = ("alpha", "beta")
    ids: tuple[str, ...] = ("alpha", "beta")  # who keeps buyeruid, EIDs, device ids
    precise: tuple[str, ...] = ("alpha", "beta")  # who keeps the full IP and lat/lon
    ip: str = "203.0.113.0"  # the masked IPv4 when not precise
    ipv6: str = "2001:db8:85a3:1200::"


CASES = {
    # the issue's browser findings
    "vendor 52 without consent is not called": Case(
        {"gdpr": 1}, BROWSER_CONSENT, called=("alpha",), ids=("alpha",), precise=()
    ),
    "purpose 1 only: no bidder is called": Case({"gdpr": 1}, PURPOSE_ONE_ONLY, called=()),
    "full consent with special feature 1": Case({"gdpr": 1}, BOTH_CONSENT),
    "special feature 1 missing: geo and IP masked": Case(
        {"gdpr": 1}, consent(purposes=list(range(1, 11)), vendors=[ALPHA, BETA]), precise=()
    ),
    "GPP section 2 drives TCF": Case(
        {"gpp_sid": [2], "gpp": "DBABMA~" + BROWSER_CONSENT}, None, called=("alpha",), ids=("alpha",), precise=()
    ),
    "GPP sid without 2 turns GDPR off": Case({"gdpr": 1, "gpp_sid": [6], "gpp": "DBABTA~1YNN"}, PURPOSE_ONE_ONLY),
    "empty consent: purpose 2 enforced, nobody called": Case({"gdpr": 1}, "", called=()),
    "malformed consent: nobody called": Case({"gdpr": 1}, "not-a-consent-string", called=()),
    "gdpr 0: everything passes": Case({"gdpr": 0}, PURPOSE_ONE_ONLY),
    "no signal, EEA country: GDPR applies": Case(None, PURPOSE_ONE_ONLY, called=()),
    "no signal, non-EEA country: GDPR does not apply": Case(
        None, PURPOSE_ONE_ONLY, device={**FULL_DEVICE, "geo": {"country": "USA", "lat": 40.5, "lon": -73.25}}
    ),
    "publisher restriction type 0 on purpose 2 for vendor 32": Case(
        {"gdpr": 1},
        consent(
            purposes=list(range(1, 11)),
            vendors=[ALPHA, BETA],
            special_features=[1],
            restrictions=[Restriction(purpose=2, restriction_type=0, ranges=[(ALPHA, ALPHA)])],
        ),
        called=("beta",),
        ids=("beta",),
        precise=("beta",),
    ),
    # account gdpr settings (PBS-Go's account keys)
    "account gdpr.enabled false": Case({"gdpr": 1}, PURPOSE_ONE_ONLY, account={"gdpr": {"enabled": False}}),
    "account channel_enabled.web false": Case(
        {"gdpr": 1}, PURPOSE_ONE_ONLY, account={"gdpr": {"channel_enabled": {"web": False}}}
    ),
    "account purpose2 not enforced: called, ids still need a purpose": Case(
        {"gdpr": 1},
        PURPOSE_ONE_ONLY,
        account={"gdpr": {"purpose2": {"enforce_purpose": False, "enforce_vendors": False}}},
        ids=(),
        precise=(),
    ),
    "account purpose2 vendor exception": Case(
        {"gdpr": 1},
        BROWSER_CONSENT,
        account={"gdpr": {"purpose2": {"vendor_exceptions": ["beta"]}}},
        precise=(),  # a purpose 2 exception also counts for ids (PBS-Go's allowID keeps exceptions)
    ),
    "account special_feature1 not enforced": Case(
        {"gdpr": 1}, BROWSER_CONSENT, account={"gdpr": {"special_feature1": {"enforce": False}}},
        called=("alpha",), ids=("alpha",), precise=("alpha",),
    ),
    "account basic_enforcement_vendors: purpose consent is enough": Case(
        {"gdpr": 1}, BROWSER_CONSENT, account={"gdpr": {"basic_enforcement_vendors": ["beta"]}}, precise=()
    ),
    "host non_standard_publishers": Case(
        {"gdpr": 1}, PURPOSE_ONE_ONLY, config={"gdpr": {"non_standard_publishers": ["1001"]}}
    ),
    "host gdpr.enabled false": Case({"gdpr": 1}, PURPOSE_ONE_ONLY, config={"gdpr": {"enabled": False}}),
    # GPP US sections through PBS-Java's iab.usgeneral module and gppSid conditions
    "usnat sale opt-out under iab.usgeneral: no user data": Case(
        USNAT_SALE_OPT_OUT, account={"privacy": US_GENERAL}, ids=(),
    ),
    "usnat without opt-outs under iab.usgeneral: everything passes": Case(
        USNAT_CLEAN, account={"privacy": US_GENERAL},
    ),
    "usnat sale opt-out without the module: everything passes": Case(USNAT_SALE_OPT_OUT),
    "gppSid condition keeps beta out when the request is under section 7": Case(
        USNAT_CLEAN,
        account={"privacy": {"allowactivities": {"fetchBids": {"rules": [
            {"condition": {"componentName": ["beta"], "gppSid": [7]}, "allow": False}]}}}},
        called=("alpha",), ids=("alpha",), precise=("alpha",),
    ),
    # LMT, COPPA, CCPA and IP masking bits
    "device.lmt=1": Case(NO_GDPR, device={**FULL_DEVICE, "lmt": 1}, ids=(), precise=()),
    "device.lmt=1 with lmt.enforce false": Case(
        NO_GDPR, device={**FULL_DEVICE, "lmt": 1}, config={"lmt": {"enforce": False}}
    ),
    "us_privacy opt-out with ccpa.enforce": Case(
        {"gdpr": 0, "us_privacy": "1YYN"}, config={"ccpa": {"enforce": True}}, ids=(), precise=()
    ),
    "us_privacy opt-out, ccpa not enforced": Case({"gdpr": 0, "us_privacy": "1YYN"}),
    "us_privacy opt-out, account ccpa.enabled": Case(
        {"gdpr": 0, "us_privacy": "1YYN"}, account={"ccpa": {"enabled": True}}, ids=(), precise=()
    ),
    "us_privacy opt-out, nosale for beta": Case(
        {"gdpr": 0, "us_privacy": "1YYN"}, config={"ccpa": {"enforce": True}}, ext_prebid={"nosale": ["beta"]},
        ids=("beta",), precise=("beta",),
    ),
    "account IP masking bits": Case(
        NO_GDPR,
        device={**FULL_DEVICE, "lmt": 1},
        account={"privacy": {"ipv4": {"anon_keep_bits": 16}, "ipv6": {"anon_keep_bits": 32}}},
        ids=(), precise=(), ip="203.0.0.0", ipv6="2001:db8::",
    ),
}


def _request(case: Case) -> dict[str, Any]:
    user = dict(FULL_USER)
    if case.consent is not None:
        user["consent"] = case.consent
    request: dict[str, Any] = {
        "id": "req-1",
        "tmax": 500,
        "imp": [banner_imp("imp-1", alpha={"p": 1}, beta={"p": 2})],
        "site": {"page": "https://news.example/a", "publisher": {"id": "1001"}},
        "device": case.device,
        "user": user,
        "ext": {"prebid": {"targeting": {"pricegranularity": "medium"}, **case.ext_prebid}},
    }
    if case.regs is not None:
        request["regs"] = case.regs
    return request


def _has_ids(sent: dict[str, Any]) -> bool:
    user, device = sent.get("user", {}), sent.get("device", {})
    eids = user.get("eids") or user.get("ext", {}).get("eids")
    return bool(user.get("buyeruid") or eids or device.get("ifa"))


def _no_ids_left(sent: dict[str, Any]) -> bool:
    user, device = sent.get("user", {}), sent.get("device", {})
    eids = user.get("eids") or user.get("ext", {}).get("eids")
    return not (user.get("buyeruid") or user.get("id") or user.get("yob") or user.get("gender") or eids
                or device.get("ifa"))


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
async def test_privacy_rule(case: Case, make_client, bidders, data_dir: Path) -> None:
    bidders.bids["alpha"] = [bid("imp-1", 1.0, "a1")]
    bidders.bids["beta"] = [bid("imp-1", 0.5, "b1")]
    if case.account is not None:
        write_account(data_dir, "1001", case.account)
    config = bidder_config(bidders, "alpha", "beta", alpha={"gvl_vendor_id": ALPHA}, beta={"gvl_vendor_id": BETA})
    for key, value in case.config.items():
        config[key] = value
    client = await make_client(config)
    response = await client.post("/openrtb2/auction", data=json.dumps(_request(case)))
    assert response.status == 200, await response.text()
    data = await response.json()
    assert tuple(sorted(bidders.received)) == case.called
    warnings = data.get("ext", {}).get("warnings", {})
    for name in ("alpha", "beta"):
        blocked = [w for w in warnings.get(name, []) if w["code"] == 10017]
        assert bool(blocked) == (name not in case.called), (name, warnings)
    for name in case.called:
        sent = bidders.received[name][0]
        if name in case.ids:
            assert _has_ids(sent), (name, sent.get("user"), sent.get("device"))
        else:
            assert _no_ids_left(sent), (name, sent.get("user"), sent.get("device"))
        device = sent["device"]
        if name in case.precise:
            assert device["ip"] == FULL_DEVICE["ip"] and device["geo"]["lat"] == case.device["geo"]["lat"]
        else:
            assert device["ip"] == case.ip and device["ipv6"] == case.ipv6
            assert device["geo"].get("lat") != case.device["geo"]["lat"]


async def test_coppa_empties_geo_and_demographics(make_client, bidders) -> None:
    bidders.bids["alpha"] = []
    client = await make_client(bidder_config(bidders, "alpha", alpha={"gvl_vendor_id": ALPHA}))
    request = _request(Case())
    request["imp"] = [banner_imp("imp-1", alpha={"p": 1})]
    request["regs"] = {"coppa": 1, "gdpr": 0}
    request["user"]["geo"] = {"lat": 1.5, "lon": 2.5, "country": "DEU"}
    response = await client.post("/openrtb2/auction", data=json.dumps(request))
    assert response.status == 200
    sent = bidders.received["alpha"][0]
    assert sent["device"]["geo"] == {} and sent["user"]["geo"] == {}
    assert _no_ids_left(sent) and sent["device"]["ip"] == "203.0.113.0"
    assert sent["user"]["keywords"] == "cars"  # COPPA keeps what is not an id or demographic (PBS-Go)


async def test_gdpr_metrics_and_analytics_reasons(make_client, bidders, tmp_path: Path) -> None:
    bidders.bids["alpha"] = [bid("imp-1", 1.0, "a1")]
    log = tmp_path / "analytics.jsonl"
    config = bidder_config(bidders, "alpha", "beta", alpha={"gvl_vendor_id": ALPHA}, beta={"gvl_vendor_id": BETA})
    config["analytics"] = {"file": {"filename": str(log)}}
    client = await make_client(config)
    request = _request(Case({"gdpr": 1}, BROWSER_CONSENT))
    response = await client.post("/openrtb2/auction", data=json.dumps(request))
    assert response.status == 200
    metrics = await (await client.get("/metrics")).text()
    assert 'hbserver_adapter_gdpr_requests_blocked{adapter="beta"} 1' in metrics
    assert 'hbserver_adapter_gdpr_requests_blocked{adapter="alpha"} 0' in metrics
    assert 'hbserver_privacy_tcf{source="request",version="v2"} 1' in metrics
    assert 'hbserver_adapter_buyeruids_scrubbed{adapter="alpha"}' in metrics
    await client.close()
    record = next(json.loads(line) for line in log.read_text().splitlines() if '"auction"' in line)
    assert record["privacy"]["gdpr"] is True and record["privacy"]["tcf"] == "v2"
    assert record["privacy"]["blocked"] == {"beta": "tcf purpose 2"}
    alpha = next(a for a in record["adapters"] if a["bidder"] == "alpha")
    assert alpha["scrubbed"] == ["tcf special feature 1"]


@pytest.mark.parametrize(
    ("alias_gvl_ids", "requests", "blocked"),
    [
        pytest.param({}, 2, False, id="the alias shares alpha's vendor 32"),
        pytest.param({"gamma2": BETA}, 1, True, id="aliasgvlids gives the alias vendor 52"),
    ],
)
async def test_request_alias_uses_its_own_gvl_id(alias_gvl_ids, requests, blocked, make_client, bidders) -> None:
    bidders.bids["alpha"] = []
    client = await make_client(bidder_config(bidders, "alpha", alpha={"gvl_vendor_id": ALPHA}))
    request = _request(Case({"gdpr": 1}, BROWSER_CONSENT))
    request["imp"] = [banner_imp("imp-1", alpha={"p": 1}, gamma2={"p": 2})]
    request["ext"]["prebid"].update(aliases={"gamma2": "alpha"}, aliasgvlids=alias_gvl_ids)
    response = await client.post("/openrtb2/auction", data=json.dumps(request))
    assert response.status == 200, await response.text()
    assert len(bidders.received["alpha"]) == requests  # gamma2 posts to alpha's endpoint
    warnings = (await response.json()).get("ext", {}).get("warnings", {})
    assert ("gamma2" in warnings) == blocked
