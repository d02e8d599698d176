"""GET /openrtb2/amp: every query parameter, the stored-request rules and texts (spec §4.3, §7.3),
the deadline, the response shape and targeting, AMP headers, and a replay of the real AMP RTC
callout (reference real-clients §3.5). Mock bidders answer on real sockets."""

from __future__ import annotations

import gc
import json
import time
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import pytest

from hbserver.auction.request.amp import AmpError, AmpParams, amp_request, amp_tmax, parse_amp_query, resolve_sizes
from hbserver.usersync.cookie import UidsCookie, encode_cookie
from tests.auction.helpers import bid, bidder_config

TCF2 = "CPdECS0PdECS0ACABBENAzCv_____3___wAAAQNd_X9cAAAAAAAA"
S1 = {
    "id": "some-request-id",
    "site": {"page": "test.somepage.com"},
    "imp": [
        {
            "id": "my-imp-id",
            "banner": {"format": [{"w": 300, "h": 600}]},
            "ext": {"prebid": {"bidder": {"alpha": {"placementId": 12883451}}}},
        }
    ],
}


def params(**query: str) -> AmpParams:
    parsed, _ = parse_amp_query({"tag_id": "t", **query})
    return parsed


@pytest.mark.parametrize(
    ("query", "formats"),
    [
        ({"ow": "20", "oh": "40"}, [(20, 40)]),  # V13
        ({"w": "20", "oh": "40"}, [(20, 40)]),  # V14
        ({"ow": "20", "h": "40"}, [(20, 40)]),  # V15
        ({"ms": "200x50,100x60"}, [(200, 50), (100, 60)]),  # V16
        ({"w": "20", "h": "40", "ms": "200x50,100x60"}, [(20, 40), (200, 50), (100, 60)]),  # V17
        ({"h": "200"}, [(300, 200)]),  # V18
        ({"w": "150"}, [(150, 600)]),  # V19
        ({"h": "1", "w": "2", "oh": "3", "ow": "4", "ms": "10x11,12x13"}, [(4, 3), (10, 11), (12, 13)]),  # V20
        ({"ms": "1x2, 3x4"}, [(1, 2), (0, 4)]),  # V21: " 3" reads as 0
        ({"ms": "0x0"}, [(300, 600)]),
        ({"ms": "0x0,3x4"}, [(300, 600)]),
        ({"ms": "1x2x3"}, [(300, 600)]),
        ({"ms": "INVALIDxINVALID"}, [(300, 600)]),
        ({"ms": "1x2,INVALID"}, [(300, 600)]),
        ({"ow": "20"}, [(300, 600)]),  # a lone override changes nothing
        ({"w": "", "h": "", "ow": "", "oh": "", "ms": ""}, [(300, 600)]),  # RTC's empty macros
    ],
)
def test_size_resolution(query, formats):
    banner = resolve_sizes({"format": [{"w": 300, "h": 600}]}, params(**query))
    assert [(f["w"], f["h"]) for f in banner["format"]] == formats


