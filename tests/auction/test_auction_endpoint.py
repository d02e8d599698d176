"""POST /openrtb2/auction end to end: the real app in-process, mock bidders on real sockets.

Covers the request path (stored request/imp merge, validation texts, tmax, buyeruid from the
cookie, 2.5 conversion, privacy scrub), fan-out with deadlines (a silent bidder costs at most its
deadline and gets code 1), bids (validation, currency, adjustment factors), winners, targeting,
bid caching through the cache store, events, the response ext and debug.
"""

from __future__ import annotations

import base64
import gzip
import json
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import pytest

from hbserver.usersync.cookie import UidsCookie, encode_cookie
from tests.auction.helpers import EXTERNAL, banner_imp, bid, bidder_config


def auction_request(*imps: dict[str, Any], **fields: Any) -> dict[str, Any]:
    request = {
        "id": "req-1",
        "tmax": 500,
        "imp": list(imps) or [banner_imp()],
        "site": {"page": "https://news.example/a", "publisher": {"id": "1001"}},
        "device": {"ua": "test-agent", "ip": "203.0.113.77"},
        "ext": {"prebid": {"targeting": {"pricegranularity": "medium"}, "cache": {"bids": {}}}},
    }
    request.update(fields)
    return request


async def post(client, body: Any, **kwargs: Any):
    data = body if isinstance(body, bytes) else json.dumps(body)
    return await client.post("/openrtb2/auction", data=data, **kwargs)


