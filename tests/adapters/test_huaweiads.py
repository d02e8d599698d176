"""HuaweiAds adapter: the builder's extra info (package-name rules, site selection), the site chosen by
country, client times and nonces from the adapter's clock, durations and unescaping in the markup, and
the status and retcode wording of an answer."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestData, RequestInfo, ResponseData
from hbserver.adapters.huaweiads import (
    ASIAN_SITE,
    CHINESE_SITE,
    EUROPEAN_SITE,
    RUSSIAN_SITE,
    build,
    country_code,
    go_unescape,
    read_extra_info,
    site_endpoint,
    vast_duration,
)

ENDPOINT = "https://huaweiads.com/adxtest/"
RULES = orjson.dumps(
    {
        "pkgNameConvert": [
            {
                "convertedPkgName": "com.example.pkgname1",
                "unconvertedPkgNames": ["com.example.p1"],
                "unconvertedPkgNameKeyWords": ["p3"],
                "unconvertedPkgNamePrefixs": ["com.example1"],
                "exceptionPkgNames": ["com.example1.kept"],
            },
            {"convertedPkgName": "com.example.pkgname2", "unconvertedPkgNames": ["*"]},
        ]
    }
).decode()


def _rule(**fields: object) -> str:
    return orjson.dumps({"pkgNameConvert": [{"convertedPkgName": "c", **fields}]}).decode()


@pytest.mark.parametrize(
    ("extra", "error"),
    [
        (_rule(convertedPkgName=""), "invalid extra info: ConvertedPkgName is empty, pls check"),
        (
            _rule(unconvertedPkgNameKeyWords=["", "p4"]),
            "invalid extra info: UnconvertedPkgNameKeyWords has a empty keyword, pls check",
        ),
        (
            _rule(unconvertedPkgNamePrefixs=["p5", ""]),
            "invalid extra info: UnconvertedPkgNamePrefixs has a empty value, pls check",
        ),
        ("{", "invalid extra info: "),
        ('{"pkgNameConvert": {}}', "invalid extra info: cannot unmarshal"),
    ],
)
def test_extra_info_refused(extra, error):
    with pytest.raises(ValueError, match="^" + error.replace("(", r"\(")):
        build(AdapterConfig("huaweiads", ENDPOINT, {"extra_info": extra}))


@pytest.mark.parametrize(
    ("bundle", "want"),
    [
        ("com.example.p1", "com.example.pkgname1"),  # a named bundle
        ("com.other.p3", "com.example.pkgname1"),  # a keyword past the start
        ("p3.other", "com.example.pkgname2"),  # a keyword at the start does not count
        ("com.example1.app", "com.example.pkgname1"),  # a prefix
        ("com.example1.kept", "com.example1.kept"),  # an exception stops every rule
        ("anything", "com.example.pkgname2"),  # "*" names every bundle
    ],
)
def test_package_name_rules(bundle, want):
    assert read_extra_info(RULES).package_name(bundle) == want


def test_no_extra_info_keeps_the_bundle_and_selects_the_site():
    extra = read_extra_info("")
    assert extra.package_name("com.example.p1") == "com.example.p1"
    assert site_endpoint("CN", ENDPOINT, extra) == CHINESE_SITE


@pytest.mark.parametrize(
    ("request_", "want"),
    [
        ({"device": {"geo": {"country": "CHN"}}}, "CN"),
        ({"device": {"geo": {"country": "RUS"}}}, "RU"),  # not in the alpha-3 table: its first two letters
        ({"user": {"geo": {"country": "DEU"}}}, "DE"),
        ({"device": {"mccmnc": "250-01"}}, "RU"),
        ({"device": {"mccmnc": "999-01"}}, "ZA"),
        ({"device": {"mccmnc": "x1-01"}}, "ZA"),
        ({}, "ZA"),
    ],
)
def test_country_code(request_, want):
    assert country_code(request_) == want


@pytest.mark.parametrize(
    ("country", "close", "want"),
    [
        ("CN", "", CHINESE_SITE),
        ("RU", "", RUSSIAN_SITE),
        ("DE", "", EUROPEAN_SITE),
        ("US", "", EUROPEAN_SITE),
        ("ZA", "", ASIAN_SITE),
        ("CN", "1", ENDPOINT),
        ("", "", ENDPOINT),
    ],
)
def test_site_endpoint(country, close, want):
    extra = read_extra_info(orjson.dumps({"closeSiteSelectionByCountry": close}).decode())
    assert site_endpoint(country, ENDPOINT, extra) == want


NOW = datetime(2021, 8, 20, 19, 30, 0, 823_000, tzinfo=timezone(timedelta(hours=8)))


@pytest.mark.parametrize(
    ("given", "want"),
    [
        ("2018-11-02 16:34:07.981+1300", "2018-11-02 16:34:07.981+1300"),
        ("2018-11-02 16:34:07.981", "2018-11-02 16:34:07.981+0800"),
        ("2018-11-02 16:34:07", "2021-08-20 19:30:00.823+0800"),
        ("", "2021-08-20 19:30:00.823+0800"),
    ],
)
def test_client_time(given, want):
    adapter = build(AdapterConfig("huaweiads", ENDPOINT))
    adapter.now = lambda: NOW
    assert adapter.client_time(given) == want


def _request(test: str) -> dict:
    params = {"slotid": "s", "adtype": "banner", "publisherid": "123", "signkey": "k", "keyid": "41"}
    return {
        "id": "r",
        "imp": [
            {"id": "i", "banner": {"w": 300, "h": 250}, "ext": {"bidder": {**params, "isTestAuthorization": test}}}
        ],
        "app": {"bundle": "b"},
        "device": {"ifa": "gaid"},
    }


@pytest.mark.parametrize(("test", "nonce"), [("true", "1629473330823"), ("false", "1629459000823")])
def test_nonce_from_the_clock_unless_testing(test, nonce):
    adapter = build(AdapterConfig("huaweiads", ENDPOINT))
    adapter.now = lambda: NOW
    calls, errors = adapter.make_requests(_request(test), RequestInfo(bidder="huaweiads"))
    assert errors == []
    assert f"nonce={nonce}," in calls[0].headers["Authorization"]
    assert orjson.loads(calls[0].body or b"")["multislot"][0]["test"] == (1 if test == "true" else 0)


@pytest.mark.parametrize(
    ("milliseconds", "want"),
    [(6038, "00:00:06.038"), (0, "00:00:00.000"), (90_061_001, "01:01:01.001"), (-1, "23:59:59.999")],
)
def test_vast_duration(milliseconds, want):
    assert vast_duration(milliseconds) == want


@pytest.mark.parametrize(
    ("text", "want"),
    [("%2Ftest%2F", "/test/"), ("a+b", "a b"), ("%e5%ae%89", "安"), ("100%", ""), ("%zz", ""), ("", "")],
)
def test_go_unescape(text, want):
    assert go_unescape(text) == want


@pytest.mark.parametrize(
    ("status", "body", "code", "message"),
    [
        (
            503,
            b"",
            ErrorCode.BAD_INPUT,
            "Something went wrong, please contact your Account Manager. Status Code: [ 503 ] ",
        ),
        (400, b"", ErrorCode.BAD_INPUT, "Unexpected status code: [ 400 ]. Run with request.debug = 1 for more info"),
        (204, b"", ErrorCode.BAD_SERVER_RESPONSE, "Unable to parse server response"),
        (200, b'{"retcode": "200"}', ErrorCode.BAD_SERVER_RESPONSE, "Unable to parse server response"),
        (
            200,
            b'{"retcode": 204}',
            ErrorCode.BAD_INPUT,
            "HuaweiAdsResponse retcode: 204 , reason: The request packet is correct, but no advertisement was found "
            "for this request.",
        ),
        (200, b'{"retcode": 450, "reason": "r"}', ErrorCode.BAD_INPUT, "HuaweiAdsResponse retcode: 450 , reason: r"),
        (
            200,
            b'{"retcode": 300}',
            ErrorCode.UNKNOWN,
            "convert huaweiads response to bidder response failed: multiad length is 0, get no ads from huawei side.",
        ),
    ],
)
def test_failed_answers(status, body, code, message):
    adapter = build(AdapterConfig("huaweiads", ENDPOINT))
    response, errors = adapter.make_bids(_request("true"), RequestData("POST", ENDPOINT), ResponseData(status, body))
    assert response is None
    assert [(error.code, error.message) for error in errors] == [(code, message)]


def test_answer_for_an_unknown_slot_has_no_bids():
    answer = {"retcode": 200, "multiad": [{"adtype": 8, "slotid": "other", "retcode30": 200, "content": [{}]}]}
    adapter = build(AdapterConfig("huaweiads", ENDPOINT))
    response, errors = adapter.make_bids(
        _request("true"), RequestData("POST", ENDPOINT), ResponseData(200, orjson.dumps(answer))
    )
    assert errors == []
    assert response is not None and response.bids == [] and response.currency == "CNY"
