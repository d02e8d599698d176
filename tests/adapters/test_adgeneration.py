"""Ad Generation adapter: one GET per imp with its query (PBS-Go's TestGetRequestUri, TestGetSizes,
TestGetCurrency), the markup (TestCreateAd) and the answer read into one banner bid (TestMakeBids)."""

from __future__ import annotations

import re

import pytest

from hbserver.adapters import adgeneration
from hbserver.adapters.adgeneration import build, create_ad, currency, sizes
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "https://d.socdm.com/adsv/v1"
IMP = {"id": "imp", "banner": {"format": [{"w": 300, "h": 250}]}, "ext": {"bidder": {"id": "58278"}}}
REQUEST = {
    "id": "r",
    "imp": [IMP],
    "source": {"tid": "SourceTID"},
    "device": {"ua": "testUA", "ip": "testIP"},
    "site": {"page": "https://supership.com"},
}


def calls_of(request):
    return requests_of(build(AdapterConfig("adgeneration", ENDPOINT)), request, RequestInfo(bidder="adgeneration"))


def test_one_get_per_imp():
    calls, _, errors = calls_of(REQUEST)
    assert errors == []
    assert [(c.method, c.body, c.imp_ids) for c in calls] == [("GET", None, ["imp"])]
    assert calls[0].uri == (
        ENDPOINT + "?adapterver=1.0.3&currency=JPY&hb=true&id=58278&posall=SSPLOC&sdkname=prebidserver&sdktype=0"
        "&sizes=300x250&t=json3&tp=https%3A%2F%2Fsupership.com&transactionid=SourceTID"
    )
    assert dict(calls[0].headers) == {
        "Content-Type": "application/json;charset=utf-8",
        "Accept": "application/json",
        "User-Agent": "testUA",
        "X-Forwarded-For": "testIP",
    }


@pytest.mark.parametrize(
    ("device", "app", "want"),
    [
        ({"os": "android", "ifa": "a"}, {"bundle": "b", "name": "n"}, "advertising_id=a&appbundle=b&appname=n"),
        ({"os": "ios", "ifa": "i"}, {}, "idfa=i"),
        ({"os": "ios"}, {}, "sdktype=2"),
        ({"os": "tizen", "ifa": "t"}, {}, "sdktype=0"),
    ],
)
def test_device_and_app_facts(device, app, want):
    calls, _, _ = calls_of({"imp": [IMP], "device": device, "app": app})
    assert want in calls[0].uri


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"bidder": {"_id": "58278"}}, "No Location ID in ExtImpAdgeneration."),
        ({"bidder": {"id": 1}}, "cannot unmarshal openrtb_ext.ExtImpAdgeneration.Id"),
        ({"_bidder": {"id": "58278"}}, "expect { or n"),
        ("x", "expect { or n"),
    ],
)
def test_a_bad_imp_stops_the_request(ext, want):
    calls, _, errors = calls_of({"imp": [IMP, {**IMP, "id": "bad", "ext": ext}]})
    assert calls == []
    assert [e.code for e in errors] == [ErrorCode.BAD_INPUT]
    assert errors[0].message.startswith(want)


def test_no_imps():
    assert calls_of({"imp": []})[2][0].message == "No impression in the bid request"


def test_sizes_and_currency():
    assert sizes({"banner": {"format": [{"w": 300, "h": 250}, {"w": 320, "h": 50}]}}) == "300x250,320x50"
    assert sizes({"banner": {"format": []}}) == sizes({"native": {}}) == ""
    assert currency({"cur": ["USD", "JPY"]}) == currency({}) == "JPY"
    assert currency({"cur": ["USD", "EUR"]}) == "USD"


AD = '<!DOCTYPE html>\n<head>\n<body>\n<div id="c">\n</div>\n</body>\n'
BEACON = '<img src="https://dummy-beacon.com">'