def seat_bids(response: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    return {seat["seat"]: seat["bid"] for seat in response.get("seatbid", [])}


async def test_two_bidders_winner_targeting_cache_and_events(make_client, bidders):
    bidders.bids["alpha"] = [bid("imp-1", 1.87, "a1")]
    bidders.bids["beta"] = [bid("imp-1", 0.91, "b1", w=300, h=600, dealid="deal-9")]
    client = await make_client(bidder_config(bidders, "alpha", "beta"))
    body = auction_request(banner_imp("imp-1", alpha={"p": 1}, beta={"p": 2}))
    response = await post(client, body, headers={"Content-Type": "text/plain"})
    assert response.status == 200, await response.text()
    data = await response.json()
    seats = seat_bids(data)
    alpha, beta = seats["alpha"][0], seats["beta"][0]
    assert data["id"] == "req-1" and data["cur"] == "USD"
    targeting = alpha["ext"]["prebid"]["targeting"]
    assert targeting["hb_pb"] == "1.80" and targeting["hb_pb_alpha"] == "1.80"
    assert targeting["hb_bidder"] == "alpha" and targeting["hb_size"] == "300x250"
    assert targeting["hb_cache_host"] == "pbs.example" and targeting["hb_cache_path"] == "/cache"
    assert targeting["hb_cache_id"] == targeting["hb_cache_id_alpha"]
    beta_targeting = beta["ext"]["prebid"]["targeting"]
    assert "hb_pb" not in beta_targeting and beta_targeting["hb_pb_beta"] == "0.90"
    assert beta_targeting["hb_deal_beta"] == "deal-9" and beta_targeting["hb_size_beta"] == "300x600"
    # a host alias is its own core bidder (PBS-Go exchange/bidder.go: AdapterCode is BidderCoreName)
    assert alpha["ext"]["prebid"]["type"] == "banner" and alpha["ext"]["prebid"]["meta"]["adaptercode"] == "alpha"
    assert alpha["ext"]["origbidcpm"] == 1.87 and alpha["ext"]["origbidcur"] == "USD"
    # the cached value is the bid, retrievable from the cache endpoint at hb_cache_host + hb_cache_path
    cache_id = targeting["hb_cache_id"]
    assert alpha["ext"]["prebid"]["cache"]["bids"] == {"cacheId": cache_id, "url": f"{EXTERNAL}/cache?uuid={cache_id}"}
    cached = await client.get("/cache", params={"uuid": cache_id})
    assert cached.status == 200 and (await cached.json())["id"] == "a1"
    events = alpha["ext"]["prebid"]["events"]
    assert events["win"].startswith(f"{EXTERNAL}/event?t=win&b=a1&a=1001&bidder=alpha&ts=")
    assert events["imp"].startswith(f"{EXTERNAL}/event?t=imp&b=a1&a=1001&bidder=alpha&ts=")
    ext = data["ext"]
    assert set(ext["responsetimemillis"]) == {"alpha", "beta"} and ext["tmaxrequest"] == 500
    assert "errors" not in ext and "debug" not in ext
    # each bidder got its own imp ext and the request ext without the exchange's parts
    sent = bidders.received["alpha"][0]
    tid = sent["imp"][0]["ext"].pop("tid")  # auto_gen_source_tid (PBS-Go's default): a UUID per imp and source
    assert sent["imp"][0]["ext"] == {"bidder": {"p": 1}}
    assert str(uuid.UUID(tid)) == tid and str(uuid.UUID(sent["source"]["tid"])) != tid
    assert bidders.received["beta"][0]["imp"][0]["ext"]["tid"] == tid  # one auction, one tid per imp
    assert "targeting" not in sent.get("ext", {}).get("prebid", {}) and 0 < sent["tmax"] <= 490
    assert bidders.headers["alpha"][0]["X-Openrtb-Version"] == "2.5"
    assert response.headers["Content-Type"].startswith("application/json")


async def test_silent_bidder_times_out_at_its_deadline(make_client, bidders):
    bidders.bids["alpha"] = [bid("imp-1", 2.0)]
    bidders.bids["beta"] = [bid("imp-1", 9.0, "late")]
    bidders.delay["beta"] = 5.0
    client = await make_client(bidder_config(bidders, "alpha", "beta"))
    body = auction_request(banner_imp("imp-1", alpha={}, beta={}), tmax=200)
    started = time.perf_counter()
    response = await post(client, body)
    elapsed = time.perf_counter() - started
    data = await response.json()
    assert response.status == 200
    assert elapsed < 0.2 + 0.15, elapsed  # never waits past the deadline (generous for a loaded CI box)
    assert list(seat_bids(data)) == ["alpha"]
    assert data["ext"]["errors"]["beta"][0]["code"] == 1


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda r: r.pop("id"), 'request missing required field: "id"'),
        (lambda r: r.update(tmax=-1), "request.tmax must be nonnegative. Got -1"),
        (lambda r: r.update(imp=[]), "request.imp must contain at least one element."),
        (
            lambda r: r.update(imp="x"),
            'cannot unmarshal openrtb2.BidRequest.Imp: decode slice: expect [ or n, but found "',
        ),
        (lambda r: r.pop("site"), "One of request.site or request.app or request.dooh must be defined"),
        (
            lambda r: r.update(app={"id": "a"}),
            "No more than one of request.site or request.app or request.dooh can be defined",
        ),
        (
            lambda r: r.update(site={"publisher": {"id": "1"}}),
            "request.site should include at least one of request.site.id or request.site.page.",
        ),
        (lambda r: r["imp"][0].pop("id"), 'request.imp[0] missing required field: "id"'),
        (
            lambda r: r["imp"].append(dict(r["imp"][0])),
            'request.imp[0].id and request.imp[1].id are both "imp-1". Imp IDs must be unique.',
        ),
        (
            lambda r: r["imp"][0].pop("banner"),
            'request.imp[0] must contain at least one of "banner", "video", "audio", or "native"',
        ),
        (
            lambda r: r["imp"][0].update(banner={}),
            'request.imp[0].banner has no sizes. Define "w" and "h", or include "format" elements.',
        ),
        (
            lambda r: r["imp"][0].update(ext={"prebid": {"bidder": {}}}),
            "request.imp[0].ext.prebid.bidder must contain at least one bidder",
        ),
        (lambda r: r["imp"][0].pop("ext"), "request.imp[0].ext is required"),
        (  # the only bidder is unknown: nothing can bid (DECISIONS: unknown bidders)
            lambda r: r["imp"][0].update(ext={"prebid": {"bidder": {"nobody": {}}}}),
            "request.imp[0].ext.prebid.bidder must contain at least one bidder",
        ),
        (
            lambda r: r["ext"]["prebid"].update(aliases={"alpha": "alpha"}),
            "request.ext.prebid.aliases.alpha defines a no-op alias. Choose a different alias, or remove this entry.",
        ),
        (
            lambda r: r["ext"]["prebid"].update(aliases={"x": "nobody"}),
            "request.ext.prebid.aliases.x refers to unknown bidder: nobody",
        ),
        (
            lambda r: r["ext"]["prebid"].update(bidadjustmentfactors={"alpha": -2}),
            "request.ext.prebid.bidadjustmentfactors.alpha must be a positive number. Got -2.000000",
        ),
        (
            lambda r: r["ext"]["prebid"].update(bidadjustmentfactors={"zeta": 2}),
            "request.ext.prebid.bidadjustmentfactors.zeta is not a known bidder or alias",
        ),
        (
            lambda r: r["ext"]["prebid"].update(cache={"nothing": {}}),
            'request.ext is invalid: request.ext.prebid.cache requires one of the "bids" or "vastxml" properties',
        ),
        (
            lambda r: r["ext"]["prebid"]["targeting"].update(
                pricegranularity={"precision": 2, "ranges": [{"max": 5, "increment": -1}]}
            ),
            "Price granularity error: increment must be a nonzero positive number",
        ),
        (lambda r: r.update(regs={"gdpr": 2}), "request.regs.gdpr must be either 0 or 1"),
        (
            lambda r: r["ext"]["prebid"].update(aliasgvlids={"nope": 12}),
            "request.ext.prebid.aliasgvlids. vendorId 12 refers to unknown bidder alias: nope",
        ),
        (
            lambda r: r["ext"]["prebid"].update(aliases={"gamma2": "alpha"}, aliasgvlids={"gamma2": 0}),
            "request.ext.prebid.aliasgvlids. Invalid vendorId 0 for alias: gamma2. "
            "Choose a different vendorId, or remove this entry.",
        ),
        (
            lambda r: r.update(site={"page": "p", "ext": {"amp": 2}}),
            "request.site.ext.amp must be either 1, 0, or undefined",
        ),
        (lambda r: r.update(device={"w": -1}), "request.device.w must be a positive number"),
        (
            lambda r: r["ext"]["prebid"].update(storedrequest={"id": 5}),
            "request.ext.prebid.storedrequest.id must be a string",
        ),
        (
            lambda r: r["ext"]["prebid"].update(storedrequest={"id": "missing"}),
            'Stored Request with ID="missing" not found.',
        ),
    ],
)
async def test_validation_errors(make_client, bidders, mutate, message):
    client = await make_client(bidder_config(bidders, "alpha"))
    body = auction_request()
    mutate(body)
    response = await post(client, body)
    assert response.status == 400
    assert await response.text() == f"Invalid request: {message}\n"


DISABLED_TEXT = (
    'Bidder "{}" has been disabled on this instance of Prebid Server. Please work with the PBS host to enable '
    "this bidder again."
)


