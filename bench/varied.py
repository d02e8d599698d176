"""Requests that vary as production traffic does: ``{{token}}`` templates, rendered per request.

A varied scenario's path and body hold tokens; request *n* (from 1) gets each token's value for *n*.
The same rules are written twice, here (the open-loop generator, ``bench.instructions``, the tests)
and in ``bench/scripts/varied.lua`` (wrk), and ``tests/test_bench_varied.py`` checks that both
render the same requests. Every value is a pure function of *n*, so a run is repeatable.

Tokens:

- ``n``: the request number (every request its own id, user, page...).
- ``ip``: an IPv4 address of its own per request (public ranges: 11.x.y.z to 210.x.y.z).
- ``page``: a page of 80 % of requests repeating one of :data:`MIXED_PAGES` pages, 20 % new ones
  (request numbers divisible by 5); the ``amp_mixed`` mix.
- ``tcf``: :data:`TCF_BASE` (a TCF v2 string) with its ``Created`` field (base64url characters 1-6,
  the 36 bits after the version) written from *n*: a valid consent string of its own per request,
  with the same purposes and vendors, as every user's string differs from every other's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

MIXED_PAGES = 50
NEW_PAGE_EVERY = 5  # one request in five asks for a page never seen before
# The bench's TCF v2 string (bench.scenarios.AUCTION_GDPR_CONSENT): all purposes, the three bidders' vendors.
TCF_BASE = "CPXegUAPXegUAAfKABENB-EsAP_AAAAAAAYgAmAAAAAEAABAAABAAAAA"
BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_TOKEN = re.compile(r"\{\{([a-z]+)\}\}")


def ip(n: int) -> str:
    return f"{11 + (n >> 24) % 200}.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}"


def page(n: int) -> str:
    """A page name: ``new<n>`` for one request in :data:`NEW_PAGE_EVERY`, else ``p<k>`` of the repeating set."""
    if n % NEW_PAGE_EVERY == 0:
        return f"new{n}"
    repeating = n - n // NEW_PAGE_EVERY  # this request's number among the repeating ones
    return f"p{(repeating * 7919) % MIXED_PAGES}"


def tcf(n: int) -> str:
    digits = []
    value = n
    for _ in range(6):
        digits.append(BASE64URL[value % 64])
        value //= 64
    return TCF_BASE[0] + "".join(reversed(digits)) + TCF_BASE[7:]


TOKENS: dict[str, Callable[[int], str]] = {"n": str, "ip": ip, "page": page, "tcf": tcf}


@dataclass(frozen=True)
class Template:
    """Text cut at its tokens: ``parts[0] + value(names[0]) + parts[1] + ...``."""

    parts: tuple[str, ...]
    names: tuple[str, ...]

    @classmethod
    def of(cls, text: str) -> Template:
        parts, names, at = [], [], 0
        for match in _TOKEN.finditer(text):
            if match.group(1) not in TOKENS:
                raise ValueError(f"unknown token {match.group(0)}; known: {', '.join(TOKENS)}")
            parts.append(text[at : match.start()])
            names.append(match.group(1))
            at = match.end()
        parts.append(text[at:])
        return cls(tuple(parts), tuple(names))

    def render(self, n: int) -> str:
        out = [self.parts[0]]
        for name, part in zip(self.names, self.parts[1:], strict=True):
            out += (TOKENS[name](n), part)
        return "".join(out)


def has_tokens(text: str) -> bool:
    return _TOKEN.search(text) is not None