@pytest.mark.parametrize(
    ("query", "check"),
    [
        (
            {"curl": "http://example.com", "slot": "1234", "account": "12345", "debug": "1"},  # V22
            lambda r: (
                r["site"]["page"] == "http://example.com"
                and r["site"]["domain"] == "example.com"
                and r["imp"][0]["tagid"] == "1234"
                and r["site"]["publisher"]["id"] == "12345"
                and r["test"] == 1
                and r["ext"]["prebid"]["debug"] is True
            ),
        ),
        (
            {"curl": "http://test.somepage.co.uk:1234?myquery=1&other=2"},  # V23
            lambda r: (
                r["site"]["page"] == "http://test.somepage.co.uk:1234?myquery=1&other=2"
                and r["site"]["domain"] == "test.somepage.co.uk"
            ),
        ),
        (
            {"targeting": '{"gam-key1":"val1", "gam-key2":"val2"}'},  # V24
            lambda r: (
                r["imp"][0]["ext"]
                == {
                    "prebid": {"bidder": {"alpha": {"placementId": 12883451}}},
                    "data": {"gam-key1": "val1", "gam-key2": "val2"},
                }
            ),
        ),
        ({}, lambda r: r["site"]["ext"] == {"amp": 1} and r["imp"][0]["secure"] == 1),  # V26
        ({"account": "ACCOUNT_ID"}, lambda r: "publisher" not in r["site"]),  # V28: the unfilled macro
        (
            {"addtl_consent": "1~1.35.41.101"},  # V1
            lambda r: (
                r["user"]["ext"]
                == {
                    "ConsentedProvidersSettings": {"consented_providers": "1~1.35.41.101"},
                    "consented_providers_settings": {"consented_providers": [1, 35, 41, 101]},
                }
            ),
        ),
        ({"consent_type": "3", "consent_string": "1YYY"}, lambda r: r["regs"] == {"us_privacy": "1YYY"}),  # V2
        (
            {"consent_type": "2", "gdpr_applies": "true", "consent_string": TCF2},  # V3
            lambda r: r["regs"] == {"gdpr": 1} and r["user"]["consent"] == TCF2,
        ),
        (
            {"consent_type": "2", "gdpr_applies": "true", "gdpr_consent": TCF2},  # V4
            lambda r: r["regs"] == {"gdpr": 1} and r["user"]["consent"] == TCF2,
        ),
        (
            {"gdpr_consent": TCF2, "consent_string": "1NYN", "consent_type": "3"},  # V30: consent_string wins
            lambda r: r["regs"] == {"us_privacy": "1NYN"} and "user" not in r,
        ),
        (
            {"consent_string": TCF2, "gdpr_applies": "false"},  # detected TCF2; gdpr_applies false
            lambda r: r["regs"] == {"gdpr": 0} and r["user"]["consent"] == TCF2,
        ),
        (
            {
                "consent_type": "4",
                "consent_string": "DBABMA~CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA",
                "gpp_sid": "2",
            },
            lambda r: r["regs"]["gpp_sid"] == [2] and r["regs"]["gpp"].startswith("DBABMA"),
        ),
    ],
)
def test_overrides(query, check):
    request, warnings = amp_request(json.loads(json.dumps(S1)), params(**query), gdpr_enabled=True)
    assert check(request), request
    assert warnings == []


@pytest.mark.parametrize(
    ("query", "warning"),
    [
        (
            {"consent_type": "3", "consent_string": "invalid"},
            "Consent string 'invalid' is not a valid CCPA consent string.",
        ),
        ({"consent_type": "2", "consent_string": "nope"}, "Consent string 'nope' is not a valid TCF2 consent string."),
        ({"consent_type": "1", "consent_string": "BOMhx"}, "TCF1 consent is deprecated and no longer supported."),
        (
            {"consent_string": "zzz"},
            "Consent string 'zzz' is not recognized as one of the supported formats CCPA or TCF2.",
        ),
        ({"consent_type": "4", "consent_string": "junk"}, "Consent string 'junk' is not a valid GPP consent string."),
    ],
)
def test_invalid_consent_is_a_warning_and_the_rest_still_applies(query, warning):
    request, warnings = amp_request(json.loads(json.dumps(S1)), params(slot="s9", **query), gdpr_enabled=True)
    assert [w.message for w in warnings] == [warning] and warnings[0].code == 10001
    assert request["imp"][0]["tagid"] == "s9" and "regs" not in request and "user" not in request