@pytest.mark.parametrize(
    ("imps", "general", "by_bidder", "bidders_called"),
    [
        # an unknown bidder next to a known one: dropped with a warning, the auction goes on
        ([banner_imp("imp-1", alpha={}, nobody={})],
         [(999, "request.imp[0].ext.prebid.bidder contains unknown bidder: nobody")], {}, {"alpha": ["imp-1"]}),
        # an imp whose only bidder is unknown keeps no bidder; the other imp is auctioned
        ([banner_imp("imp-1", nobody={}), banner_imp("imp-2", alpha={})],
         [(999, "request.imp[0].ext.prebid.bidder contains unknown bidder: nobody")], {}, {"alpha": ["imp-2"]}),
        # a disabled bidder: PBS-Go's text, under the bidder's own name
        ([banner_imp("imp-1", alpha={}, off={})], [], {"off": [DISABLED_TEXT.format("off")]}, {"alpha": ["imp-1"]}),
        # a known built-in bidder the host disabled (ix is disabled by default)
        ([banner_imp("imp-1", ix={"siteId": "1"}), banner_imp("imp-2", alpha={})], [],
         {"ix": [DISABLED_TEXT.format("ix")]}, {"alpha": ["imp-2"]}),
    ],
    ids=["unknown-beside-known", "imp-left-empty", "disabled-alias", "disabled-built-in"],
)
async def test_unknown_and_disabled_bidders_do_not_sink_the_auction(
    make_client, bidders, imps, general, by_bidder, bidders_called
):
    bidders.bids["alpha"] = [bid(imp_id, 1.0, "a-" + imp_id) for imp_id in bidders_called["alpha"]]
    config = bidder_config(bidders, "alpha", "off", off={"disabled": True})
    client = await make_client(config)
    response = await post(client, auction_request(*imps))
    assert response.status == 200, await response.text()
    data = await response.json()
    warnings = data["ext"].get("warnings", {})
    assert [(w["code"], w["message"]) for w in warnings.get("general", [])] == general
    for name, texts in by_bidder.items():
        assert [w["message"] for w in warnings[name]] == texts
    called = {name: [imp["id"] for body in bodies for imp in body["imp"]] for name, bodies in bidders.received.items()}
    assert called == bidders_called
    assert {bid["impid"] for bids in seat_bids(data).values() for bid in bids} == set(bidders_called["alpha"])


# PBS-Go's 400 (ortb/request_validator.go validateImpExt) lists imp[0]'s disabled bidders and legacy
# imp.ext names it does not know before its text (sample-requests/disabled/bad/bad-bidder.json).
@pytest.mark.parametrize(
    ("imps", "before"),
    [
        ([banner_imp("imp-1", nobody={}), banner_imp("imp-2", ghost={})], []),
        ([banner_imp("imp-1", off={})], [DISABLED_TEXT.format("off")]),
        ([banner_imp("imp-1", nobody={}, off={})], [DISABLED_TEXT.format("off")]),
        ([{"id": "imp-1", "banner": {"w": 1, "h": 1}, "ext": {"nobody": {}, "off": {}}}],
         ["request.imp[0].ext contains unknown bidder: 'nobody', ignoring", DISABLED_TEXT.format("off")]),
        ([banner_imp("imp-1", off={}), banner_imp("imp-2", off={})], [DISABLED_TEXT.format("off")]),
    ],
    ids=["all-unknown", "all-disabled", "unknown-and-disabled", "legacy-unknown-and-disabled", "imp-0-only"],
)
async def test_no_bidder_left_anywhere_is_a_400(make_client, bidders, imps, before):
    client = await make_client(bidder_config(bidders, "alpha", "off", off={"disabled": True}))
    response = await post(client, auction_request(*imps))
    assert response.status == 400
    lines = [*before, "request.imp[0].ext.prebid.bidder must contain at least one bidder"]
    assert await response.text() == "".join(f"Invalid request: {line}\n" for line in lines)
    assert bidders.received == {}


@pytest.mark.parametrize(
    ("body", "status", "text"),
    [
        (b"", 400, "Invalid request: request body is empty"),
        # PBS-Go's texts: json-iterator decoding the body into a BidRequest
        (b"{nope", 400, "Invalid request: expect ull\n"),
        (b"[1,2]", 400, "Invalid request: expect { or n, but found [\n"),
        (b"malformed", 400, "Invalid request: expect { or n, but found m\n"),
        (b'"text"', 400, 'Invalid request: expect { or n, but found "\n'),
        (b'{"id":"x",', 400, 'Invalid request: expects " or n, but found \x00\n'),
        (b"null", 400, 'Invalid request: request missing required field: "id"\n'),  # null is an empty request
    ],
)
async def test_bad_bodies(make_client, bidders, body, status, text):
    client = await make_client(bidder_config(bidders, "alpha"))
    response = await post(client, body)
    assert response.status == status and (await response.text()).startswith(text)


async def test_body_limit_and_gzip(make_client, bidders):
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    client = await make_client(bidder_config(bidders, "alpha"), max_request_size=4096)
    big = auction_request()
    big["site"]["keywords"] = "k" * 5000
    response = await post(client, big)
    assert response.status == 413
    packed = gzip.compress(json.dumps(auction_request()).encode())
    response = await client.post("/openrtb2/auction?gzip=1", data=packed, headers={"Content-Type": "text/plain"})
    assert response.status == 200 and "alpha" in seat_bids(await response.json())


async def test_stored_request_and_imp_merge(make_client, bidders, data_dir: Path):
    bidders.bids["alpha"] = [bid("imp-1", 3.0)]
    stored = {
        "id": "{{UUID}}",
        "tmax": 400,
        "site": {"page": "https://stored.example", "publisher": {"id": "77"}},
        "imp": [banner_imp()],
        "ext": {"prebid": {"targeting": {"pricegranularity": "low"}, "cache": {"bids": {}}}},
    }
    (data_dir / "stored_requests" / "sr1.json").write_text(json.dumps(stored))
    (data_dir / "stored_imps" / "si1.json").write_text(
        json.dumps({"banner": {"w": 728, "h": 90}, "ext": {"prebid": {"bidder": {"alpha": {"from": "stored"}}}}})
    )
    client = await make_client(bidder_config(bidders, "alpha"))
    # the incoming request patches the stored one: its imp (a stored imp reference) replaces the imp array
    incoming = {
        "ext": {"prebid": {"storedrequest": {"id": "sr1"}}},
        "site": {"page": None, "id": "site-9"},
        "imp": [{"id": "imp-1", "ext": {"prebid": {"storedrequest": {"id": "si1"}}}}],
    }
    response = await post(client, incoming)
    assert response.status == 200, await response.text()
    data = await response.json()
    assert data["id"] != "{{UUID}}" and len(data["id"]) == 36
    sent = bidders.received["alpha"][0]
    assert sent["site"]["id"] == "site-9" and "page" not in sent["site"]
    assert sent["imp"][0]["banner"] == {"w": 728, "h": 90} and sent["imp"][0]["ext"]["bidder"] == {"from": "stored"}
    assert seat_bids(data)["alpha"][0]["ext"]["prebid"]["targeting"]["hb_pb"] == "3.00"  # low granularity
    assert "a=77&" in seat_bids(data)["alpha"][0]["ext"]["prebid"]["events"]["win"]


