"""ext.prebid.cache options (returnCreative, ttlseconds, winningonly) and ext.prebid.passthrough:
PBS-Go's getExtCacheInstructions and passthrough echo, PBS-Java's ttlseconds and winningonly."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.appkeys import CACHE
from hbserver.auction.response.cache_options import CacheOptions
from tests.auction.helpers import banner_imp, bid, bidder_config
from tests.auction.test_auction_endpoint import auction_request, post, seat_bids


@pytest.mark.parametrize(
    ("cache", "expected"),
    [
        ({"bids": {}}, True),
        ({"bids": {"returnCreative": False}}, False),
        ({"vastxml": {"returnCreative": False}}, False),
        ({"bids": {"returnCreative": True}, "vastxml": {"returnCreative": False}}, True),
        ({"bids": {"returnCreative": False}, "vastxml": {"returnCreative": True}}, True),
        ({"bids": {"returnCreative": False}, "vastxml": {"returnCreative": False}}, False),
        ({"bids": {"returnCreative": False}, "vastxml": {}}, False),
        ({"bids": {}, "vastxml": {"returnCreative": False}}, False),
    ],
    ids=["default", "bids-false", "vast-false", "either-true-1", "either-true-2", "both-false", "bids-only-given",
         "vast-only-given"],
)
def test_return_creative_rule(cache, expected):
    assert CacheOptions.from_request(cache).return_creative is expected


@pytest.mark.parametrize(
    ("cache", "status", "text"),
    [
        # PBS-Go's typed unmarshal refuses wrong types first (json-iterator's texts)
        ({"bids": []}, 400,
         "req.ext is invalid: cannot unmarshal openrtb_ext.ExtRequestPrebidCache.Bids: expect { or n, but found ["),
        ({"bids": {"returnCreative": "no"}}, 400,
         "req.ext is invalid: cannot unmarshal openrtb_ext.ExtRequestPrebidCacheBids.ReturnCreative: "
         'expect t or f, but found "'),
        ({"vastxml": {"ttlseconds": -1}}, 400,
         "request.ext.prebid.cache.vastxml.ttlseconds must be a non-negative integer"),
        ({"bids": {"ttlseconds": "60"}}, 400,
         "request.ext.prebid.cache.bids.ttlseconds must be a non-negative integer"),
        ({"bids": {}, "winningonly": 1}, 400, "request.ext.prebid.cache.winningonly must be a boolean"),
    ],
)
async def test_cache_option_types(make_client, bidders, cache, status, text):
    client = await make_client(bidder_config(bidders, "alpha"))
    body = auction_request(banner_imp())
    body["ext"]["prebid"]["cache"] = cache
    response = await post(client, body)
    assert (response.status, await response.text()) == (status, f"Invalid request: {text}\n")


async def _auction(make_client, bidders, cache: dict[str, Any], **prebid: Any) -> tuple[Any, dict[str, Any]]:
    bidders.bids["alpha"] = [bid("imp-1", 2.0, "a1", adm="<div>a</div>")]
    bidders.bids["beta"] = [bid("imp-1", 1.0, "b1", adm="<div>b</div>")]
    client = await make_client(bidder_config(bidders, "alpha", "beta"))
    body = auction_request(banner_imp("imp-1", alpha={}, beta={}))
    body["ext"]["prebid"]["cache"] = cache
    body["ext"]["prebid"].update(prebid)
    data = await (await post(client, body)).json()
    return client, data


@pytest.mark.parametrize(("return_creative", "adm_kept"), [(None, True), (True, True), (False, False)])
async def test_return_creative_false_drops_adm_but_caches_it(make_client, bidders, return_creative, adm_kept):
    options = {} if return_creative is None else {"returnCreative": return_creative}
    client, data = await _auction(make_client, bidders, {"bids": options})
    alpha = seat_bids(data)["alpha"][0]
    assert ("adm" in alpha) is adm_kept
    cache_id = alpha["ext"]["prebid"]["cache"]["bids"]["cacheId"]
    cached = await (await client.get("/cache", params={"uuid": cache_id})).json()
    assert cached["adm"] == "<div>a</div>"


async def test_winningonly_caches_only_the_winner(make_client, bidders):
    _client, data = await _auction(make_client, bidders, {"bids": {}, "winningonly": True})
    seats = seat_bids(data)
    assert "cache" in seats["alpha"][0]["ext"]["prebid"]
    assert "cache" not in seats["beta"][0]["ext"]["prebid"]
    assert "hb_cache_id_beta" not in seats["beta"][0]["ext"]["prebid"]["targeting"]


@pytest.mark.parametrize(("ttlseconds", "expected"), [(None, 300 + 60), (120, 120), (0, 300 + 60), (99999, 3600)])
async def test_ttlseconds_sets_the_cache_ttl(make_client, bidders, ttlseconds, expected):
    options = {} if ttlseconds is None else {"ttlseconds": ttlseconds}
    seen: list[int] = []
    bidders.bids["alpha"] = [bid("imp-1", 2.0, "a1")]
    client = await make_client(bidder_config(bidders, "alpha"))
    service = client.app[CACHE]
    put_many = service.put_many

    async def recording(items, timeout):
        seen.extend(item.ttl_seconds for item in items)
        return await put_many(items, timeout)

    service.put_many = recording
    body = auction_request(banner_imp())
    body["ext"]["prebid"]["cache"] = {"bids": options}
    assert (await post(client, body)).status == 200
    assert seen == [expected]


async def test_passthrough_is_echoed(make_client, bidders):
    bidders.bids["alpha"] = [bid("imp-1", 2.0, "a1"), bid("imp-2", 1.0, "a2")]
    client = await make_client(bidder_config(bidders, "alpha"))
    first = banner_imp("imp-1")
    first["ext"]["prebid"]["passthrough"] = {"slot": "top", "n": [1]}
    body = auction_request(first, banner_imp("imp-2"))
    body["ext"]["prebid"]["passthrough"] = {"page": "home"}
    data = await (await post(client, body)).json()
    assert data["ext"]["prebid"]["passthrough"] == {"page": "home"}
    by_imp = {b["impid"]: b for b in seat_bids(data)["alpha"]}
    assert by_imp["imp-1"]["ext"]["prebid"]["passthrough"] == {"slot": "top", "n": [1]}
    assert "passthrough" not in by_imp["imp-2"]["ext"]["prebid"]
