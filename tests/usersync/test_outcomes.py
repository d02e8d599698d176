"""The /cookie_sync outcome memo's pieces: the body cut where the consent goes, and its bound."""

from __future__ import annotations

import pytest

from hbserver.usersync import outcomes
from hbserver.usersync.outcomes import Outcome, body_pieces, keep

HEAD, TAIL = b'{"bidder_status":[', b"]}\n"


@pytest.mark.parametrize(
    "entries",
    [
        [],
        [(b'{"a":"x', b'y"}')],
        [(b'{"a":1}',)],
        [(b'{"a":"x', b'y"}'), (b'{"b":1}',), (b'{"c":"', b"&", b'"}')],
        [(b"", b""), (b"",)],
    ],
)
@pytest.mark.parametrize("consent", [b"", b"CPX.YA", b"a-b_c"])
def test_body_pieces_join_to_the_body_for_any_consent(entries, consent):
    expected = HEAD + b",".join(consent.join(entry) for entry in entries) + TAIL
    assert consent.join(body_pieces(HEAD, entries, TAIL)) == expected


def test_kept_outcomes_are_bounded(monkeypatch):
    monkeypatch.setattr(outcomes, "OUTCOMES_PER_PLAN", 3)
    kept: dict = {}
    for n in range(10):
        outcome = Outcome([], [], ())
        keep(kept, n, outcome)
        assert len(kept) <= 3 and kept[n] is outcome
    assert len(kept) == 1  # emptied when full, then filled again