async def test_buyeruid_from_cookie_and_request_and_25_conversion(make_client, bidders):
    bidders.bids["alpha"] = []
    client = await make_client(bidder_config(bidders, "alpha", "beta", beta={"openrtb_version": "2.6"}))
    cookie = UidsCookie()
    # aliases without sync endpoints of their own read the core bidder's syncer key
    cookie.set_uid("generic", "cookie-uid", datetime.now(UTC))
    body = auction_request(banner_imp("imp-1", alpha={}, beta={}))
    body["user"] = {"ext": {"consent": "", "prebid": {"buyeruids": {"BETA": "explicit-uid"}}}}
    body["regs"] = {"ext": {"us_privacy": "1NNN"}}
    response = await post(client, body, headers={"Cookie": f"uids={encode_cookie(cookie)}"})
    assert response.status == 200
    alpha = bidders.received["alpha"][0]
    beta = bidders.received["beta"][0]
    assert alpha["user"]["buyeruid"] == "cookie-uid" and "prebid" not in alpha["user"].get("ext", {})
    assert beta["user"]["buyeruid"] == "explicit-uid"
    # 2.5 bidder: ext places; 2.6 bidder: top-level places
    assert alpha["regs"] == {"ext": {"us_privacy": "1NNN"}} and beta["regs"] == {"us_privacy": "1NNN"}
    assert bidders.headers["beta"][0]["X-Openrtb-Version"] == "2.6"


async def test_gdpr_without_consent_calls_no_bidder(make_client, bidders):
    """PBS-Go: purpose 2 is enforced by default, and an empty consent gives it no legal basis
    (the full rule table is tests/auction/test_auction_privacy.py)."""
    bidders.bids["alpha"] = []
    client = await make_client(bidder_config(bidders, "alpha", alpha={"gvl_vendor_id": 32}))
    body = auction_request()
    body["regs"] = {"gdpr": 1}
    body["user"] = {"id": "u1", "buyeruid": "b1", "eids": [{"source": "x", "uids": [{"id": "1"}]}]}
    response = await post(client, body)
    assert response.status == 200
    assert "alpha" not in bidders.received
    warnings = (await response.json())["ext"]["warnings"]["alpha"]
    assert warnings == [{"code": 10017, "message": 'bidder "alpha" blocked by privacy settings'}]


async def test_currency_adjustment_and_bid_validation(make_client, bidders):
    bidders.bids["alpha"] = [
        bid("imp-1", 2.0, "good"),
        bid("imp-1", 5.0, "nocrid", crid=""),
        bid("imp-9", 5.0, "wrongimp"),
        bid("imp-1", 0, "zero"),
    ]
    bidders.currency["alpha"] = "EUR"
    client = await make_client(bidder_config(bidders, "alpha"))
    body = auction_request(cur=["USD"])
    body["ext"]["prebid"]["currency"] = {"rates": {"EUR": {"USD": 1.5}}}
    body["ext"]["prebid"]["bidadjustmentfactors"] = {"alpha": 0.5}
    data = await (await post(client, body)).json()
    bids = seat_bids(data)["alpha"]
    assert [b["id"] for b in bids] == ["good"]
    assert bids[0]["price"] == pytest.approx(1.5) and bids[0]["ext"]["origbidcur"] == "EUR"
    messages = [e["message"] for e in data["ext"]["errors"]["alpha"]]
    assert 'Bid "nocrid" missing creative ID' in messages
    assert any("wrongimp" in m for m in messages)
    # no rate at all: the bidder's bids are dropped with PBS-Go's text
    body["ext"]["prebid"]["currency"] = {"rates": {}}
    data = await (await post(client, body)).json()
    assert "seatbid" not in data
    assert data["ext"]["errors"]["alpha"] == [
        {"code": 999, "message": "Currency conversion rate not found: 'EUR' => 'USD'"}
    ]


async def test_bidder_errors_by_code(make_client, bidders):
    bidders.status["alpha"] = 500
    client = await make_client(bidder_config(bidders, "alpha", "beta"))
    bidders.status["beta"] = 400
    body = auction_request(banner_imp("imp-1", alpha={}, beta={}))
    data = await (await post(client, body)).json()
    assert data["ext"]["errors"]["alpha"][0]["code"] == 3
    assert data["ext"]["errors"]["alpha"][0]["message"].startswith("Server responded with failure status: 500")
    assert data["ext"]["errors"]["beta"][0]["code"] == 3


async def test_debug_httpcalls_and_account_switch(make_client, bidders, data_dir: Path):
    from tests.conftest import write_account

    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    write_account(data_dir, "nodebug", {"debug_allow": False})
    client = await make_client(bidder_config(bidders, "alpha"))
    body = auction_request(test=1)
    data = await (await post(client, body)).json()
    calls = data["ext"]["debug"]["httpcalls"]["alpha"]
    assert calls[0]["uri"] == bidders.url("alpha") and calls[0]["status"] == 200
    assert data["ext"]["debug"]["resolvedrequest"]["id"] == "req-1"
    body["site"]["publisher"]["id"] = "nodebug"
    data = await (await post(client, body)).json()
    assert "debug" not in data["ext"]
    assert {"code": 10002, "message": "debug turned off for account"} in data["ext"]["warnings"]["general"]


