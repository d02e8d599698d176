"""GET /event: win and impression notifications (spec §4.1, DECISIONS "/event")."""

from __future__ import annotations

from aiohttp import web

from hbserver.analytics.records import notification_record
from hbserver.appkeys import ACCOUNTS, ANALYTICS, METRICS
from hbserver.events import FORMAT_IMAGE, PIXEL_PNG, EventRequestError, parse_event_query
from hbserver.stores.accounts import AccountError
from hbserver.web.errors import text_response


async def handle_event(request: web.Request) -> web.Response:
    try:
        event = parse_event_query(request.query)
    except EventRequestError as exc:
        return text_response(exc.status, exc.message)
    app = request.app
    try:
        account = await app[ACCOUNTS].get(event.account)
    except AccountError as exc:
        return text_response(exc.status, exc.message)
    if event.analytics:
        if not account.settings.events.enabled:
            return text_response(401, f"Account '{event.account}' doesn't support events")
        analytics = app[ANALYTICS]
        if analytics.enabled:
            analytics.log(notification_record(event))
    app[METRICS].event_notifications.labels(event.type).inc()
    if event.format == FORMAT_IMAGE:
        return web.Response(body=PIXEL_PNG, content_type="image/png")
    return web.Response()
