"""First-party data per bidder, EID permissions and supply chains per bidder (``hbserver.auction.exchange.fpd``).

Rows translated from PBS-Go's ``firstpartydata`` tests (extractfpdforbidders, resolvefpd,
extractbidderconfigfpd, resolveUser/Site/App/Device), ``schain`` tests, the exchange's EID tests
and the endpoint's eidpermissions validation; then one auction end to end through the real app.
"""

from __future__ import annotations

import copy
import json
from typing import Any
from unittest.mock import ANY

import pytest

from hbserver.auction.exchange.fpd import BidderData, merge_clone, validate_bidder_data
from hbserver.bidders.registry import build_registry
from hbserver.config import SChainNode
from tests.auction.helpers import banner_imp, bid, bidder_config
from tests.conftest import make_config

REGISTRY = build_registry(make_config())  # appnexus and rubicon known; telaria is not
NO_HOST = SChainNode()
HOST = SChainNode(asi="pbshostcompany.com", sid="00001", rid="BidRequest")
HOST_NODE = {"asi": "pbshostcompany.com", "sid": "00001", "rid": "BidRequest", "hp": 1}
ALIASES = {"requestAlias": "appnexus"}
ABSENT = object()  # the field must not be in the bidder's request


def prebid(**fields: Any) -> dict[str, Any]:
    return {"ext": {"prebid": fields}}


def run(
    request: dict[str, Any], bidders: tuple[str, ...], host: SChainNode = NO_HOST, aliases: dict[str, str] | None = None
) -> dict[str, dict[str, Any]]:
    """Each bidder's copy of ``request`` after :meth:`BidderData.apply`, as the split makes it
    (a shallow copy per bidder); the request itself must come out unchanged."""
    before = copy.deepcopy(request)
    data = BidderData.from_request(request, aliases or {}, host, registry=REGISTRY)
    out = {}
    for name in bidders:
        own = dict(request)
        if data is not None:
            data.apply(own, name)
        out[name] = own
    assert request == before
    return out


def check(got: dict[str, Any], expected: dict[str, Any]) -> None:
    for key, value in expected.items():
        if value is ABSENT:
            assert key not in got, key
        else:
            assert got.get(key) == value, key


# --- nothing to do ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "request_fields",
    [
        pytest.param({}, id="no-ext"),
        pytest.param({"ext": {"prebid": {"targeting": {}}}}, id="prebid-without-fpd"),
        pytest.param(prebid(data={}), id="empty-data-object"),
        pytest.param(prebid(data={"eidpermissions": []}, bidderconfig=[], schains=[]), id="empty-lists"),
        pytest.param({"ext": {"prebid": "nonsense"}}, id="unvalidated-garbage"),
    ],
)
def test_request_without_fpd_schains_or_host_node_needs_no_work(request_fields):
    request = {"id": "r", "site": {"page": "p", "ext": {"data": {"a": 1}}}, **request_fields}
    assert BidderData.from_request(request, {}, NO_HOST, registry=REGISTRY) is None


def test_host_node_alone_makes_work():
    assert BidderData.from_request({"id": "r"}, {}, HOST) is not None


# --- first-party data ---------------------------------------------------------------------------

SITE = {"id": "reqSiteId", "page": "http://www.foobar.com/1234.html", "publisher": {"id": "1"}}
CONTENT_DATA = [{"id": "reqContentDataId1", "name": "reqContentDataName1"}]
USER_DATA = [{"id": "userDataId1", "name": "userDataName1"}]

