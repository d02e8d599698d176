"""Per-adapter credentials from the host's config reach the adapter (PBS-Go's ``adapters.<code>``
keys): audienceNetwork's ``platform_id`` and ``app_secret``, over a real auction to a mock bidder."""

from __future__ import annotations

import hashlib
import hmac

import pytest

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
