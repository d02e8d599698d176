"""The event URLs of one auction (PBS-Go ``exchange/events.go``; reference pbs-events-vtrack-cache §1.6).

With events on (the account's ``events.enabled`` or the request's ``ext.prebid.events``):

- a non-video bid gets ``bid.ext.prebid.events`` = ``{"win": …, "imp": …}`` with
  ``t=win|imp&b=<bid id>&a=<account>&bidder=<seat>&ts=<auction timestamp>[&int=<integration>]``,
  and its cached JSON also carries the win URL as ``wurl``;
- a video bid whose bidder allows VAST modification gets an impression tracker inserted into its
  VAST (``adm``, or the nurl wrapper when there is none), the same URL /vtrack inserts (``f=b``).
"""

from __future__ import annotations

from hbserver.vast import tracking_url
from hbserver.web.urls import url_value


class EventUrls:
    """Builds the URLs; everything after the bid id is the same for all bids of one seat."""

    __slots__ = ("_account", "_after_seat", "_before_seat", "_external_url", "_imp", "_integration", "_tails",
                 "_timestamp", "_win")

    def __init__(self, external_url: str, account: str, timestamp: int, integration: str) -> None:
        self._external_url = external_url
        self._account = account
        self._timestamp = timestamp
        self._integration = integration
        self._win = f"{external_url}/event?t=win&b="
        self._imp = f"{external_url}/event?t=imp&b="
        self._before_seat = f"&a={url_value(account)}&bidder="
        self._after_seat = f"&ts={timestamp}" + (f"&int={url_value(integration)}" if integration else "")
        self._tails: dict[str, str] = {}

    def _tail(self, seat: str) -> str:
        tail = self._tails.get(seat)
        if tail is None:
            tail = self._tails[seat] = self._before_seat + url_value(seat) + self._after_seat
        return tail

    def for_bid(self, bid_id: str, seat: str) -> dict[str, str]:
        """``bid.ext.prebid.events``; its ``win`` is also the cached bid's ``wurl``."""
        middle = url_value(bid_id) + (self._tails.get(seat) or self._tail(seat))
        return {"win": self._win + middle, "imp": self._imp + middle}

    def vast_tracker(self, bid_id: str, seat: str) -> str:
        """The impression URL inserted into a video bid's VAST."""
        return tracking_url(
            self._external_url, bid_id, self._account, seat, None, str(self._timestamp), self._integration or None
        )
