"""GET /getuids: the uids the cookie holds, ``{"buyeruids": {key: uid}}`` (``{}`` when none)."""

from __future__ import annotations

import orjson
from aiohttp import web

from hbserver.usersync.service import SyncService, utcnow
from hbserver.web.cookies import request_cookies

JSON_UTF8 = "application/json; charset=utf-8"
HEADERS = {"Content-Type": JSON_UTF8, "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}


class GetUIDsEndpoint:
    def __init__(self, service: SyncService) -> None:
        self.service = service

    async def handle(self, request: web.Request) -> web.Response:
        cookie = self.service.read_cookie(request_cookies(request), utcnow())
        uids = cookie.buyeruids()
        document = {"buyeruids": uids} if uids else {}
        body = orjson.dumps(document, option=orjson.OPT_SORT_KEYS) + b"\n"
        return web.Response(body=body, headers=HEADERS)