# (request, {bidder: expected fields of its request}); appnexus is listed or configured, rubicon/telaria vary
FPD_ROWS = [
    pytest.param(
        {"site": {**SITE, "content": {"len": 900, "data": CONTENT_DATA}}, **prebid(data={"bidders": ["appnexus"]})},
        {
            "appnexus": {"site": {**SITE, "content": {"len": 900, "data": CONTENT_DATA}}},
            "rubicon": {"site": {**SITE, "content": {"len": 900}}},
        },
        id="global-fpd-defined-site-content-data",
    ),
    pytest.param(
        {
            "app": {"id": "reqAppId", "content": {"title": "t", "data": CONTENT_DATA}},
            **prebid(data={"bidders": ["appnexus"]}),
        },
        {
            "appnexus": {"app": {"id": "reqAppId", "content": {"title": "t", "data": CONTENT_DATA}}},
            "rubicon": {"app": {"id": "reqAppId", "content": {"title": "t"}}},
        },
        id="global-fpd-defined-app-content-data",
    ),
    pytest.param(
        {"user": {"id": "reqUserID", "yob": 1982, "data": USER_DATA}, **prebid(data={"bidders": ["appnexus"]})},
        {
            "appnexus": {"user": {"id": "reqUserID", "yob": 1982, "data": USER_DATA}},
            "rubicon": {"user": {"id": "reqUserID", "yob": 1982}},
        },
        id="global-fpd-defined-data-user",
    ),
    pytest.param(
        {
            "site": SITE,
            **prebid(
                data={"bidders": ["appnexus"]},
                bidderconfig=[
                    {
                        "bidders": ["appnexus"],
                        "config": {
                            "ortb2": {"site": {"id": "apnSiteId", "keywords": "apnKeywords", "sectioncat": ["books"]}}
                        },
                    }
                ],
            ),
        },
        {
            "appnexus": {"site": {**SITE, "id": "apnSiteId", "keywords": "apnKeywords", "sectioncat": ["books"]}},
            "rubicon": {"site": SITE},
        },
        id="global-fpd-defined-site",
    ),
    pytest.param(
        {
            "app": {"id": "reqAppId", "publisher": {"id": "1"}},
            **prebid(
                data={"bidders": ["appnexus"]},
                bidderconfig=[
                    {"bidders": ["appnexus"], "config": {"ortb2": {"app": {"id": "apnAppId", "cat": ["books"]}}}}
                ],
            ),
        },
        {"appnexus": {"app": {"id": "apnAppId", "cat": ["books"], "publisher": {"id": "1"}}}},
        id="global-fpd-defined-app",
    ),
    pytest.param(
        {"site": {**SITE, "ext": {"amp": 1, "data": {"somesitefpd": "x"}}}, **prebid(data={"bidders": []})},
        {"appnexus": {"site": {**SITE, "ext": {"amp": 1}}}, "rubicon": {"site": {**SITE, "ext": {"amp": 1}}}},
        id="global-fpd-empty-site",
    ),
    pytest.param(
        {"app": {"id": "a", "ext": {"data": {"someappfpd": "x"}}}, **prebid(data={"bidders": []})},
        {"appnexus": {"app": {"id": "a"}}},  # an ext left empty goes
        id="global-fpd-empty-app",
    ),
    pytest.param(
        {"user": {"id": "u", "keywords": "k", "ext": {"amp": 1, "data": {"x": 1}}}, **prebid(data={"bidders": []})},
        {"appnexus": {"user": {"id": "u", "keywords": "k", "ext": {"amp": 1}}}},
        id="global-fpd-empty-user",
    ),
    pytest.param(
        {"site": {**SITE, "content": {"data": CONTENT_DATA}}, **prebid(data={"bidders": []})},
        {"appnexus": {"site": {**SITE, "content": {}}}},  # PBS-Go keeps the emptied content
        id="global-fpd-empty-site-content-data",
    ),
    pytest.param(
        {"user": {"id": "u", "data": USER_DATA}, **prebid(data={"bidders": []})},
        {"appnexus": {"user": {"id": "u"}}},
        id="global-fpd-empty-user-data",
    ),
    pytest.param(
        {
            "site": {**SITE, "ext": {"amp": 1, "data": {"x": 1}}, "content": {"data": CONTENT_DATA}},
            "user": {"data": USER_DATA},
        },
        {
            "appnexus": {
                "site": {**SITE, "ext": {"amp": 1, "data": {"x": 1}}, "content": {"data": CONTENT_DATA}},
                "user": {"data": USER_DATA},
            }
        },
        id="global-fpd-not-defined",
    ),
    pytest.param(
        {
            "site": {**SITE, "ext": {"data": "fpdGlobalSiteData"}},
            "user": {"id": "reqUserId"},
            **prebid(
                bidderconfig=[
                    {
                        "bidders": ["appnexus"],
                        "config": {"ortb2": {"site": {"id": "apnSiteId"}, "user": {"id": "apnUserId"}}},
                    },
                    {"bidders": ["telaria"], "config": {"ortb2": {"user": {"keywords": "telariaUserKeywords"}}}},
                ]
            ),
        },
        {
            "appnexus": {
                "site": {**SITE, "id": "apnSiteId", "ext": {"data": "fpdGlobalSiteData"}},
                "user": {"id": "apnUserId"},
            },
            "telaria": {
                "site": {**SITE, "ext": {"data": "fpdGlobalSiteData"}},
                "user": {"id": "reqUserId", "keywords": "telariaUserKeywords"},
            },
            "rubicon": {"site": {**SITE, "ext": {"data": "fpdGlobalSiteData"}}, "user": {"id": "reqUserId"}},
        },
        id="two-bidders-no-global-bidder-list",
    ),
    pytest.param(
        {
            "site": {**SITE, "content": {"len": 900, "data": CONTENT_DATA}},
            "user": {"id": "reqUserId"},
            **prebid(
                data={"bidders": ["appnexus"]},
                bidderconfig=[
                    {"bidders": ["appnexus"], "config": {"ortb2": {"user": {"id": "apnUserId", "gender": "F"}}}},
                    {"bidders": ["telaria"], "config": {"ortb2": {"user": {"id": "telariaFpdUserId"}}}},
                ],
            ),
        },
        {
            "appnexus": {
                "site": {**SITE, "content": {"len": 900, "data": CONTENT_DATA}},
                "user": {"id": "apnUserId", "gender": "F"},
            },
            # configured but not listed: neither the global FPD nor its own config
            "telaria": {"site": {**SITE, "content": {"len": 900}}, "user": {"id": "reqUserId"}},
        },
        id="two-bidders-global-and-non-global-user",
    ),
    pytest.param(
        {
            "site": {**SITE, "content": {"data": CONTENT_DATA}},
            **prebid(
                data={"bidders": ["appnexus", "telaria"]},
                bidderconfig=[{"bidders": ["appnexus"], "config": {"ortb2": {"site": {"name": "apnName"}}}}],
            ),
        },
        {
            "appnexus": {"site": {**SITE, "name": "apnName", "content": {"data": CONTENT_DATA}}},
            "telaria": {"site": {**SITE, "content": {"data": CONTENT_DATA}}},  # listed without a config
            "rubicon": {"site": {**SITE, "content": {}}},
        },
        id="two-bidders-global-without-config-and-global-site-content-data",
    ),
    pytest.param(
        {
            "site": SITE,
            "user": {"id": "reqUserId"},
            **prebid(
                data={"bidders": ["APPNEXUS", "requestAlias"]},
                bidderconfig=[
                    {"bidders": ["appnexus"], "config": {"ortb2": {"site": {"id": "apnSiteId"}}}},
                    {"bidders": ["requestAlias"], "config": {"ortb2": {"user": {"keywords": "aliasUserKeywords"}}}},
                ],
            ),
        },
        {
            "AppNexus": {"site": {**SITE, "id": "apnSiteId"}, "user": {"id": "reqUserId"}},
            "requestAlias": {"site": SITE, "user": {"id": "reqUserId", "keywords": "aliasUserKeywords"}},
        },
        id="two-bidders-correct-case-insensitive-integration",
    ),
    pytest.param(
        {
            "app": {"id": "reqAppId"},
            **prebid(
                data={"bidders": ["requestAlias"]},
                bidderconfig=[{"bidders": ["REQUESTALIAS"], "config": {"ortb2": {"app": {"id": "apnAppId"}}}}],
            ),
        },
        {"requestAlias": {"app": {"id": "reqAppId"}}},
        id="bidder-fpd-alias-not-matches",
    ),
    pytest.param(
        {
            "app": {"id": "reqAppId"},
            **prebid(
                data={"bidders": ["APPNEXUS"]},
                bidderconfig=[{"bidders": ["appnexus"], "config": {"ortb2": {"app": {"id": "apnAppId"}}}}],
            ),
        },
        {"appnexus": {"app": {"id": "apnAppId"}}},
        id="bidder-fpd-case-normalize",
    ),
    pytest.param(
        {
            **prebid(
                data={"bidders": ["appnexus"]},
                bidderconfig=[
                    {
                        "bidders": ["appnexus"],
                        "config": {
                            "ortb2": {"user": {"id": "fpdUser", "yob": 2011, "ext": {"data": {"userdata": "d"}}}}
                        },
                    }
                ],
            )
        },
        {
            "appnexus": {"user": {"id": "fpdUser", "yob": 2011, "ext": {"data": {"userdata": "d"}}}},
            "rubicon": {"user": ABSENT},
        },
        id="req-empty-user-fpd-not-empty-user",
    ),
    pytest.param(
        {
            "site": {**SITE, "ext": {"testSiteExt": 123, "data": {"siteFpd": 123}}},
            "user": {"id": "reqUserID", "ext": {"data": {"testUserFpd": "testuser"}}},
            **prebid(
                data={"bidders": ["appnexus"]},
                bidderconfig=[
                    {
                        "bidders": ["appnexus"],
                        "config": {
                            "ortb2": {
                                "site": {"id": "apnSiteId", "ref": "fpdRef", "ext": {"data": {"more": {"fpd": 123}}}}
                            }
                        },
                    }
                ],
            ),
        },
        {
            "appnexus": {
                "site": {
                    **SITE,
                    "id": "apnSiteId",
                    "ref": "fpdRef",
                    "ext": {"testSiteExt": 123, "data": {"siteFpd": 123, "more": {"fpd": 123}}},
                },
                "user": {"id": "reqUserID", "ext": {"data": {"testUserFpd": "testuser"}}},
            },
            "rubicon": {"site": {**SITE, "ext": {"testSiteExt": 123}}, "user": {"id": "reqUserID"}},
        },
        id="global-and-bidder-fpd-site-user",
    ),
    pytest.param(
        {
            "site": {**SITE, "content": {"episode": 6, "title": "episodeName", "data": CONTENT_DATA}},
            **prebid(
                data={"bidders": ["appnexus"]},
                bidderconfig=[
                    {
                        "bidders": ["appnexus"],
                        "config": {"ortb2": {"site": {"content": {"episode": 8, "data": [{"id": "siteData1"}]}}}},
                    }
                ],
            ),
        },
        {
            "appnexus": {
                "site": {**SITE, "content": {"episode": 8, "title": "episodeName", "data": [{"id": "siteData1"}]}}
            }
        },
        id="req-and-bidder-fpd-site-content",
    ),
    pytest.param(
        {
            "device": {"make": "reqMake", "model": "reqModel", "ua": "ua"},
            **prebid(
                bidderconfig=[
                    {
                        "bidders": ["appnexus"],
                        "config": {"ortb2": {"device": {"ext": {"wurfl": {"is_mobile": True}}, "make": "Google"}}},
                    }
                ]
            ),
        },
        {
            "appnexus": {
                "device": {"make": "Google", "model": "reqModel", "ua": "ua", "ext": {"wurfl": {"is_mobile": True}}}
            },
            "rubicon": {"device": {"make": "reqMake", "model": "reqModel", "ua": "ua"}},
        },
        id="bidder-fpd-only-device",
    ),
    pytest.param(
        {"site": {**SITE, "ext": {"data": {"x": 1}}}, **prebid(data={"bidders": ["*"]})},
        {"appnexus": {"site": SITE}},
        id="star-in-data-bidders-is-no-wildcard",
    ),
    pytest.param(
        {
            "site": SITE,
            **prebid(bidderconfig=[{"bidders": ["*"], "config": {"ortb2": {"site": {"name": "all"}}}}]),
        },
        {"appnexus": {"site": SITE}},
        id="star-in-bidderconfig-is-no-wildcard",
    ),
    pytest.param(
        {
            "site": SITE,
            **prebid(
                bidderconfig=[
                    {"bidders": ["appnexus"], "config": None},
                    {"bidders": ["rubicon"], "config": {"ortb2": None}},
                ]
            ),
        },
        {"appnexus": {"site": SITE}, "rubicon": {"site": SITE}},
        id="bidder-config-config-null",
    ),
]