@pytest.mark.parametrize(
    ("answer", "want"),
    [
        ({"ad": AD, "beacon": BEACON, "vastxml": ""}, '<div id="c">\n</div>\n' + BEACON),
        (
            {"ad": AD, "beacon": BEACON, "vastxml": '<?xml version="1.0"><VAST version="3.0"</VAST>'},
            '<div id="apvad-v"></div><script type="text/javascript" id="apv" '
            'src="https://cdn.apvdr.com/js/VideoAd.min.js"></script><script type="text/javascript"> '
            '(function(){ new APV.VideoAd({s:"v"}).load(\'<?xml version="1.0"><VAST version="3.0"</VAST>\'); })(); '
            "</script>" + BEACON,
        ),
        ({"ad": "no body", "beacon": BEACON, "vastxml": ""}, "no body"),  # no wrapper: as it is
        ({"ad": "<body> </body>", "beacon": "", "vastxml": ""}, "<body> </body>"),  # empty inside
        ({"ad": "<body>x</ body>", "beacon": "$0|$$|$x|${y}|$", "vastxml": ""}, "x</ body>|$|||$"),  # Go's Expand
        ({"ad": "", "beacon": "", "vastxml": "a/\r\n/gb"}, re.compile(r".*\.load\('ab'\).*")),
    ],
)
def test_create_ad(answer, want):
    ad = create_ad(answer, "v")
    assert want.fullmatch(ad) if isinstance(want, re.Pattern) else ad == want


BODY = {"ad": "testAd", "cpm": 30, "creativeid": "c", "h": 250, "locationid": "58278", "results": [{}], "w": 300}


@pytest.mark.parametrize(
    ("cur", "body", "want"),
    [
        (
            None,
            BODY,
            ("JPY", {"id": "58278", "impid": "imp", "price": 30, "adm": "testAd", "w": 300, "h": 250, "crid": "c"}),
        ),
        (["USD"], {**BODY, "dealid": "d"}, ("USD", {"dealid": "d"})),
        (None, {**BODY, "results": []}, None),
        (None, {**BODY, "locationid": "other"}, None),
    ],
)
def test_make_bids(cur, body, want):
    request = {"imp": [IMP], **({"cur": cur} if cur else {})}
    response, errors = bids_for(build(AdapterConfig("adgeneration", ENDPOINT)), request, body)
    assert errors == []
    if want is None:
        assert response is None
        return
    assert response.currency == want[0]
    assert [b.bid_type for b in response.bids] == ["banner"]
    assert want[1].items() <= response.bids[0].bid.items()


@pytest.mark.parametrize(
    ("status", "body", "want"),
    [
        (204, b"", []),
        (400, b"", [(ErrorCode.BAD_INPUT, "Unexpected status code: 400. Run with request.debug = 1 for more info")]),
        (
            500,
            b"",
            [(ErrorCode.BAD_SERVER_RESPONSE, "Unexpected status code: 500. Run with request.debug = 1 for more info")],
        ),
        (200, b"[]", [(ErrorCode.UNKNOWN, "expect { or n, but found [")]),
        (
            200,
            b'{"w": -1}',
            [(ErrorCode.UNKNOWN, "cannot unmarshal adgeneration.adgServerResponse.W: not a uint64: -")],
        ),
        (
            200,
            b'{"results": {}}',
            [
                (
                    ErrorCode.UNKNOWN,
                    "cannot unmarshal adgeneration.adgServerResponse.Results: decode slice: expect [ or n, but found {",
                )
            ],
        ),
    ],
)
def test_failed_answers(status, body, want):
    response, errors = bids_for(build(AdapterConfig("adgeneration", ENDPOINT)), {"imp": [IMP]}, body, status)
    assert response is None
    assert [(e.code, e.message) for e in errors] == want


def test_an_imp_without_location_fails_the_answer():
    request = {"imp": [{**IMP, "ext": {"bidder": {}}}]}
    response, errors = bids_for(build(AdapterConfig("adgeneration", ENDPOINT)), request, BODY)
    assert response is None
    assert [(e.code, e.message) for e in errors] == [(ErrorCode.BAD_SERVER_RESPONSE, adgeneration.NO_LOCATION)]