def test_targeting_that_is_not_an_object_is_a_warning():
    request, warnings = amp_request(json.loads(json.dumps(S1)), params(targeting="{123,}"), gdpr_enabled=True)
    assert warnings[0].code == 2 and warnings[0].message.startswith("unable to merge imp.ext with targeting data")
    assert "data" not in request["imp"][0]["ext"]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"account": "test_pub"}, "AMP requests require an AMP tag_id."),  # V36
        ({"tag_id": "t", "timeout": "-1"}, 'timeout must be a non-negative integer (milliseconds), got "-1"'),
        ({"tag_id": "t", "timeout": "abc"}, 'timeout must be a non-negative integer (milliseconds), got "abc"'),
    ],
)
def test_fatal_query_problems(query, message):
    with pytest.raises(AmpError) as caught:
        parse_amp_query(query)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("default", "timeout", "stored", "tmax"),
    [
        (1000, None, None, 1000),
        (1000, 500, None, 500),
        (1000, 2000, None, 1000),
        (1000, 500, 300, 300),
        (1000, None, 0, 1000),
        (800, 900, 850, 800),
    ],
)
def test_tmax_rule(default, timeout, stored, tmax):
    assert amp_tmax(default, timeout, stored) == tmax


# --- the endpoint ------------------------------------------------------------------------------


def store(data_dir: Path, tag: str, request: dict) -> None:
    (data_dir / "stored_requests" / f"{tag}.json").write_text(json.dumps(request))


def amp_stored(*bidder_names: str, **fields) -> dict:
    imp = {
        "id": "slot-1",
        "banner": {"format": [{"w": 300, "h": 250}]},
        "ext": {"prebid": {"bidder": {name: {"p": 1} for name in bidder_names}}},
    }
    return {"id": "amp-req", "site": {"page": "https://pub.example/a"}, "imp": [imp], **fields}


@pytest.mark.parametrize(
    ("stored", "query", "status", "body"),
    [
        (None, "account=test_pub", 400, "Invalid request: AMP requests require an AMP tag_id."),
        (None, "tag_id=missing", 400, "Invalid request: No AMP config found for tag_id missing."),
        (
            {"imp": [{}], "app": {}},
            "tag_id=t",
            400,
            "Invalid request: The app object must not exist in AMP stored requests.",
        ),
        (
            {"imp": [{}, {}]},
            "tag_id=203",
            400,
            "Invalid request: Data for tag_id '203' includes 2 imp elements. Only one is allowed.",
        ),
        (
            {"imp": []},
            "tag_id=test",
            400,
            "Invalid request: Data for tag_id='test' does not define the required imp array.",
        ),
        (
            {
                "id": "x",
                "site": {},
                "imp": [{"id": "i", "banner": {"w": 1, "h": 1}, "ext": {"prebid": {"bidder": {"alpha": {}}}}}],
            },
            "tag_id=t",
            400,
            "Invalid request: request.site should include at least one of request.site.id or request.site.page.",
        ),
        (
            {
                "id": "x",
                "site": {"page": "p", "ext": {"amp": 2}},
                "imp": [{"id": "i", "banner": {"w": 1, "h": 1}, "ext": {"prebid": {"bidder": {"alpha": {}}}}}],
            },
            "tag_id=t",
            400,
            "Invalid request: request.site.ext.amp must be either 1, 0, or undefined",
        ),
        # PBS-Go decodes the stored request into a BidRequest first (amp_auction.go loadRequestJSONForAmp)
        ("{not json", "tag_id=t", 400, "Invalid request: expect ull\n"),
    ],
)
async def test_stored_request_errors(make_client, bidders, data_dir, stored, query, status, body):
    if stored is not None:
        tag = query.split("tag_id=")[1]
        path = data_dir / "stored_requests" / f"{tag}.json"
        path.write_text(stored if isinstance(stored, str) else json.dumps(stored))
    client = await make_client(bidder_config(bidders, "alpha"))
    response = await client.get(f"/openrtb2/amp?{query}&__amp_source_origin=https%3A%2F%2Fpub.example")
    assert response.status == status
    assert (await response.text()).startswith(body)
    assert response.headers["AMP-Access-Control-Allow-Source-Origin"] == "https://pub.example"
    assert response.headers["Access-Control-Expose-Headers"] == "AMP-Access-Control-Allow-Source-Origin"


