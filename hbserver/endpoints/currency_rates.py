"""GET /currency/rates (admin): the server's currency rates, shaped as PBS-Go's endpoint.

``{"active": false}`` without ``currency.fetch_url``; else ``active``, ``source``,
``fetchingIntervalNs``, ``lastUpdated`` (Go's zero time before the first good file) and ``rates``,
plus the file's ``dataAsOf`` under ``additionalInfo``. Unlike PBS-Go, which builds the answer once
at start-up, it shows the rates in use now (this worker's).
"""

from __future__ import annotations

import orjson
from aiohttp import web

from hbserver.auction.bids.currency_fetch import ServerRates, rates_info


class CurrencyRatesEndpoint:
    def __init__(self, rates: ServerRates) -> None:
        self.rates = rates

    async def handle(self, request: web.Request) -> web.Response:
        return web.Response(body=orjson.dumps(rates_info(self.rates)), content_type="application/json")