@pytest.mark.parametrize(("request_fields", "expected"), FPD_ROWS)
def test_first_party_data_reaches_each_bidder_as_pbs_go_resolves_it(request_fields, expected):
    request = {"id": "req", **copy.deepcopy(request_fields)}
    out = run(request, tuple(expected), aliases=ALIASES)
    for name, fields in expected.items():
        check(out[name], fields)


def test_bidder_keeps_its_buyeruid_and_permitted_eids_over_its_config_user():
    eids = [{"source": "a.example", "uids": [{"id": "1"}]}, {"source": "only-rubicon.example", "uids": [{"id": "2"}]}]
    request = {
        "id": "req",
        "site": SITE,
        "user": {"id": "u", "eids": eids},
        **prebid(
            data={"eidpermissions": [{"source": "only-rubicon.example", "bidders": ["rubicon"]}]},
            bidderconfig=[
                {"bidders": ["appnexus"], "config": {"ortb2": {"user": {"buyeruid": "fpd-uid", "keywords": "k"}}}},
                {"bidders": ["rubicon"], "config": {"ortb2": {"user": {"eids": [{"source": "fpd.example"}]}}}},
            ],
        ),
    }
    data = BidderData.from_request(request, {}, NO_HOST, registry=REGISTRY)
    assert data is not None
    appnexus = {**request, "user": {**request["user"], "buyeruid": "cookie-uid"}}  # as the split sets it
    data.apply(appnexus, "appnexus")
    assert appnexus["user"] == {"id": "u", "keywords": "k", "buyeruid": "cookie-uid", "eids": eids[:1]}
    rubicon = dict(request)
    data.apply(rubicon, "rubicon")
    assert rubicon["user"] == {"id": "u", "eids": [{"source": "fpd.example"}]}  # its config's EIDs win
    assert request["user"]["eids"] == eids