async def test_amp_auction_targeting_cache_and_headers(make_client, bidders, data_dir):
    bidders.bids["alpha"] = [bid("slot-1", 1.87, "a1", dealid="d-1")]
    bidders.bids["beta"] = [bid("slot-1", 0.5, "b1")]
    store(data_dir, "101", amp_stored("alpha", "beta"))
    client = await make_client(bidder_config(bidders, "alpha", "beta"))
    cookie = UidsCookie()
    cookie.set_uid("generic", "uid-7", datetime.now(UTC))
    response = await client.get(
        "/openrtb2/amp?tag_id=101&w=300&h=250&slot=%2F1111%2Fslot&account=1001",
        headers={"Origin": "https://pub-example.cdn.ampproject.org", "Cookie": f"uids={encode_cookie(cookie)}"},
    )
    assert response.status == 200
    assert response.headers["Content-Type"].startswith("application/json")
    assert response.headers["AMP-Access-Control-Allow-Source-Origin"] == "https://pub-example.cdn.ampproject.org"
    assert response.headers["Access-Control-Allow-Origin"] == "https://pub-example.cdn.ampproject.org"
    assert response.headers["Access-Control-Allow-Credentials"] == "true"
    data = await response.json()
    targeting = data["targeting"]
    expected = {
        "hb_pb": "1.80",
        "hb_bidder": "alpha",
        "hb_size": "300x250",
        "hb_deal": "d-1",
        "hb_env": "amp",
        "hb_creative_loadtype": "html",
        "hb_cache_host": "pbs.example",
        "hb_cache_path": "/cache",
        "hb_pb_alpha": "1.80",
        "hb_bidder_alpha": "alpha",
        "hb_env_alpha": "amp",
        "hb_pb_beta": "0.50",
    }
    for key, value in expected.items():
        assert targeting[key] == value, key
    assert targeting["hb_cache_host_alpha"] == "pbs.example" and targeting["hb_cache_path_alpha"] == "/cache"
    assert all(len(key) <= 20 for key in targeting)
    cached = await client.get("/cache", params={"uuid": targeting["hb_cache_id"]})
    assert cached.status == 200 and (await cached.json())["id"] == "a1"
    sent = bidders.received["alpha"][0]
    assert sent["imp"][0]["secure"] == 1 and sent["imp"][0]["tagid"] == "/1111/slot"
    assert sent["site"]["publisher"]["id"] == "1001" and sent["site"]["ext"] == {"amp": 1}
    assert sent["user"]["buyeruid"] == "uid-7"
    assert sent["ext"]["prebid"]["channel"] == {"name": "amp", "version": ""}
    assert "ext" not in data or "errors" not in data["ext"]
    text = await (await client.get("/metrics")).text()
    assert 'hbserver_requests{request_status="ok",request_type="amp"} 1.0' in text


async def test_deadline_with_a_silent_bidder(make_client, bidders, data_dir):
    bidders.bids["alpha"] = [bid("slot-1", 2.0)]
    bidders.bids["beta"] = [bid("slot-1", 9.0, "late")]
    bidders.delay["beta"] = 5
    store(data_dir, "101", amp_stored("alpha", "beta"))
    client = await make_client(bidder_config(bidders, "alpha", "beta"), amp={"timeout_adjustment_ms": 100})
    gc.collect()  # not a collection of the garbage earlier tests left (in a full run) inside the timed request
    started = time.perf_counter()
    response = await client.get("/openrtb2/amp?tag_id=101&timeout=300")
    elapsed = time.perf_counter() - started
    data = await response.json()
    assert elapsed < 0.2 + 0.15, elapsed  # budget = 300 - 100 ms (generous margin for a loaded CI box)
    assert data["targeting"]["hb_bidder"] == "alpha"
    assert data["ext"]["errors"]["beta"][0]["code"] == 1
    assert 0 < bidders.received["alpha"][0]["tmax"] <= 190  # bidders get cache.expected_millis less


