"""GET /event: win and impression notifications (spec §4.1, DECISIONS "/event")."""

from __future__ import annotations

from aiohttp import web

from hbserver.analytics import Analytics
from hbserver.analytics.records import notification_record
from hbserver.events import EVENT_TYPES, FORMAT_IMAGE, PIXEL_PNG, EventRequestError, parse_event_query
from hbserver.metrics import Metrics
from hbserver.stores.accounts import AccountError, AccountStore
from hbserver.web.errors import text_response
from hbserver.web.query import query_of
from hbserver.web.requestlog import ACCOUNT
from hbserver.web.response import FastResponse


class EventEndpoint:
    """Holds what the handler needs, so the hot path does no application-state lookups."""

    def __init__(
        self, accounts: AccountStore, analytics: Analytics, metrics: Metrics, note_account: bool = True
    ) -> None:
        """``note_account``: hand the account to the access log (off when it samples nothing)."""
        self.note_account = note_account
        self.accounts = accounts
        self.analytics = analytics
        self.accepted = {t: metrics.counter(metrics.event_notifications, t) for t in EVENT_TYPES}

    async def handle(self, request: web.Request) -> web.Response:
        try:
            event = parse_event_query(query_of(request))
        except EventRequestError as exc:
            return text_response(exc.status, exc.message)
        accounts = self.accounts
        if self.note_account:
            request[ACCOUNT] = event.account  # for the access log
        try:
            account = accounts.cached(event.account) or await accounts.load(event.account)
        except AccountError as exc:
            return text_response(exc.status, exc.message)
        if event.analytics:
            if not account.settings.events.enabled:
                return text_response(401, f"Account '{event.account}' doesn't support events")
            if self.analytics.enabled:  # under the account's reportAnalytics (PBS-Go's event endpoint)
                activities = account.activities
                record = notification_record(event, account=account)
                self.analytics.log(record, activities if activities.any() else None)
        self.accepted[event.type].inc()
        if event.format == FORMAT_IMAGE:
            return FastResponse(body=PIXEL_PNG, content_type="image/png")
        return FastResponse()