# --- MergeClone (PBS-Go resolveUser/Site/App/Device) ---------------------------------------------

MERGE_ROWS = [
    pytest.param({"id": "test2"}, {"id": "test1"}, {"id": "test1"}, id="field-replaced"),
    pytest.param({"id": "1", "page": "p"}, {"page": None}, {"id": "1"}, id="null-removes-field"),
    pytest.param(
        {"id": "a", "publisher": {"id": "1", "name": "n"}},
        {"publisher": {"id": "2"}},
        {"id": "a", "publisher": {"id": "2", "name": "n"}},
        id="object-merged-field-by-field",
    ),
    pytest.param({"cat": ["a", "b"]}, {"cat": ["c"]}, {"cat": ["c"]}, id="array-replaced-whole"),
    pytest.param(
        {"ext": {"test": 2, "key": "value"}},
        {"id": "test1", "ext": {"test": 1}},
        {"ext": {"key": "value", "test": 1}, "id": "test1"},
        id="ext-merge-patched",
    ),
    pytest.param({"ext": {"a": 1, "b": 2}}, {"ext": {"a": None}}, {"ext": {"b": 2}}, id="null-in-ext-removes-key"),
    pytest.param({"ext": {"a": 1}}, {"ext": None}, {"ext": {"a": 1}}, id="null-ext-keeps-ext"),
    pytest.param({"id": "x"}, {"ext": {"a": None}}, {"id": "x", "ext": {"a": None}}, id="new-ext-taken-as-is"),
    pytest.param(
        {"content": {"id": "c", "ext": {"contentPresent": True}}},
        {"content": {"ext": {"more": 1}}},
        {"content": {"id": "c", "ext": {"contentPresent": True, "more": 1}}},
        id="nested-ext-merge-patched",
    ),
    pytest.param({}, {"geo": {"lat": 1, "ext": None}}, {"geo": {"lat": 1}}, id="new-object-built-from-patch"),
]


@pytest.mark.parametrize(("target", "patch", "expected"), MERGE_ROWS)
def test_bidderconfig_merges_like_pbs_go_merge_clone(target, patch, expected):
    before = copy.deepcopy((target, patch))
    assert merge_clone(target, patch) == expected
    assert (target, patch) == before


# --- supply chains ---------------------------------------------------------------------------

SELLER1 = {
    "complete": 1,
    "nodes": [{"asi": "directseller1.com", "sid": "00001", "rid": "BidRequest1", "hp": 1}],
    "ver": "1.0",
}
SELLER2 = {"complete": 2, "nodes": [{"asi": "directseller2.com", "sid": "00002", "hp": 2}], "ver": "2.0"}
WILDCARD = {"complete": 1, "nodes": [{"asi": "wildcard1.com", "sid": "wildcard1", "hp": 1}], "ver": "1.0"}