async def test_cache_failure_leaves_no_targeting(make_client, bidders, data_dir):
    bidders.bids["alpha"] = [bid("slot-1", 2.0)]
    store(data_dir, "101", amp_stored("alpha"))
    client = await make_client(
        bidder_config(bidders, "alpha"), cache={"store": "remote", "remote": {"url": "http://127.0.0.1:9/cache"}}
    )
    data = await (await client.get("/openrtb2/amp?tag_id=101")).json()
    assert data["targeting"] == {}
    assert data["ext"]["errors"]["prebid"][0]["code"] == 999


async def test_debug_and_consent_warning_in_response(make_client, bidders, data_dir):
    bidders.bids["alpha"] = [bid("slot-1", 2.0)]
    store(data_dir, "101", amp_stored("alpha"))
    client = await make_client(bidder_config(bidders, "alpha"))
    data = await (await client.get("/openrtb2/amp?tag_id=101&debug=1&consent_type=3&consent_string=bad")).json()
    assert data["ext"]["debug"]["resolvedrequest"]["test"] == 1
    assert {"code": 10001, "message": "Consent string 'bad' is not a valid CCPA consent string."} in data["ext"][
        "warnings"
    ]["general"]
    assert data["targeting"]["hb_bidder"] == "alpha"


async def test_rtc_callout_replay(make_client, bidders, data_dir, tmp_path):
    """The URL the AMP runtime builds from the Prebid RTC vendor template (macros expanded, empty
    attributes as empty values, ``__amp_source_origin`` appended), with cookies and Origin."""
    bidders.bids["alpha"] = [bid("slot-1", 1.25, "rtc")]
    store(data_dir, "1234-amp-pub-300x250", amp_stored("alpha"))
    analytics = tmp_path / "a.jsonl"
    client = await make_client(bidder_config(bidders, "alpha"), analytics={"file": {"filename": str(analytics)}})

    def enc(value):
        return quote("" if value is None else str(value), safe="-_.!~*'()")

    query = dict(
        tag_id="1234-amp-pub-300x250",
        w=300,
        h=250,
        ow=None,
        oh=None,
        ms=None,
        slot="/1111/universal_creative",
        targeting='{"site":{"section":"news"}}',
        curl="https://pub.example/article.html",
        timeout=500,
        adc="amp-Gxxxxxxxxxxxxxxxxxxxxw",
        purl="https://pub-example.cdn.ampproject.org/c/s/pub.example/article.html",
        gdpr_consent=None,
        account="1001",
    )
    url = "/openrtb2/amp?" + "&".join(f"{k}={enc(v)}" for k, v in query.items())
    url += "&__amp_source_origin=" + enc("https://pub.example")
    started = time.perf_counter()
    response = await client.get(
        url,
        headers={
            "Accept": "application/json",
            "Origin": "https://pub-example.cdn.ampproject.org",
            "Cookie": "other=1",
        },
    )
    assert time.perf_counter() - started < 0.5
    assert response.status == 200
    assert response.headers["AMP-Access-Control-Allow-Source-Origin"] == "https://pub.example"
    assert response.headers["Access-Control-Allow-Origin"] == "https://pub-example.cdn.ampproject.org"
    data = await response.json()
    assert data["targeting"]["hb_pb"] == "1.20" and data["targeting"]["hb_cache_id"]
    sent = bidders.received["alpha"][0]
    assert sent["imp"][0]["ext"]["data"] == {"site": {"section": "news"}}
    assert sent["imp"][0]["banner"]["format"] == [{"w": 300, "h": 250}]
    assert sent["site"]["page"] == "https://pub.example/article.html" and sent["site"]["domain"] == "pub.example"
    await client.close()
    records = [json.loads(line) for line in analytics.read_text().splitlines()]
    assert [r["event"] for r in records] == ["amp"] and records[0]["account"] == "1001"
