"""What the bidder_request hook set on a bidder's request, kept for its raw_bidder_response hook
(in the module context under the bidder's code, PBS-Go's ``blockingAttributes``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class BlockingAttributes:
    badv: tuple[str, ...] = ()
    bapp: tuple[str, ...] = ()
    bcat: tuple[str, ...] = ()
    btype: Mapping[str, tuple[int, ...]] = field(default_factory=dict)  # by imp id
    battr: Mapping[str, tuple[int, ...]] = field(default_factory=dict)  # by imp id (banner, then video, audio)
    cattax: int = 0


NONE_BLOCKED = BlockingAttributes()
