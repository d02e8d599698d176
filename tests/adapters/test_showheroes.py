"""ShowHeroes' own rules: the request's site or app, the imp ext it rewrites, floors in EUR, the
display manager from the Prebid channel and source.ext.pbs."""

from __future__ import annotations

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo, ResponseData
from hbserver.adapters.showheroes import build, request_problem, showheroes_ext, with_pbs_source

ADAPTER = build(AdapterConfig("showheroes", "https://s.example/bid", {"pbs_version": ""}))


@pytest.mark.parametrize(
    ("request_", "problem"),
    [
        ({"site": {"page": "p"}}, None),
        ({"app": {"bundle": "b"}}, None),
        ({"site": {}}, "site request doesn't have a page URL"),
        ({"app": {"bundle": ""}}, "app request doesn't have a bundle ID"),
        ({}, "request must contain a site or an app"),
    ],
)
def test_request_problem(request_, problem):
    assert request_problem(request_) == problem


@pytest.mark.parametrize(
    ("ext", "out"),
    [
        ({"bidder": {"unitId": "u"}, "gpid": "g", "other": 1},
         {"bidder": {"unitId": "u"}, "gpid": "g", "params": {"unitId": "u"}}),
        ({"bidder": {}, "tid": ""}, {"bidder": {"unitId": ""}, "params": {"unitId": ""}}),
        ({"bidder": {"unitId": 5}}, None),
        ({"bidder": {}, "prebid": 3}, None),
    ],
)  # fmt: skip
def test_showheroes_ext(ext, out):
    if out is None:
        with pytest.raises(ValueError):
            showheroes_ext({"ext": ext})
    else:
        assert showheroes_ext({"ext": ext}) == out


def test_source_ext_names_the_server():
    assert with_pbs_source({}, "")["source"] == {"ext": {"pbs": {"pbsv": "unknown", "pbsp": "go"}}}
    assert with_pbs_source({"source": {"ext": {"a": 1}}}, "1.0")["source"]["ext"]["pbs"]["pbsv"] == "1.0"


def test_one_call_floors_in_eur_and_display_manager_from_the_channel():
    imps = [
        {"id": "a", "banner": {}, "bidfloor": 1.0, "ext": {"bidder": {"unitId": "u"}}},
        {"id": "b", "banner": {}, "ext": {"bidder": {"unitId": 1}}},
    ]
    request = {"site": {"page": "p"}, "imp": imps, "ext": {"prebid": {"channel": {"name": "pbjs", "version": "9"}}}}
    info = RequestInfo("showheroes", convert_currency=_to_eur)
    calls, errors = ADAPTER.make_requests(request, info)
    assert [e.message for e in errors] == ["Error parsing bidder params"]
    imp = orjson.loads(calls[0].body)["imp"][0]
    assert (imp["bidfloor"], imp["bidfloorcur"], imp["displaymanager"], imp["displaymanagerver"]) == (
        0.5, "EUR", "pbjs", "9"
    )  # fmt: skip


def _to_eur(amount, source, target):
    assert (source, target) == ("USD", "EUR")
    return amount / 2


def test_bids_banner_for_mtype_1_else_video():
    body = orjson.dumps({"cur": "EUR", "seatbid": [{"bid": [{"id": "1", "mtype": 1}, {"id": "2", "mtype": 5}]}]})
    result, errors = ADAPTER.make_bids({}, None, ResponseData(200, body))
    assert not errors and result.currency == "EUR" and [b.bid_type for b in result.bids] == ["banner", "video"]
    assert ADAPTER.make_bids({}, None, ResponseData(500, b""))[1][0].message == "unexpected status code: 500"