async def test_account_activity_controls_reach_the_bidders(make_client, bidders, data_dir: Path):
    from tests.conftest import write_account

    bidders.bids["alpha"] = [bid("imp-1", 1.0, "a1")]
    bidders.bids["beta"] = [bid("imp-1", 2.0, "b1")]
    deny = {"rules": [{"condition": {"componentType": ["bidder"], "componentName": ["beta"]}, "allow": False}]}
    deny_alpha = {"rules": [{"condition": {"componentName": ["alpha"]}, "allow": False}]}
    write_account(data_dir, "1001", {"privacy": {"allowactivities": {"fetchBids": deny, "transmitUfpd": deny_alpha}}})
    client = await make_client(bidder_config(bidders, "alpha", "beta"))
    body = auction_request(banner_imp("imp-1", alpha={"p": 1}, beta={"p": 2}))
    body["user"] = {"id": "u1", "buyeruid": "b1", "yob": 1980}
    body["device"]["ifa"] = "ifa-1"
    response = await post(client, body)
    assert response.status == 200, await response.text()
    data = await response.json()
    assert list(seat_bids(data)) == ["alpha"] and "beta" not in bidders.received  # never called
    assert data["ext"]["warnings"]["beta"] == [{"code": 10017, "message": 'bidder "beta" blocked by privacy settings'}]
    assert "beta" not in data["ext"]["responsetimemillis"]
    sent = bidders.received["alpha"][0]
    assert "user" not in sent or not {"id", "buyeruid", "yob"} & set(sent["user"])
    assert "ifa" not in sent["device"] and sent["device"]["ip"] == "203.0.113.77"  # only user FPD denied
    # another account (defaults: no controls) gets both bidders, unscrubbed
    body["site"]["publisher"]["id"] = "2002"
    data = await (await post(client, body)).json()
    assert sorted(seat_bids(data)) == ["alpha", "beta"] and "warnings" not in data["ext"]
    assert bidders.received["alpha"][1]["user"]["id"] == "u1"


@pytest.mark.parametrize(
    ("settings", "status", "text"),
    [
        ({"disabled": True}, 503, "has disabled Account ID: blocked"),
        ("{not json", 500, "is malformed"),
    ],
    ids=["disabled", "malformed"],
)
async def test_refused_account_is_refused_again_from_the_cache(
    make_client, bidders, data_dir: Path, settings, status, text
):
    """The second request finds the refusal in the account cache: same answer, not a 500 crash."""
    from tests.conftest import write_account

    write_account(data_dir, "blocked", settings)
    client = await make_client(bidder_config(bidders, "alpha"))
    body = auction_request()
    body["site"]["publisher"]["id"] = "blocked"
    answers = []
    for _ in range(2):
        response = await post(client, body)
        answers.append((response.status, await response.text()))
    assert answers[0] == answers[1], answers
    assert answers[0][0] == status and text in answers[0][1]
    assert "Internal server error" not in answers[1][1]


async def test_stored_auction_response_needs_no_bidder(make_client, bidders, data_dir: Path):
    stored = [
        {
            "bid": [
                {
                    "id": "bid_id",
                    "price": 5.0,
                    "ext": {"prebid": {"type": "video", "targeting": {"hb_pb": "1.20", "hb_cat": "IAB-20"}}},
                }
            ],
            "seat": "alpha",
        }
    ]
    (data_dir / "stored_responses" / "6d718149.json").write_text(json.dumps(stored))
    client = await make_client(bidder_config(bidders, "alpha"))
    imp = banner_imp()
    imp["ext"]["prebid"]["storedauctionresponse"] = {"id": "6d718149"}
    data = await (await post(client, auction_request(imp))).json()
    assert "alpha" not in bidders.received
    targeting = seat_bids(data)["alpha"][0]["ext"]["prebid"]["targeting"]
    assert targeting["hb_pb"] == "5.00" and "hb_cat" not in targeting


async def test_legacy_imp_ext_bidder_and_request_alias(make_client, bidders):
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    client = await make_client(bidder_config(bidders, "alpha"))
    imp = {"id": "imp-1", "banner": {"w": 300, "h": 250}, "ext": {"myalias": {"x": 1}, "gpid": "/slot"}}
    body = auction_request(imp)
    body["ext"]["prebid"]["aliases"] = {"myalias": "alpha"}
    data = await (await post(client, body)).json()
    seat = seat_bids(data)["myalias"][0]
    assert seat["ext"]["prebid"]["targeting"]["hb_bidder"] == "myalias"
    assert bidders.received["alpha"][0]["imp"][0]["ext"] == {"bidder": {"x": 1}, "gpid": "/slot", "tid": ANY}


async def test_cors_and_metrics(make_client, bidders):
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    client = await make_client(bidder_config(bidders, "alpha"))
    response = await post(client, auction_request(), headers={"Origin": "http://page.test"})
    assert response.headers["Access-Control-Allow-Origin"] == "http://page.test"
    assert response.headers["Access-Control-Allow-Credentials"] == "true"
    refused = auction_request(app={"id": "app-1"})
    refused.pop("site")
    refused.pop("id")
    assert (await post(client, refused)).status == 400
    text = await (await client.get("/metrics")).text()
    assert 'hbserver_requests{request_status="ok",request_type="openrtb2-web"} 1.0' in text
    assert 'hbserver_requests{request_status="badinput",request_type="openrtb2-app"} 1.0' in text
    assert 'hbserver_adapter_requests{adapter="alpha",cookie="no",has_bids="true"} 1.0' in text
    assert 'hbserver_adapter_request_time_seconds_count{adapter="alpha"} 1.0' in text


def test_cookie_helper_round_trip():
    cookie = UidsCookie()
    assert base64.urlsafe_b64decode(encode_cookie(cookie)) == b"{}"


async def test_invalid_us_privacy_is_a_warning(make_client, bidders):
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    client = await make_client(bidder_config(bidders, "alpha"))
    body = auction_request(regs={"ext": {"us_privacy": "invalid"}})
    data = await (await post(client, body)).json()
    assert data["ext"]["warnings"]["general"] == [{
        "code": 10001,
        "message": "CCPA consent is invalid and will be ignored. "
        "(request.regs.ext.us_privacy must contain 4 characters)",
    }]
    assert "us_privacy" not in (bidders.received["alpha"][0].get("regs") or {}).get("ext", {})
    assert "alpha" in seat_bids(data)


