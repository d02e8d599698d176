"""The chooser's outcomes kept for one /cookie_sync plan (a kind of request of one account).

Without a cookie, what :func:`hbserver.usersync.chooser.choose` gives for a plan depends only on
the order the bidders are looked at (one of the plan's few permutations) and the TCF decisions,
which are read from the consent string's choices (``hbserver.privacy.tcf2.choices_key``) and the
vendor list alone. Users who made the same choices with the same CMP share those, so an outcome
kept by (order, choices, list) answers every later such request without walking the chooser.
A miss costs a key, a look-up and the kept :class:`Outcome` on top of the walk; the answer's body
is cut where the consent goes only when the outcome is used again.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING

from hbserver.usersync.chooser import Chosen, Evaluation

if TYPE_CHECKING:
    from hbserver.metrics import PendingCounter

OUTCOMES_PER_PLAN = 64  # outcomes one plan keeps: emptied when full (choices keys are many)


class Outcome:
    """One kept walk of the chooser: its chosen bidders and evaluations, the ``syncer_requests``
    handles those evaluations count, and (made on first use) the answer's body cut where the
    consent string goes."""

    __slots__ = ("body_pieces", "chosen", "counters", "evaluations")

    def __init__(
        self, chosen: list[Chosen], evaluations: list[Evaluation], counters: tuple[PendingCounter, ...]
    ) -> None:
        self.chosen = chosen
        self.evaluations = evaluations
        self.counters = counters
        # None: not made yet; (): the answer cannot be cut (an entry renders whole each time)
        self.body_pieces: tuple[bytes, ...] | None = None


def keep(outcomes: dict[Hashable, Outcome], key: Hashable, outcome: Outcome) -> None:
    """Keep ``outcome`` under ``key``, emptying ``outcomes`` first when it holds OUTCOMES_PER_PLAN."""
    if len(outcomes) >= OUTCOMES_PER_PLAN:
        outcomes.clear()
    outcomes[key] = outcome


def body_pieces(head: bytes, entries: Sequence[Sequence[bytes]], tail: bytes) -> tuple[bytes, ...]:
    """The pieces that ``consent.join`` makes into ``head + b",".join(consent.join(e) for e in
    entries) + tail`` for any ``consent``: each entry's pieces, with the text between two consent
    slots merged into one piece."""
    pieces: list[bytes] = []
    current = head
    for index, entry in enumerate(entries):
        if index:
            current += b","
        current += entry[0]
        for piece in entry[1:]:
            pieces.append(current)
            current = piece
    pieces.append(current + tail)
    return tuple(pieces)
