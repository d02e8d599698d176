"""Prepared requests: the request-side work an AMP slot repeats on every page view, done once.

An AMP page asks for the same stored request with the same query string over and over. What the
auction does with it before the bidders are called — the stored request parsed and checked, the
query applied, the type check, the 2.6 upconversion, PBS-Go's validation and the CCPA check —
depends only on the stored request, the query and the ``Origin`` header, not on who is asking. A
:class:`PreparedRequest` keeps the result; each auction gets its own copy of it (parsed from
bytes, so nothing is shared), with the fields that come from the HTTP request (user agent, IP,
DNT, referer) filled per auction.

Filling the HTTP fields after validation instead of before gives the same answer only when
filling cannot change what validation sees: :func:`http_fields_settled` says when. Requests that
must take the full path every time: debug requests (their ``resolvedrequest`` shows every step),
stored responses, and anything :func:`http_fields_settled` rejects. Privacy enforcement,
activity controls, tids, buyeruids and everything after the split run per auction as before,
unless a call plan (:mod:`hbserver.auction.exchange.callplan`) has them done once too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from hbserver.auction.common.messages import Message
from hbserver.auction.exchange.callplan import PlanTable
from hbserver.auction.request.stored import refers_to_stored_responses
from hbserver.auction.request.validate import ResolvedBidder, Validated
from hbserver.uuids import new_uuid

PREPARED_AMP_ENTRIES = 2048  # (query string, Origin) pairs kept per worker; least recently used go first
PREPARED_AMP_SEEN = 8192  # keys met once, remembered (as hashes) so the second visit prepares


@dataclass(frozen=True, slots=True)
class PreparedRequest:
    """A request as validation left it, ready to be copied for each auction."""

    blob: bytes  # orjson of [request, imp_bidders]
    bidders: Mapping[str, ResolvedBidder]
    aliases: Mapping[str, str]
    warnings: tuple[Message, ...]
    bidder_warnings: Mapping[str, tuple[Message, ...]]
    fresh_id: bool  # the stored id was {{UUID}}: every auction gets a new one
    account_id: str  # whose settings its auctions use (the request's publisher, fixed here)
    imp_bidders: list[dict[str, Any]]  # read-only: shared by the auctions a call plan serves
    uid_keys: tuple[str, ...]  # its bidders' syncer keys: the cookie uids a call plan splices in
    plans: PlanTable = field(default_factory=PlanTable)  # hbserver.auction.exchange.callplan

    @classmethod
    def of(cls, validated: Validated, fresh_id: bool, account_id: str) -> PreparedRequest | None:
        """The prepared form of ``validated``; None when its request is not plain JSON."""
        try:
            blob = orjson.dumps([validated.request, validated.imp_bidders])
        except TypeError:
            return None
        uid_keys = tuple(dict.fromkeys(r.bidder.sync_key for r in validated.bidders.values() if r.bidder.sync_key))
        return cls(
            blob,
            dict(validated.bidders),
            dict(validated.aliases),
            tuple(validated.warnings),
            {name: tuple(items) for name, items in validated.bidder_warnings.items()},
            fresh_id,
            account_id,
            orjson.loads(orjson.dumps(validated.imp_bidders)),
            uid_keys,
        )

    def shared(self, request: dict[str, Any]) -> Validated:
        """The validation result around ``request`` for an auction a call plan serves: the bidders and
        imps are this object's own (read-only), the warning lists the auction's."""
        return Validated(
            self.imp_bidders,
            self.bidders,  # type: ignore[arg-type]  # read-only Mapping
            self.aliases,  # type: ignore[arg-type]
            list(self.warnings),
            {name: list(items) for name, items in self.bidder_warnings.items()},
            request,
        )

    def instantiate(self) -> Validated:
        """A fresh copy for one auction (its ``request`` and ``imp_bidders`` are its own)."""
        request, imp_bidders = orjson.loads(self.blob)
        if self.fresh_id:
            request["id"] = new_uuid()
        return Validated(
            imp_bidders,
            dict(self.bidders),
            dict(self.aliases),
            list(self.warnings),
            {name: list(items) for name, items in self.bidder_warnings.items()},
            request,
        )


def http_fields_settled(request: Mapping[str, Any]) -> bool:
    """Whether filling the HTTP fields (``device.ua/ip/ipv6/dnt``, ``site.page`` from the referer)
    after validation gives the same answer as before it.

    It does when the site has a page (the referer is then never used, and the site rule "an id or a
    page" holds either way) and ``device.ua``/``ip``/``ipv6`` are absent or strings: a wrong-typed
    value that is falsy (``0``, ``false``, ``[]``) would be replaced by the HTTP value before the
    type check on the full path, and refused here.
    """
    site = request.get("site")
    if not isinstance(site, dict):
        return False
    page = site.get("page")
    if not isinstance(page, str) or not page:
        return False
    device = request.get("device")
    if device is None:
        return True
    if not isinstance(device, dict):
        return False
    return all(isinstance(device.get(key, ""), str) for key in ("ua", "ip", "ipv6"))


def preparable(request: Mapping[str, Any]) -> bool:
    """Whether an AMP request may be prepared once: not a debug request (``test: 1`` or
    ``ext.prebid.debug``), no stored responses, and :func:`http_fields_settled`."""
    if request.get("test") == 1 or not http_fields_settled(request):
        return False
    ext = request.get("ext")
    prebid = ext.get("prebid") if isinstance(ext, dict) else None
    if isinstance(prebid, dict) and prebid.get("debug") is True:
        return False
    return isinstance(request.get("imp"), list) and not refers_to_stored_responses(request)
