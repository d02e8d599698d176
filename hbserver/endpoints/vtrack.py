"""POST /vtrack: VAST from client-side bidders gets an impression tracker, then is cached.

Spec §4.2 with DECISIONS "/vtrack": PBS-Java's validation texts and insertion algorithm
(:mod:`hbserver.vast`); the document is never re-serialised. Stricter than PBS's "contains ``<vast``":
the root element must be VAST (after an XML declaration, comments, processing instructions), and a
document type declaration is refused, so no other kind of document (XHTML, SVG) is stored this way.
A VAST is modified only when the bidder allows it (``modifying_vast_xml_allowed``; unknown bidders
do) and the account's events are enabled; otherwise it is stored as given.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import web

from hbserver.analytics import Analytics
from hbserver.analytics.records import vtrack_record
from hbserver.bidders.registry import Registry
from hbserver.endpoints.cache import responses_body
from hbserver.events import integration_problem
from hbserver.metrics import Metrics
from hbserver.numbers import INT32, IntRange, NumberError, check_int, parse_int
from hbserver.stores.accounts import AccountError, AccountStore
from hbserver.stores.cache.base import CacheItem, CacheStoreError
from hbserver.stores.cache.service import CacheService
from hbserver.vast import DOCTYPE, carries_impression, insert_impression, tracking_url, vast_root_refusal
from hbserver.web.body import loads_json, read_body
from hbserver.web.errors import HttpError, text_response
from hbserver.web.response import FastResponse

log = logging.getLogger("hbserver.vtrack")

CACHE_TIMEOUT_SECONDS = 2.0  # PBS's vtrack deadline
VTRACK_STATUSES = (200, 400, 401, 403, 413, 500, 503, 504)
NOT_VAST_TEXT = "vtrack content must be vast"  # PBS-Java's text
DOCTYPE_TEXT = "vtrack content must be vast: document type declarations are not accepted"


def _bad(message: str) -> HttpError:
    return HttpError(400, message)


@dataclass(frozen=True, slots=True)
class VtrackPut:
    bidid: str
    bidder: str
    value: str
    ttl_seconds: int | None
    aid: str | None
    timestamp: str | None


def _optional_text(value: Any) -> str | None:
    """A string or a JSON number as text (the spec's samples use numbers); else None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        return value or None
    if isinstance(value, int | float):
        return str(int(value)) if float(value).is_integer() else str(value)
    return None


def _integer(put: dict[str, Any], name: str, index: int, bounds: IntRange) -> int | None:
    """An integer field of a put (PBS-Java: Jackson reads a JSON integer or a string of one into
    ``Integer``/``Long``); None when absent; 400 naming the field otherwise."""
    value = put.get(name)
    try:
        if value is None:
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            return check_int(value, bounds)
        if isinstance(value, str):
            return parse_int(value.strip(), bounds)
    except NumberError:
        pass
    raise _bad(f"Failed to parse request body: puts[{index}].{name} must be an integer "
               f"from {bounds.low} to {bounds.high}")


def _put_ttl(own: int | None, account_ttl: int) -> int | None:
    """PBS-Java's ``resolveVtrackTtl``: the smaller of the put's and the account's ``vtrack.ttl``, each
    counted only when positive; None (the cache's default) when neither is."""
    own = own if own is not None and own > 0 else None
    if account_ttl > 0:
        return account_ttl if own is None else min(own, account_ttl)
    return own


def parse_vtrack_body(body: bytes, max_puts: int) -> list[VtrackPut]:
    """The puts of a /vtrack body; raises HttpError (400) with PBS-Java's text for the first problem."""
    if not body.strip():
        raise _bad("Incoming request has no body")
    try:
        data = loads_json(body)
    except orjson.JSONDecodeError:  # JsonTooDeep included
        raise _bad("Failed to parse request body") from None
    if not isinstance(data, dict):
        raise _bad("Failed to parse request body")
    puts = data.get("puts") or []
    if not isinstance(puts, list) or not all(isinstance(p, dict) for p in puts):
        raise _bad("Failed to parse request body")
    if len(puts) > max_puts:
        raise _bad(f"More keys than allowed: {max_puts}")
    parsed = []
    for index, put in enumerate(puts):
        bidid, bidder = put.get("bidid"), put.get("bidder")
        if not isinstance(bidid, str) or not bidid:
            raise _bad("'bidid' is required field and can't be empty")
        if not isinstance(bidder, str) or not bidder:
            raise _bad("'bidder' is required field and can't be empty")
        if put.get("type") != "xml":
            raise _bad("vtrack only accepts type xml")
        value = put.get("value")
        if not isinstance(value, str):
            raise _bad(NOT_VAST_TEXT)
        refusal = vast_root_refusal(value)
        if refusal is not None:
            raise _bad(DOCTYPE_TEXT if refusal == DOCTYPE else NOT_VAST_TEXT)
        parsed.append(VtrackPut(
            bidid, bidder, value, _integer(put, "ttlseconds", index, INT32), _optional_text(put.get("aid")),
            _optional_text(put.get("timestamp")),
        ))
    return parsed


class VtrackEndpoint:
    def __init__(
        self,
        cache: CacheService,
        accounts: AccountStore,
        registry: Registry,
        external_url: str,
        analytics: Analytics,
        metrics: Metrics,
    ) -> None:
        self.cache = cache
        self.accounts = accounts
        self.registry = registry
        self.external_url = external_url.rstrip("/")
        self._own_tracker = self.external_url + "/event?t=imp"  # what the auction inserts (carries_impression)
        self.analytics = analytics
        self.metrics = metrics
        self._outcomes = {s: metrics.counter(metrics.vtrack_requests, str(s)) for s in VTRACK_STATUSES}

    def _finish(
        self, response: web.Response, account: str, puts: list[VtrackPut], keys: list[str], error: str = ""
    ) -> web.Response:
        counter = self._outcomes.get(response.status)  # the usual ones, exported from the start
        if counter is None:
            counter = self.metrics.counter(self.metrics.vtrack_requests, str(response.status))
        counter.inc()
        if self.analytics.enabled:
            self.analytics.log(vtrack_record(
                response.status, account, [(p.bidid, p.bidder) for p in puts], keys, [error] if error else [],
            ))
        return response

    async def handle(self, request: web.Request) -> web.Response:
        account_id = request.query.get("a", "")
        puts: list[VtrackPut] = []
        try:
            if not account_id:
                raise _bad("Account 'a' is required query parameter and can't be empty")
            body = await read_body(request)
            puts = parse_vtrack_body(body, self.cache.max_num_values)
            integration = request.query.get("int")
            if integration:
                problem = integration_problem(integration)
                if problem:
                    raise _bad(problem)
            try:
                account = self.accounts.cached(account_id) or await self.accounts.load(account_id)
            except AccountError as exc:
                raise HttpError(exc.status, exc.message) from None
            items = self._items(
                puts, account_id, integration or None, account.settings.events.enabled, account.settings.vtrack.ttl
            )
        except HttpError as exc:
            return self._finish(text_response(exc.status, exc.message), account_id, puts, [], exc.message)
        try:
            keys = await self.cache.put_many(items, CACHE_TIMEOUT_SECONDS)
        except CacheStoreError as exc:
            message = f"Error occurred while sending request to cache: {exc}"
            return self._finish(text_response(500, message), account_id, puts, [], message)
        response = FastResponse(body=responses_body(keys), content_type="application/json")
        return self._finish(response, account_id, puts, keys)

    def _items(
        self, puts: list[VtrackPut], account_id: str, integration: str | None, events_enabled: bool,
        account_ttl: int = 0,
    ) -> list[CacheItem]:
        items = []
        for index, put in enumerate(puts):
            value = put.value
            if (
                events_enabled
                and self.registry.vast_modifiable(put.bidder)
                and not carries_impression(value, self._own_tracker)  # the auction's tracker: not twice
            ):
                url = tracking_url(
                    self.external_url, put.bidid, account_id, put.bidder, put.aid, put.timestamp, integration
                )
                modified = insert_impression(value, url)
                if modified is None:
                    log.debug("VastXml does not contain neither InLine nor Wrapper for %s response", put.bidder)
                else:
                    value = modified
            item = CacheItem("xml", value.encode(), self.cache.ttl(_put_ttl(put.ttl_seconds, account_ttl)))
            problem = self.cache.size_problem(index, item)
            if problem:
                raise _bad(problem)
            items.append(item)
        return items
