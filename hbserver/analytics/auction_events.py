"""PBS-Java's account ``analytics.auction_events``: event URLs by the request's channel.

PBS-Java (``BidResponseCreator.eventsEnabledForChannel``) adds event URLs to a request without
``ext.prebid.events`` only when the account's map says ``true`` for the request's channel
(``ext.prebid.channel.name``, ``pbjs`` read as ``web``, names compared ignoring case); a channel
not in the map, or no channel, gets none. hbserver applies it only when the account sets the map.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def channel_allows_events(prebid: Mapping[str, Any], auction_events: Mapping[str, Any]) -> bool:
    channel = prebid.get("channel")
    name = channel.get("name") if isinstance(channel, dict) else None
    if not isinstance(name, str):
        return False
    name = name.lower()
    if name == "pbjs":
        name = "web"
    for key, allowed in auction_events.items():
        key = key.lower()
        if (key == "pbjs" and name == "web") or key == name:
            return allowed is True
    return False
