"""A request's query parameters as a plain ``name -> first value`` dict, read without yarl's parse.

``request.query`` makes yarl split the query in Python, pair by pair, then build a ``MultiDict``
and its proxy: on /event and /setuid, endpoints of a few tens of µs, about a tenth of the work.
:func:`query_of` splits a query with nothing to decode (no ``%``; ``+`` is a space) into a plain
dict in one loop (a regex ``findall`` measured twice as slow as yarl's parse). Each name keeps its
first value, as ``MultiDict.get`` gives it; the empty name is not kept (no endpoint reads it). A
query with a ``%`` or a ``#`` is left to yarl (``request.query``), so decoding and fragments stay
exactly aiohttp's.
"""

from __future__ import annotations

from collections.abc import Mapping

from aiohttp import web

_NONE: Mapping[str, str] = {}


def query_of(request: web.BaseRequest) -> Mapping[str, str]:
    """``request``'s query parameters, each name with its first value (read-only by convention)."""
    target = request._message.path
    cut = target.find("?")
    if cut < 0:
        return _NONE
    query = target[cut + 1 :]
    if "%" in query or "#" in query:
        return request.query
    found: dict[str, str] = {}
    for part in query.replace("+", " ").split("&"):
        name, _, value = part.partition("=")
        if name not in found:  # the first value wins
            found[name] = value
    found.pop("", None)
    return found
