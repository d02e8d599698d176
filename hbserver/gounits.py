"""PBS-Go's text forms of durations and sizes, as its analytics keys take them.

- :func:`go_duration`: Go's ``time.ParseDuration`` (``"900s"``, ``"15m"``, ``"2h45m"``, ``"1.5h"``,
  ``"0"``): decimal numbers each followed by a unit ``ns``, ``us`` (``µs``), ``ms``, ``s``, ``m``, ``h``,
  after one optional sign. Seconds as a float.
- :func:`human_size`: docker/go-units' ``FromHumanSize`` (``"2MB"``, ``"100KB"``, ``"1Kb"``, ``"20 mb"``):
  a number, an optional space, then an optional SI prefix ``k m g t p`` (any case), an optional ``i``
  and an optional ``b``; the prefixes are decimal (1000), as ``FromHumanSize`` reads them. Bytes.

Each raises ValueError with Go's (go-units') words for a text it refuses.
"""

from __future__ import annotations

import re

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)([^0-9.]*)")
_SIZE = re.compile(r"([0-9]+(?:\.[0-9]+)?) ?([kKmMgGtTpP])?[iI]?[bB]?")
_PREFIX = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12, "p": 10**15}


def go_duration(text: str) -> float:
    """Seconds of a Go duration string; ValueError ``time: invalid duration "<text>"`` (or
    ``missing unit``) as Go words it."""
    rest = text
    sign = 1.0
    if rest[:1] in ("+", "-"):
        sign = -1.0 if rest[0] == "-" else 1.0
        rest = rest[1:]
    if rest == "0":
        return 0.0
    if not rest:
        raise ValueError(f'time: invalid duration "{text}"')
    total = 0.0
    while rest:
        match = _PART.match(rest)  # every part of the pattern is optional: it always matches
        assert match is not None
        number, unit = match.group(1), match.group(2)
        if not number or number == ".":
            raise ValueError(f'time: invalid duration "{text}"')
        if not unit:
            raise ValueError(f'time: missing unit in duration "{text}"')
        if unit not in _UNITS:
            raise ValueError(f'time: unknown unit "{unit}" in duration "{text}"')
        total += float(number) * _UNITS[unit]
        rest = rest[match.end() :]
    return sign * total


def human_size(text: str) -> int:
    """Bytes of a go-units human size; ValueError ``invalid size: '<text>'`` as go-units words it."""
    match = _SIZE.fullmatch(text)
    if match is None:
        raise ValueError(f"invalid size: '{text}'")
    prefix = (match.group(2) or "").lower()
    return int(float(match.group(1)) * _PREFIX[prefix])