async def test_tmax_limits_and_coppa(make_client, bidders):
    bidders.bids["alpha"] = []
    client = await make_client(bidder_config(bidders, "alpha"), auction_timeouts_ms={"default": 300, "max": 600})
    for tmax, expected in ((0, 300), (None, 300), (5000, 600), (450, 450)):
        body = auction_request(tmax=tmax, regs={"coppa": 1}, user={"yob": 1990, "id": "u"})
        if tmax is None:
            body.pop("tmax")
        data = await (await post(client, body)).json()
        assert data["ext"]["tmaxrequest"] == expected
        sent = bidders.received["alpha"][-1]
        assert sent["tmax"] <= expected - 10 and "yob" not in sent["user"] and "id" not in sent["user"]


async def test_stored_bid_response_is_read_by_the_adapter(make_client, bidders, data_dir: Path):
    native = {"id": "x", "seatbid": [{"seat": "alpha", "bid": [bid("other-imp", 4.0, "stored-bid")]}], "cur": "USD"}
    (data_dir / "stored_responses" / "sbr1.json").write_text(json.dumps(native))
    client = await make_client(bidder_config(bidders, "alpha"))
    imp = banner_imp()
    imp["ext"]["prebid"]["storedbidresponse"] = [{"bidder": "alpha", "id": "sbr1"}]
    data = await (await post(client, auction_request(imp))).json()
    assert "alpha" not in bidders.received  # the bidder is not called
    stored = seat_bids(data)["alpha"][0]
    assert stored["id"] == "stored-bid" and stored["impid"] == "imp-1"  # replaceimpid defaults to true
    imp["ext"]["prebid"]["storedbidresponse"] = [{"bidder": "zeta", "id": "sbr1"}]
    response = await post(client, auction_request(imp))
    assert response.status == 400 and "Bidders specified in imp.ext should match" in await response.text()


VAST_INLINE = '<VAST version="3.0"><Ad><InLine></InLine></Ad></VAST>'
TRACKER = "<Impression><![CDATA[http://pbs.example/event?t=imp&b=v1&a=1001&ts=1000&bidder=alpha&f=b]]></Impression>"
NURL_WRAPPER = (
    '<VAST version="3.0"><Ad><Wrapper><AdSystem>prebid.org wrapper</AdSystem>'
    "<VASTAdTagURI><![CDATA[https://win.example/n?x=1]]></VASTAdTagURI><Impression></Impression>"
    "<Creatives></Creatives></Wrapper></Ad></VAST>"
)


# (bid fields, alpha's adapter keys, account settings, the VAST the bid carries and the cache holds)
VIDEO_CASES = [
    pytest.param({"adm": VAST_INLINE}, {}, None,
                 VAST_INLINE.replace("</InLine>", TRACKER + "</InLine>"), id="tracker-inserted"),
    pytest.param({"adm": "", "nurl": "https://win.example/n?x=1"}, {}, None,
                 NURL_WRAPPER.replace("<Impression></Impression>", "<Impression></Impression>" + TRACKER),
                 id="nurl-wrapper-tracked"),
    pytest.param({"adm": VAST_INLINE}, {"modifying_vast_xml_allowed": False}, None, VAST_INLINE,
                 id="bidder-refuses"),
    pytest.param({"adm": VAST_INLINE}, {}, {"events": {"enabled": False}}, VAST_INLINE, id="events-off"),
    pytest.param({"adm": "<VAST><Ad></Ad></VAST>"}, {}, None, "<VAST><Ad></Ad></VAST>", id="no-inline-or-wrapper"),
]  # fmt: skip


@pytest.mark.parametrize(("fields", "adapter", "account", "expected"), VIDEO_CASES)
async def test_video_vast_is_tracked_and_cached_with_hb_uuid(
    make_client, bidders, data_dir: Path, fields, adapter, account, expected
):
    from tests.conftest import write_account

    if account is not None:
        write_account(data_dir, "1001", account)
    bidders.bids["alpha"] = [bid("vid", 2.5, "v1", mtype=2, w=640, h=480, **fields)]
    client = await make_client(bidder_config(bidders, "alpha", alpha=adapter))
    imp = {"id": "vid", "video": {"mimes": ["video/mp4"], "w": 640, "h": 480},
           "ext": {"prebid": {"bidder": {"alpha": {}}}}}
    body = auction_request(imp)
    body["ext"]["prebid"]["cache"] = {"bids": {}, "vastxml": {}}
    body["ext"]["prebid"]["auctiontimestamp"] = 1000
    data = await (await post(client, body)).json()
    video = seat_bids(data)["alpha"][0]
    targeting = video["ext"]["prebid"]["targeting"]
    assert video["ext"]["prebid"]["type"] == "video"
    assert "events" not in video["ext"]["prebid"]  # a video bid's tracking is in its VAST
    assert targeting["hb_uuid"] != targeting["hb_cache_id"]
    xml = await client.get("/cache", params={"uuid": targeting["hb_uuid"]})
    assert xml.headers["Content-Type"] == "application/xml" and await xml.text() == expected
    assert video["ext"]["prebid"]["cache"]["vastXml"]["cacheId"] == targeting["hb_uuid"]
    if fields["adm"]:
        assert video["adm"] == expected  # the response carries the same VAST
    cached = await (await client.get("/cache", params={"uuid": targeting["hb_cache_id"]})).json()
    assert "wurl" not in cached