# (request, host node, bidder, expected source for it; None = no source)
SCHAIN_ROWS = [
    pytest.param({}, NO_HOST, "appnexus", None, id="nil-source-no-schains-no-host"),
    pytest.param(
        {"source": {"schain": {"ver": "1.1"}}, **prebid(schains=[{"bidders": ["appnexus"], "schain": SELLER1}])},
        NO_HOST,
        "rubicon",
        {"schain": {"ver": "1.1"}},
        id="source-schain-kept-for-bidder-without-entry",
    ),
    pytest.param(
        {
            "source": {"fd": 1, "tid": "tid data", "ext": {"some": "data"}},
            **prebid(schains=[{"bidders": ["appnexus"], "schain": SELLER1}]),
        },
        NO_HOST,
        "appnexus",
        {"fd": 1, "tid": "tid data", "ext": {"some": "data"}, "schain": SELLER1},
        id="bidder-schain-other-source-fields-retained",
    ),
    pytest.param(
        prebid(schains=[{"bidders": ["appnexus"], "schain": SELLER1}]),
        NO_HOST,
        "appnexus",
        {"schain": SELLER1},
        id="bidder-schain-nil-source",
    ),
    pytest.param(
        {"source": {}, **prebid(schains=[{"bidders": ["*"], "schain": WILDCARD}])},
        NO_HOST,
        "appnexus",
        {"schain": WILDCARD},
        id="wildcard-schain",
    ),
    pytest.param(
        prebid(schains=[{"bidders": ["appnexus"], "schain": SELLER1}, {"bidders": ["*"], "schain": WILDCARD}]),
        NO_HOST,
        "appnexus",
        {"schain": SELLER1},
        id="bidder-schain-over-wildcard",
    ),
    pytest.param(
        prebid(schains=[{"bidders": ["appnexus"], "schain": SELLER1}]),
        NO_HOST,
        "AppNexus",
        None,
        id="bidder-match-is-exact",
    ),
    pytest.param(
        prebid(schains=[{"bidders": ["testbidder"], "schain": SELLER1}]),
        HOST,
        "testbidder",
        {"schain": {**SELLER1, "nodes": [*SELLER1["nodes"], HOST_NODE]}},
        id="host-node-appended-to-bidder-schain",
    ),
    pytest.param(
        {},
        HOST,
        "testbidder",
        {"schain": {"complete": 0, "nodes": [HOST_NODE], "ver": "1.0"}},
        id="host-node-alone-makes-a-chain",
    ),
    pytest.param(
        {"source": {"tid": "t", "schain": SELLER2}},
        HOST,
        "testbidder",
        {"tid": "t", "schain": {**SELLER2, "nodes": [*SELLER2["nodes"], HOST_NODE]}},
        id="host-node-appended-to-request-schain",  # PBS-Java; PBS-Go would drop the request's chain
    ),
]


@pytest.mark.parametrize(("request_fields", "host", "bidder", "expected"), SCHAIN_ROWS)
def test_each_bidder_gets_its_supply_chain(request_fields, host, bidder, expected):
    request = {"id": "req", **copy.deepcopy(request_fields)}
    own = run(request, (bidder,), host)[bidder]
    assert own.get("source") == expected


def test_host_node_names_only_what_is_set():
    node = SChainNode(asi="host.example", sid="s1", name="Host", hp=0)
    own = run({"id": "r"}, ("appnexus",), node)["appnexus"]
    assert own["source"]["schain"]["nodes"] == [{"asi": "host.example", "sid": "s1", "name": "Host", "hp": 0}]


# --- EID permissions (PBS-Go removeUnpermissionedEids; bidder "bidderA") --------------------------

EID1 = {"source": "source1", "uids": [{"id": "anyID"}]}
EID2 = {"source": "source2", "uids": [{"id": "anyID"}]}
EID3 = {"source": "source3", "uids": [{"id": "anyID"}]}

EID_ROWS = [
    pytest.param([], [{"source": "source1", "bidders": ["bidderA"]}], [], id="eids-empty"),
    pytest.param([EID1], [{"source": "source1", "bidders": ["bidderA"]}], [EID1], id="allowed-by-specific-bidder"),
    pytest.param([EID1], [{"source": "source1", "bidders": ["BIDDERA"]}], [EID1], id="allowed-case-insensitive"),
    pytest.param([EID1], [{"source": "source1", "bidders": ["*"]}], [EID1], id="allowed-by-all-bidders"),
    pytest.param(
        [EID1], [{"source": "source2", "bidders": ["otherBidder"]}], [EID1], id="allowed-by-lack-of-matching-source"
    ),
    pytest.param([EID1], [{"source": "source1", "bidders": ["otherBidder"]}], None, id="denied"),
    pytest.param(
        [EID1, EID2, EID3],
        [{"source": "source1", "bidders": ["bidderA"]}, {"source": "source3", "bidders": ["otherBidder"]}],
        [EID1, EID2],
        id="mix-allowed-by-bidder-allowed-by-no-rule-denied",
    ),
]


@pytest.mark.parametrize(("eids", "permissions", "expected"), EID_ROWS)
def test_eids_reach_only_permitted_bidders(eids, permissions, expected):
    request = {"id": "req", "user": {"id": "u", "eids": eids}, **prebid(data={"eidpermissions": permissions})}
    out = run(request, ("bidderA", "otherBidder"))
    assert out["bidderA"]["user"].get("eids") == expected
    assert out["bidderA"]["user"]["id"] == "u"


