"""Requests for a fixed path (``/status``, ``/event``, ``/setuid``, ``/cookie_sync``, ...) handed to
their route's handler without aiohttp's per-request routing.

For every request, ``Application._handle`` reads the loop's debug flag, walks the router's index
(``UrlDispatcher.resolve``, then the resource's ``resolve`` and ``_match``), makes a
``UrlMappingMatchInfo``, adds the application to it, freezes it and looks for an ``Expect``
header: about as much Python as a small endpoint's own work. For a plain (fixed-path) route the
outcome never changes, so :func:`fast_request_handler` keeps one frozen match info per
(method, path), made at start-up the way aiohttp makes it, and looks it up in one dict.

Exactly what aiohttp would pick is kept: a (method, path) pair is in the table only when the
first plain resource registered for that path has a route for that method (as ``resolve`` tries
them in registration order) and none before it takes any method. Everything else (other paths,
methods and dynamic routes, so the catch-all too; requests with ``Expect``; applications with
middlewares or domain sub-applications) goes through ``Application._handle`` unchanged.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import hdrs, web
from aiohttp.web_urldispatcher import PlainResource, UrlMappingMatchInfo

RequestHandler = Callable[[web.BaseRequest], Awaitable[web.StreamResponse]]
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
PlainRoute = tuple[Handler, UrlMappingMatchInfo]  # a handler and its frozen match info
PlainRoutes = dict[str, dict[str, PlainRoute]]  # method -> path -> its route
_EXPECT = hdrs.EXPECT


def plain_route_table(app: web.Application) -> PlainRoutes | None:
    """method -> path -> (handler, its frozen match info) for ``app``'s plain routes, or None when
    the application's requests must all take aiohttp's path (middlewares, domain sub-apps,
    ``on_response_prepare`` signals, which :meth:`FastResponse.send_at_once` would skip)."""
    router = app.router
    if app._run_middlewares or router._matched_sub_app_resources or app.on_response_prepare:
        return None
    table: PlainRoutes = {}
    paths = {resource.canonical for resource in router.resources() if type(resource) is PlainResource}
    for path in paths:
        # resolve() tries the resources indexed under the whole path first, in registration order
        for resource in router._resource_index.get(path, ()):
            if type(resource) is not PlainResource or resource.canonical != path:
                break  # it might match this path: what it would not take is left to aiohttp
            for route in resource:
                if route.method != hdrs.METH_ANY:
                    match_info = UrlMappingMatchInfo({}, route)
                    match_info.add_app(app)
                    match_info.freeze()
                    table.setdefault(route.method, {}).setdefault(path, (route.handler, match_info))
            if any(route.method == hdrs.METH_ANY for route in resource):
                break  # it takes every other method
    return table


def fast_request_handler(app: web.Application, fallback: RequestHandler) -> RequestHandler:
    """The server's request handler: plain routes dispatched from the table, the rest to ``fallback``
    (``app._handle``). Call it once the application has started (its router is frozen)."""
    table = plain_route_table(app)
    if table is None:
        return fallback

    async def handle(request: web.BaseRequest) -> web.StreamResponse:
        paths = table.get(request.method)
        found = paths.get(request.rel_url.path_safe) if paths is not None else None
        if found is None or _EXPECT in request.headers:
            return await fallback(request)
        handler, match_info = found
        request._match_info = match_info  # type: ignore[attr-defined]  # a web.Request, as aiohttp sets it
        return await handler(request)  # type: ignore[arg-type]

    return handle
