"""The error that refuses an auction request with HTTP 400 (PBS-Go's ``Invalid request: ...`` lines)."""

from __future__ import annotations

from collections.abc import Sequence


class RequestError(ValueError):
    """A fatal problem with the request. ``str(err)`` is the fatal text; ``lines`` are every line of the
    400 body in PBS-Go's order: the warnings PBS-Go had collected before the fatal problem, then it."""

    def __init__(self, message: str, earlier: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.lines: list[str] = [*earlier, message]


def refusal_text(error: RequestError) -> str:
    """The 400 body PBS-Go writes: one ``Invalid request: <line>`` per line, each ending in a newline."""
    return "".join(f"Invalid request: {line}\n" for line in error.lines)