# --- validation (PBS-Go's 400 texts) --------------------------------------------------------------

NO_APP = "incorrect First Party Data for bidder {}: App object is not defined in request, but defined in FPD config"

VALIDATION_ROWS = [
    pytest.param({}, None, id="valid-empty-ext"),
    pytest.param(prebid(data={}), None, id="valid-empty-data"),
    pytest.param(prebid(data={"eidpermissions": None}), None, id="valid-nil-eidpermissions"),
    pytest.param(prebid(data={"eidpermissions": []}), None, id="valid-none"),
    pytest.param(
        prebid(data={"eidpermissions": [{"source": "sourceA", "bidders": ["appnexus"]}]}), None, id="valid-one"
    ),
    pytest.param(
        prebid(data={"eidpermissions": [{"source": "sourceA", "bidders": ["APPNEXUS"]}]}),
        None,
        id="valid-one-case-insensitive",
    ),
    pytest.param(
        prebid(data={"eidpermissions": [{"source": "sourceA", "bidders": ["requestAlias"]}]}), None, id="valid-alias"
    ),
    pytest.param(
        prebid(data={"eidpermissions": [{"source": "sourceA", "bidders": ["appnexus"]}, {"bidders": ["appnexus"]}]}),
        'request.ext.prebid.data.eidpermissions[1] missing required field: "source"',
        id="invalid-missing-source",
    ),
    pytest.param(
        prebid(
            data={
                "eidpermissions": [
                    {"source": "sourceA", "bidders": ["appnexus"]},
                    {"source": "sourceA", "bidders": ["appnexus"]},
                ]
            }
        ),
        'request.ext.prebid.data.eidpermissions[1] duplicate entry with field: "source"',
        id="invalid-duplicate-source",
    ),
    pytest.param(
        prebid(data={"eidpermissions": [{"source": "sourceB"}]}),
        'request.ext.prebid.data.eidpermissions[0] missing or empty required field: "bidders"',
        id="invalid-missing-bidders-nil",
    ),
    pytest.param(
        prebid(data={"eidpermissions": [{"source": "a", "bidders": []}]}),
        'request.ext.prebid.data.eidpermissions[0] missing or empty required field: "bidders"',
        id="invalid-missing-bidders-empty",
    ),
    pytest.param(
        prebid(data={"eidpermissions": [{"source": "sourceB", "bidders": ["z"]}]}),
        'request.ext.prebid.data.eidpermissions[0] contains unrecognized bidder "z"',
        id="invalid-unknown-bidder",
    ),
    pytest.param(
        prebid(data={"eidpermissions": [{"source": "sourceA", "bidders": ["REQUESTALIAS"]}]}),
        'request.ext.prebid.data.eidpermissions[0] contains unrecognized bidder "REQUESTALIAS"',
        id="invalid-alias-case-sensitive",
    ),
    pytest.param(
        prebid(data={"eidpermissions": [{"source": "sourceA", "bidders": ["*", "appnexus"]}]}),
        'request.ext.prebid.data.eidpermissions[0] contains bidder wildcard "*" mixed with specific bidders',
        id="invalid-wildcard-mixed",
    ),
    pytest.param(
        prebid(data={"eidpermissions": [{"source": "sourceA", "bidders": ["z", "*"]}]}),
        'request.ext.prebid.data.eidpermissions[0] contains unrecognized bidder "z"',
        id="returns-first-error",
    ),
    pytest.param(
        prebid(schains=[{"bidders": ["Bidder1"], "schain": {}}, {"bidders": ["Bidder1", "Bidder2"], "schain": {}}]),
        "request.ext.prebid.schains contains multiple schains for bidder Bidder1; "
        "it must contain no more than one per bidder.",
        id="schains-duplicate-bidder",
    ),
    pytest.param(
        prebid(
            schains=[{"bidders": ["Bidder1", "Bidder2"], "schain": SELLER1}, {"bidders": ["bidder1"], "schain": {}}]
        ),
        None,
        id="schains-distinct-bidders",
    ),
    pytest.param(
        prebid(
            bidderconfig=[{"bidders": ["appnexus"], "config": {}}, {"bidders": ["appnexus", "telaria"], "config": {}}]
        ),
        "multiple First Party Data bidder configs provided for bidder: appnexus",
        id="bidder-config-duplicated",
    ),
    pytest.param(
        prebid(bidderconfig=[{"bidders": ["appnexus"]}, {"bidders": ["APPNEXUS", "telaria"]}]),
        "multiple First Party Data bidder configs provided for bidder: APPNEXUS",
        id="bidder-config-duplicated-case-insensitive",
    ),
    pytest.param(
        prebid(bidderconfig=[{"bidders": ["requestAlias"]}, {"bidders": ["REQUESTALIAS"]}]),
        None,
        id="bidder-config-request-alias-case-sensitive",
    ),
    pytest.param(
        prebid(
            data={"bidders": ["appnexus", "telaria"]},
            bidderconfig=[
                {"bidders": ["appnexus"], "config": {"ortb2": {"site": {"id": "apnSiteId"}}}},
                {"bidders": ["telaria"], "config": {"ortb2": {"app": {"id": "telariaAppId"}}}},
            ],
        ),
        NO_APP.format("telaria"),
        id="two-bidders-one-with-incorrect-fpd",
    ),
    pytest.param(
        prebid(
            data={"bidders": ["appnexus", "telaria"]},
            bidderconfig=[
                {
                    "bidders": ["appnexus"],
                    "config": {"ortb2": {"app": {"id": "apnAppId"}, "user": {"id": "apnUserId"}}},
                },
                {"bidders": ["telaria"], "config": {"ortb2": {"app": {"id": "telariaAppId"}}}},
            ],
        ),
        NO_APP.format("appnexus") + "," + NO_APP.format("telaria"),
        id="two-bidders-with-incorrect-fpd",
    ),
    pytest.param(
        prebid(
            bidderconfig=[{"bidders": ["telaria"], "config": {"ortb2": {"app": {"id": "x"}}}}], data={"bidders": []}
        ),
        None,
        id="unlisted-bidder-config-never-resolved",
    ),
    pytest.param(
        {
            "site": None,
            **prebid(bidderconfig=[{"bidders": ["APPNEXUS"], "config": {"ortb2": {"site": {"page": "x"}}}}]),
        },
        "incorrect First Party Data for bidder appnexus: "
        "Site object is not defined in request, but defined in FPD config",
        id="req-site-not-defined",
    ),
    pytest.param(
        {
            "site": {"page": "http://a.example/"},
            **prebid(bidderconfig=[{"bidders": ["appnexus"], "config": {"ortb2": {"site": {"page": ""}}}}]),
        },
        "incorrect First Party Data for bidder appnexus: Site object cannot set empty page if req.site.id is empty",
        id="site-page-empty-conflict",
    ),
    pytest.param(
        {
            "site": {"id": "1"},
            **prebid(bidderconfig=[{"bidders": ["appnexus"], "config": {"ortb2": {"site": {"id": None}}}}]),
        },
        "incorrect First Party Data for bidder appnexus: Site object cannot set empty page if req.site.id is empty",
        id="site-id-removed",
    ),
    pytest.param(
        {
            "site": {"id": "1"},
            **prebid(bidderconfig=[{"bidders": ["appnexus"], "config": {"ortb2": {"site": {"id": "2"}}}}]),
        },
        None,
        id="site-valid-id",
    ),
    pytest.param(
        prebid(bidderconfig=[{"bidders": ["appnexus"], "config": {"ortb2": {"device": {"w": -10}}}}]),
        "request.device.w must be a positive number",
        id="device-negative-width",
    ),
    pytest.param(
        prebid(bidderconfig=[{"bidders": ["appnexus"], "config": {"ortb2": {"device": {"ppi": -300}}}}]),
        "request.device.ppi must be a positive number",
        id="device-negative-ppi",
    ),
    pytest.param(
        {
            "device": {"geo": {"accuracy": 10}},
            **prebid(
                bidderconfig=[{"bidders": ["appnexus"], "config": {"ortb2": {"device": {"geo": {"accuracy": -5}}}}}]
            ),
        },
        "request.device.geo.accuracy must be a positive number",
        id="device-negative-geo-accuracy",
    ),
    pytest.param(
        {
            "device": {"ua": "a", "geo": {"accuracy": 10}},
            **prebid(bidderconfig=[{"bidders": ["appnexus"], "config": {"ortb2": {"device": {"w": 100, "h": 200}}}}]),
        },
        None,
        id="device-valid-merge",
    ),
    # shapes: a clear 400 instead of a failure later
    pytest.param(prebid(schains={}), "request.ext.prebid.schains must be an array", id="schains-not-array"),
    pytest.param(
        prebid(schains=[{"bidders": "a"}]),
        "request.ext.prebid.schains[0].bidders must be an array of strings",
        id="schains-bidders-not-array",
    ),
    pytest.param(
        prebid(schains=[{"bidders": ["a"], "schain": []}]),
        "request.ext.prebid.schains[0].schain must be an object",
        id="schain-not-object",
    ),
    pytest.param(
        prebid(schains=[{"bidders": ["a"], "schain": {"nodes": [1]}}]),
        "request.ext.prebid.schains[0].schain.nodes must be an array of objects",
        id="schain-nodes-not-objects",
    ),
    pytest.param(prebid(data=[]), "request.ext.prebid.data must be an object", id="data-not-object"),
    pytest.param(
        prebid(data={"bidders": "appnexus"}),
        "request.ext.prebid.data.bidders must be an array of strings",
        id="data-bidders-not-array",
    ),
    pytest.param(
        prebid(data={"eidpermissions": {}}),
        "request.ext.prebid.data.eidpermissions must be an array",
        id="eidpermissions-not-array",
    ),
    pytest.param(
        prebid(data={"eidpermissions": [{"source": 5, "bidders": ["*"]}]}),
        "request.ext.prebid.data.eidpermissions[0].source must be a string",
        id="eid-source-not-string",
    ),
    pytest.param(
        prebid(bidderconfig={}), "request.ext.prebid.bidderconfig must be an array", id="bidderconfig-not-array"
    ),
    pytest.param(
        prebid(bidderconfig=[{"bidders": [1]}]),
        "request.ext.prebid.bidderconfig[0].bidders must be an array of strings",
        id="bidderconfig-bidders-not-strings",
    ),
    pytest.param(
        prebid(bidderconfig=[{"bidders": ["a"], "config": "x"}]),
        "request.ext.prebid.bidderconfig[0].config must be an object",
        id="bidderconfig-config-not-object",
    ),
    pytest.param(
        prebid(bidderconfig=[{"bidders": ["a"], "config": {"ortb2": {"user": 3}}}]),
        "request.ext.prebid.bidderconfig[0].config.ortb2.user must be an object",
        id="ortb2-user-not-object",
    ),
]