async def test_prebidjs_vasttrack_replay_counts_the_impression_once(make_client, bidders):
    """Prebid.js ``cache.vasttrack`` after a server-side auction: it posts the bid's VAST (which the auction
    already tracked) to /vtrack; stored unchanged, one tracker. Another VAST still gets exactly one."""
    bidders.bids["alpha"] = [bid("vid", 2.5, "v1", mtype=2, w=640, h=480, adm=VAST_INLINE)]
    client = await make_client(bidder_config(bidders, "alpha"))
    imp = {"id": "vid", "video": {"mimes": ["video/mp4"], "w": 640, "h": 480},
           "ext": {"prebid": {"bidder": {"alpha": {}}}}}
    body = auction_request(imp)
    body["ext"]["prebid"]["auctiontimestamp"] = 1000
    body["ext"]["prebid"]["events"] = {}
    video = seat_bids(await (await post(client, body)).json())["alpha"][0]
    assert video["adm"].count("/event?t=imp") == 1
    # what Prebid.js's videoCache.store sends for cache.vasttrack (toStorageRequest + vasttrack fields)
    puts = [
        {"type": "xml", "value": video["adm"], "ttlseconds": 300, "bidid": "prebidjs-bid-1", "bidder": "alpha",
         "aid": "auction-1", "timestamp": 1000},
        {"type": "xml", "value": VAST_INLINE, "ttlseconds": 300, "bidid": "client-bid-2", "bidder": "alpha",
         "aid": "auction-1", "timestamp": 1000},
    ]
    answer = await client.post("/vtrack?a=1001", data=json.dumps({"puts": puts}))
    assert answer.status == 200
    first, second = (await answer.json())["responses"]
    stored_first = await (await client.get("/cache", params={"uuid": first["uuid"]})).text()
    stored_second = await (await client.get("/cache", params={"uuid": second["uuid"]})).text()
    assert stored_first == video["adm"]
    assert stored_second.count("/event?t=imp") == 1 and "b=client-bid-2" in stored_second


@pytest.mark.parametrize("events", [True, False], ids=["events-on", "events-off"])
async def test_cached_banner_json_carries_the_win_url(make_client, bidders, data_dir: Path, events):
    from tests.conftest import write_account

    write_account(data_dir, "1001", {"events": {"enabled": events}})
    bidders.bids["alpha"] = [bid("imp-1", 1.5, "b 1")]
    client = await make_client(bidder_config(bidders, "alpha"))
    body = auction_request()
    body["ext"]["prebid"]["auctiontimestamp"] = 1000
    body["ext"]["prebid"]["integration"] = "pbjs"
    data = await (await post(client, body)).json()
    banner = seat_bids(data)["alpha"][0]
    cache_id = banner["ext"]["prebid"]["targeting"]["hb_cache_id"]
    cached = await (await client.get("/cache", params={"uuid": cache_id})).json()
    win = "http://pbs.example/event?t=win&b=b%201&a=1001&bidder=alpha&ts=1000&int=pbjs"
    if events:
        assert banner["ext"]["prebid"]["events"] == {"win": win, "imp": win.replace("t=win", "t=imp")}
        assert cached["wurl"] == win
    else:
        assert "events" not in banner["ext"]["prebid"] and "wurl" not in cached
    assert "wurl" not in banner  # only the cached copy carries it
    assert cached["id"] == "b 1" and cached["price"] == 1.5


async def test_device_fields_from_http_and_analytics_record(make_client, bidders, tmp_path: Path):
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    log_file = tmp_path / "analytics.jsonl"
    client = await make_client(bidder_config(bidders, "alpha"), analytics={"file": {"filename": str(log_file)}})
    body = auction_request(device={}, site={"publisher": {"id": "1001"}, "id": "s1"})
    headers = {"User-Agent": "Mozilla/5.0 test", "X-Forwarded-For": "198.51.100.7, 10.0.0.1", "DNT": "1",
               "Referer": "https://ref.example/page"}
    response = await post(client, body, headers=headers)
    assert response.status == 200
    sent = bidders.received["alpha"][0]
    assert sent["device"] == {"ua": "Mozilla/5.0 test", "ip": "198.51.100.7", "dnt": 1}
    assert sent["site"]["page"] == "https://ref.example/page" and sent["site"]["domain"] == "ref.example"
    assert sent["at"] == 1
    await client.close()  # flushes analytics
    records = [json.loads(line) for line in log_file.read_text().splitlines()]
    auction = [r for r in records if r["event"] == "auction"]
    assert auction and auction[0]["account"] == "1001" and auction[0]["bid_count"] == 1 and auction[0]["status"] == 200


async def test_bidder_cookies_are_never_kept_between_auctions(make_client, bidders):
    """One shared session serves every user: a cookie a bidder sets must not reach the next request."""
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    bidders.set_cookie["alpha"] = "user-A"
    config = bidder_config(bidders, "alpha")
    # a host name, not an IP: aiohttp's default jar ignores cookies from IP addresses
    config["adapters"]["alpha"]["endpoint"] = bidders.url("alpha").replace("127.0.0.1", "localhost")
    client = await make_client(config)
    for _ in range(2):
        assert (await post(client, auction_request())).status == 200
    assert [h.get("Cookie") for h in bidders.headers["alpha"]] == [None, None]


async def test_real_adapter_runs_in_the_exchange_and_bad_params_name_bidder_and_field(make_client, bidders):
    """appnexus (issue 6) behind the auction core: its own request shape, its bid typing, its schema."""
    bidders.bids["appnexus"] = [
        bid("imp-1", 2.0, "an1", mtype=None, ext={"appnexus": {"bid_ad_type": 0, "deal_priority": 5}})
    ]
    client = await make_client({"adapters": {"appnexus": {"endpoint": bidders.url("appnexus")}}})
    body = auction_request(banner_imp("imp-1", appnexus={"placementId": 12883451}))
    response = await post(client, body)
    assert response.status == 200, await response.text()
    data = await response.json()
    an = seat_bids(data)["appnexus"][0]
    assert an["ext"]["prebid"]["type"] == "banner" and an["ext"]["prebid"]["meta"]["adaptercode"] == "appnexus"
    assert an["ext"]["prebid"]["dealpriority"] == 5  # the adapter's DealPriority, as PBS-Go's exchange writes it
    sent = bidders.received["appnexus"][0]
    assert sent["imp"][0]["ext"]["appnexus"]["placement_id"] == 12883451  # appnexus's own wire format
    bad = auction_request(banner_imp("imp-1", appnexus={"placementId": 1.5}))  # integer or string
    response = await post(client, bad)
    text = await response.text()
    assert response.status == 400
    assert text.startswith("Invalid request: request.imp[0].ext.prebid.bidder.appnexus failed validation.\n")
    assert "placementId: Invalid type. Expected: [integer,string], given: number" in text  # gojsonschema's words


