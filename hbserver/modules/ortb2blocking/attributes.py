"""What the bidder_request hook set on a bidder's request, kept for its raw_bidder_response hook
(in the module context under the bidder's code, PBS-Go's ``blockingAttributes``)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

_NO_IMPS: Mapping[str, tuple[int, ...]] = MappingProxyType({})


class BlockingAttributes(NamedTuple):
    """Immutable; a named tuple because one is made for every bidder of every auction (a frozen
    dataclass costs several times more to build)."""

    badv: tuple[str, ...] = ()
    bapp: tuple[str, ...] = ()
    bcat: tuple[str, ...] = ()
    btype: Mapping[str, tuple[int, ...]] = _NO_IMPS  # by imp id
    battr: Mapping[str, tuple[int, ...]] = _NO_IMPS  # by imp id (banner, then video, audio)
    cattax: int = 0


NONE_BLOCKED = BlockingAttributes()
