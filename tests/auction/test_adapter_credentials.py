"""Per-adapter credentials from the host's config reach the adapter (PBS-Go's ``adapters.<code>``
keys): audienceNetwork's ``platform_id`` and ``app_secret``, over a real auction to a mock bidder."""

from __future__ import annotations

import asyncio
import hashlib
import hmac

import pytest
from aiohttp import web

from hbserver.adapters import audiencenetwork
from hbserver.adapters.base import AdapterConfig, RequestData
from tests.auction.helpers import EXTERNAL
from tests.auction.test_auction_endpoint import post

REQUEST = {
    "id": "req-1",
    "imp": [{"id": "imp-1", "banner": {"format": [{"w": 300, "h": 250}]},
             "ext": {"prebid": {"bidder": {"audienceNetwork": {"publisherId": "123", "placementId": "123_456"}}}}}],
    "app": {"id": "app-abc", "bundle": "com.prebid"},
    "device": {"ip": "152.193.6.74"},
    "user": {"buyeruid": "v4_bidder_token"},
    "ext": {"prebid": {"debug": True}},
}  # fmt: skip


@pytest.mark.parametrize(
    ("settings", "platform", "secret", "error"),
    [
        ({"platform_id": "host-pid", "app_secret": "s3cret"}, "host-pid", "s3cret", None),
        ({"platform_id": "host-pid"}, None, None, "AppSecret is not configured"),
        ({"app_secret": "s3cret"}, None, None, "PartnerID is not configured"),
    ],
    ids=["both", "no-secret", "no-partner-id"],
)
async def test_audience_network_gets_the_hosts_credentials(make_client, bidders, settings, platform, secret, error):
    adapter = {"disabled": False, "endpoint": bidders.url("audienceNetwork"), **settings}
    client = await make_client({"adapters": {"audienceNetwork": adapter}, "external_url": EXTERNAL})
    response = await post(client, REQUEST)
    assert response.status == 200
    answer = await response.json()
    sent = bidders.received.get("audienceNetwork", [])
    if error is None:
        assert len(sent) == 1
        expected_id = hmac.new(secret.encode(), b"imp-1", hashlib.sha256).hexdigest()
        assert sent[0]["ext"] == {"platformid": platform, "authentication_id": expected_id}
    else:
        assert sent == []
        messages = [e["message"] for e in answer["ext"]["errors"]["audienceNetwork"]]
        assert any(error in message for message in messages), messages


# PBS-Go TestMakeTimeoutNoticeApp / TestMakeTimeoutNoticeBadRequest, and a body without app.publisher.id.
@pytest.mark.parametrize(
    ("body", "uri"),
    [
        (b'{"id":"1234","imp":[{"id":"1234"}],"app":{"publisher":{"id":"5678"}}}',
         "https://www.facebook.com/audiencenetwork/nurl/?partner=test-platform-id&app=5678&auction=1234&ortb_loss_code=2"),
        (b'{"imp":[{{"id":"1234"}}', None),
        (b'{"id":"1234","imp":[{"id":"1234"}],"app":{"id":"a"}}', None),
        (b'{"id":1234,"app":{"publisher":{"id":"5678"}}}', None),
    ],
    ids=["app", "bad-body", "no-publisher", "id-not-a-string"],
)
def test_audience_network_timeout_notification(body, uri):
    adapter = audiencenetwork.build(
        AdapterConfig("audienceNetwork", "https://an.facebook.com/placementbid.ortb",
                      {"platform_id": "test-platform-id", "app_secret": "test-app-secret"})
    )  # fmt: skip
    notice = adapter.make_timeout_notification(RequestData("POST", "https://an.facebook.com/x", body))
    assert (notice.uri if notice is not None else None) == uri
    if notice is not None:
        assert (notice.method, notice.body) == ("GET", None)


@pytest.mark.parametrize(("status", "result"), [(200, "ok"), (500, "failed")])
async def test_a_timed_out_call_is_followed_by_its_notification(
    make_client, bidders, aiohttp_server, monkeypatch, status, result
):
    """The exchange sends what the adapter makes for a call that timed out (PBS-Go's TimeoutBidder), in the
    background with the call's headers, and counts it in timeout_notification{success}."""
    notices: list[tuple[str, dict[str, str]]] = []

    async def nurl(request: web.Request) -> web.Response:
        notices.append((request.query_string, dict(request.headers)))
        return web.Response(status=status)

    app = web.Application()
    app.router.add_get("/nurl/", nurl)
    receiver = await aiohttp_server(app)
    monkeypatch.setattr(audiencenetwork, "TIMEOUT_NOTIFICATION_URL", str(receiver.make_url("/nurl/")))
    bidders.delay["audienceNetwork"] = 1.0
    adapter = {"disabled": False, "endpoint": bidders.url("audienceNetwork"), "platform_id": "pid", "app_secret": "s"}
    client = await make_client({"adapters": {"audienceNetwork": adapter}, "external_url": EXTERNAL})
    request = {**REQUEST, "tmax": 200}
    response = await post(client, request)
    assert response.status == 200
    errors = (await response.json())["ext"]["errors"]["audienceNetwork"]
    assert [e["code"] for e in errors] == [1]  # the call's timeout
    for _ in range(100):
        if notices:
            break
        await asyncio.sleep(0.02)
    [(query, headers)] = notices
    # the call's app.publisher.id is the imp's publisherId param, its id the imp's
    assert query == "partner=pid&app=123&auction=imp-1&ortb_loss_code=2"
    assert headers.get("X-Fb-Pool-Routing-Token") == "v4_bidder_token"  # the timed-out call's headers
    line = f'hbserver_timeout_notification{{success="{result}"}} 1.0'
    for _ in range(100):
        if line in await (await client.get("/metrics")).text():
            break
        await asyncio.sleep(0.05)
    assert line in await (await client.get("/metrics")).text()
