"""What every stored-data backend shares: the kinds, the backend protocol, ids and error texts.

A backend answers a batch ``{kind: [id, ...]}`` with ``{kind: {id: raw JSON | Failure}}``; an id
it leaves out is not stored there. A :class:`Failure` is a per-id problem (an unreadable file);
:class:`BackendError` fails the whole batch (database down, HTTP 500).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from hbserver.stores.filesystem import MAX_ID_LENGTH

Kind = Literal["requests", "imps", "responses", "accounts", "profiles"]
KINDS: tuple[Kind, ...] = ("requests", "imps", "responses", "accounts", "profiles")

# The directory under ``directorypath`` and the PostgreSQL table of each kind (CONTRACT §3; ``profiles``,
# PBS-Java's, is hbserver's addition: an optional table, a directory that may be absent).
LOCATIONS: dict[Kind, str] = {
    "requests": "stored_requests",
    "imps": "stored_imps",
    "responses": "stored_responses",
    "accounts": "accounts",
    "profiles": "profiles",
}

# "Stored <noun> with ID=..." (PBS-Go's NotFoundError texts).
NOUNS: dict[Kind, str] = {
    "requests": "Request", "imps": "Imp", "responses": "Response", "accounts": "Account", "profiles": "Profile",
}

SHOWN_ID_CHARS = 64  # of an invalid id quoted in its error


@dataclass(frozen=True, slots=True)
class Failure:
    """Why one id could not be fetched from one backend (it may still exist there).

    ``label`` is the metric's reason label (error, timeout, unavailable, status, too_large, malformed).
    ``reason`` reaches error texts sent to clients, so it never names a host, a port, a URL or a
    path; ``detail`` (which may) goes to the log only.
    """

    reason: str
    label: str = "error"
    detail: str = ""


class BackendError(Exception):
    """A whole batch failed; ``reason`` is the metric label, as :attr:`Failure.label`.

    ``message`` is shown to clients (no hosts, ports, URLs or paths); ``detail`` is logged only.
    """

    def __init__(self, message: str, reason: str = "error", detail: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason
        self.detail = detail

    def failure(self) -> Failure:
        return Failure(self.message, self.reason, self.detail)


Wanted = Mapping[Kind, Sequence[str]]
Answer = dict[Kind, dict[str, "bytes | Failure"]]


class Backend(Protocol):
    name: str

    async def fetch(self, wanted: Wanted) -> Answer:
        """The stored JSON of the ids this backend holds; raises BackendError when it cannot answer."""


def not_found(kind: Kind, item_id: str) -> str:
    return f'Stored {NOUNS[kind]} with ID="{item_id}" not found.'


def not_fetched(kind: Kind, item_id: str, why: str) -> str:
    return f'Stored {NOUNS[kind]} with ID="{item_id}" could not be fetched: {why}'


def id_problem(item_id: str) -> str | None:
    """Why an id is never looked up (empty, too long, control characters), or None when it is fine.

    Too long is more than MAX_ID_LENGTH characters, or bytes in UTF-8: a longer file name is
    refused by the filesystem, which must not turn a client's id into a backend failure."""
    if not item_id:
        return "empty"
    if len(item_id) > MAX_ID_LENGTH:
        return f"longer than {MAX_ID_LENGTH} characters"
    if not item_id.isprintable():
        return "contains control characters"
    if not item_id.isascii() and len(item_id.encode("utf-8", "replace")) > MAX_ID_LENGTH:
        return f"longer than {MAX_ID_LENGTH} bytes in UTF-8"
    return None


def invalid(kind: Kind, item_id: str, why: str) -> str:
    shown = item_id if len(item_id) <= SHOWN_ID_CHARS else item_id[:SHOWN_ID_CHARS] + "..."
    return f'Stored {NOUNS[kind]} with ID="{shown}" is invalid: {why}'