@pytest.mark.parametrize(("request_fields", "message"), VALIDATION_ROWS)
def test_malformed_bidder_data_gets_pbs_go_400_text(request_fields, message):
    request = {"id": "req", "site": {"page": "http://a.example/"}, **request_fields}
    problems = validate_bidder_data(request, REGISTRY, ALIASES)
    assert (problems[0] if problems else None) == message


# --- end to end -----------------------------------------------------------------------------


async def test_auction_sends_each_bidder_its_own_fpd_eids_and_schain(make_client, bidders):
    bidders.bids["alpha"] = [bid("imp-1", 1.0, "a1")]
    bidders.bids["beta"] = [bid("imp-1", 0.5, "b1")]
    config = bidder_config(bidders, "alpha", "beta", beta={"openrtb_version": "2.6"})  # alpha speaks 2.5
    config["host_schain_node"] = {"asi": "host.example", "sid": "h-1", "hp": 1}
    client = await make_client(config)
    host_node = {"asi": "host.example", "sid": "h-1", "hp": 1}
    alpha_chain = {"complete": 1, "nodes": [{"asi": "seller-a.example", "sid": "a", "hp": 1}], "ver": "1.0"}
    any_chain = {"complete": 1, "nodes": [{"asi": "seller.example", "sid": "any", "hp": 1}], "ver": "1.0"}
    shared_eid = {"source": "shared.example", "uids": [{"id": "s"}]}
    alpha_eid = {"source": "alpha-only.example", "uids": [{"id": "a"}]}
    body = {
        "id": "req-1",
        "tmax": 500,
        "imp": [banner_imp("imp-1", alpha={"p": 1}, beta={"p": 2})],
        "site": {
            "page": "https://news.example/a",
            "publisher": {"id": "1001"},
            "content": {"title": "t", "data": [{"id": "segtax"}]},
            "ext": {"data": {"section": "news"}},
        },
        "user": {"id": "u1", "data": [{"id": "userseg"}], "eids": [shared_eid, alpha_eid], "ext": {"data": {"k": "v"}}},
        "ext": {
            "prebid": {
                "data": {
                    "bidders": ["alpha"],
                    "eidpermissions": [{"source": "alpha-only.example", "bidders": ["alpha"]}],
                },
                "bidderconfig": [
                    {"bidders": ["alpha"], "config": {"ortb2": {"site": {"keywords": "alpha-kw"}}}},
                    {"bidders": ["beta"], "config": {"ortb2": {"site": {"keywords": "beta-kw"}}}},
                ],
                "schains": [{"bidders": ["alpha"], "schain": alpha_chain}, {"bidders": ["*"], "schain": any_chain}],
            }
        },
    }
    response = await client.post("/openrtb2/auction", data=json.dumps(body))
    assert response.status == 200, await response.text()
    alpha = bidders.received["alpha"][0]
    beta = bidders.received["beta"][0]
    # alpha (2.5): listed, so the global FPD and its bidderconfig; every EID; its schain + host node, 2.5 place
    assert alpha["site"]["ext"] == {"data": {"section": "news"}} and alpha["site"]["keywords"] == "alpha-kw"
    assert alpha["site"]["content"] == {"title": "t", "data": [{"id": "segtax"}]}
    assert alpha["user"]["data"] == [{"id": "userseg"}]
    assert alpha["user"]["ext"] == {"data": {"k": "v"}, "eids": [shared_eid, alpha_eid]}
    alpha_schain = {**alpha_chain, "nodes": [*alpha_chain["nodes"], host_node]}
    assert alpha["source"] == {"tid": ANY, "ext": {"schain": alpha_schain}}
    # beta (2.6): not listed, so no global FPD and not even its own bidderconfig (PBS-Go); the shared
    # EID only; the "*" schain + host node, 2.6 place
    assert beta["site"] == {
        "page": "https://news.example/a",
        "domain": "news.example",
        "publisher": {"id": "1001"},
        "content": {"title": "t"},
    }
    assert beta["user"] == {"id": "u1", "eids": [shared_eid]}
    assert beta["source"] == {"tid": ANY, "schain": {**any_chain, "nodes": [*any_chain["nodes"], host_node]}}
    sent_prebid = beta.get("ext", {}).get("prebid", {})
    assert "data" not in sent_prebid and "bidderconfig" not in sent_prebid and "schains" not in sent_prebid


async def test_auction_refuses_conflicting_bidderconfig_with_400(make_client, bidders):
    client = await make_client(bidder_config(bidders, "alpha"))
    body = {
        "id": "req-1",
        "imp": [banner_imp("imp-1", alpha={"p": 1})],
        "site": {"page": "https://news.example/a"},
        "ext": {"prebid": {"bidderconfig": [{"bidders": ["alpha"], "config": {"ortb2": {"app": {"id": "x"}}}}]}},
    }
    response = await client.post("/openrtb2/auction", data=json.dumps(body))
    assert response.status == 400
    assert await response.text() == (
        "Invalid request: incorrect First Party Data for bidder alpha: "
        "App object is not defined in request, but defined in FPD config\n"
    )
    assert "alpha" not in bidders.received