@pytest.mark.parametrize(
    ("body", "status", "text"),
    [
        (b"", 400, "Invalid request: request body is empty"),
        (b"{not json", 400, "Invalid request: expect ull"),
        (b"[1]", 400, "Invalid request: expect { or n, but found ["),
    ],
    ids=["empty", "malformed", "not-an-object"],
)
async def test_refused_bodies_are_counted_and_recorded(make_client, bidders, tmp_path: Path, body, status, text):
    log_file = tmp_path / "analytics.jsonl"
    client = await make_client(bidder_config(bidders, "alpha"), analytics={"file": {"filename": str(log_file)}})
    response = await post(client, body)
    assert response.status == status and (await response.text()).startswith(text)
    metrics = await (await client.get("/metrics")).text()
    assert 'hbserver_requests{request_status="badinput",request_type="openrtb2-web"} 1.0' in metrics
    await client.close()  # flushes analytics
    records = [json.loads(line) for line in log_file.read_text().splitlines()]
    assert [(r["event"], r["status"]) for r in records] == [("auction", status)]
    assert records[0]["errors"][0].startswith(text)


# A bidder's own bid.ext.prebid: its other fields stay, its meta gains adaptercode, its targeting
# is replaced by the auction's (or dropped when the bid gets none), type is always the auction's.
@pytest.mark.parametrize(
    ("bidder_ext", "winner", "expected"),
    [
        ({}, True, {"type": "banner", "meta": {"adaptercode": "alpha"}}),
        (
            {"prebid": {"meta": {"networkId": 7}, "targeting": {"stale": "x"}, "type": "video", "dealtier": 3}},
            True,
            {"meta": {"networkId": 7, "adaptercode": "alpha"}, "type": "banner", "dealtier": 3},
        ),
        (
            {"prebid": {"meta": "junk", "targeting": {"stale": "x"}}},
            False,  # no targeting for this bid: the bidder's is dropped
            {"meta": {"adaptercode": "alpha"}, "type": "banner"},
        ),
        ({"prebid": "junk"}, True, {"type": "banner", "meta": {"adaptercode": "alpha"}}),
    ],
)
async def test_bidder_ext_prebid_in_the_response(make_client, bidders, bidder_ext, winner, expected):
    bidders.bids["alpha"] = [bid("imp-1", 1.5, "a1", ext=bidder_ext)]
    client = await make_client(bidder_config(bidders, "alpha"))
    prebid: dict[str, Any] = {"cache": {"bids": {}}}
    if winner:
        prebid["targeting"] = {"pricegranularity": "medium"}
    body = auction_request(banner_imp("imp-1", alpha={"p": 1}), ext={"prebid": prebid})
    response = await post(client, body)
    assert response.status == 200, await response.text()
    ext_prebid = seat_bids(await response.json())["alpha"][0]["ext"]["prebid"]
    targeting = ext_prebid.pop("targeting", None)
    assert (targeting is not None) == winner
    if winner:
        assert targeting["hb_pb_alpha"] == "1.50" and "stale" not in targeting
    ext_prebid.pop("events")  # events are on by default; their URLs are tested above
    ext_prebid.pop("cache", None)
    assert ext_prebid == expected


# What the adapter gives a bid (PBS-Go's BidMeta and BidVideo) is its ext.prebid.meta and .video in the
# response (exchange.go makeBid): the adapter's meta replaces the bidder's own; without one the bidder's stays.
@pytest.mark.parametrize(
    ("bid_ext", "meta"),
    [
        (
            {"dsp_id": "456", "brand_id": "789", "buyer_id": "123", "prebid": {"meta": {"networkName": "own"}}},
            {"advertiserId": 123, "brandId": 789, "networkId": 456, "adaptercode": "openx"},
        ),
        ({"prebid": {"meta": {"networkName": "own"}}}, {"networkName": "own", "adaptercode": "openx"}),
    ],
    ids=["adapter-meta", "bidder-meta"],
)
async def test_adapter_bid_meta_and_video_in_the_response(make_client, bidders, bid_ext, meta):
    bidders.bids["openx"] = [bid("imp-1", 1.5, "o1", ext=bid_ext, cat=["IAB1-1"], dur=15)]
    config = bidder_config(bidders, "alpha")
    config["adapters"]["openx"] = {"endpoint": bidders.url("openx")}
    imp = banner_imp("imp-1", openx={"unit": "123", "delDomain": "pub.openx.net"})
    response = await post(client := await make_client(config), auction_request(imp))
    assert response.status == 200, await response.text()
    ext_prebid = seat_bids(await response.json())["openx"][0]["ext"]["prebid"]
    assert ext_prebid["meta"] == meta
    assert ext_prebid["video"] == {"duration": 15, "primary_category": "IAB1-1"}
    await client.close()


async def test_endpoint_compression_gzips_the_bidder_request(make_client, bidders):
    """A bidder whose definition says ``endpoint_compression: gzip`` (openx) gets a gzipped body;
    one without (a generic alias) gets plain JSON."""
    config = bidder_config(bidders, "alpha")
    config["adapters"]["openx"] = {"endpoint": bidders.url("openx")}
    client = await make_client(config)
    imp = banner_imp("imp-1", alpha={}, openx={"unit": "123", "delDomain": "pub.openx.net"})
    response = await post(client, auction_request(imp))
    assert response.status == 200, await response.text()
    [openx_headers], [alpha_headers] = bidders.headers["openx"], bidders.headers["alpha"]
    assert openx_headers.get("Content-Encoding") == "gzip"
    assert "Content-Encoding" not in alpha_headers
    [sent] = bidders.received["openx"]  # the mock's server decompressed it
    assert sent["imp"][0]["tagid"] == "123"
