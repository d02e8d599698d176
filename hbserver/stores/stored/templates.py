"""PBS-Go's database query templates: ``$REQUEST_ID_LIST``, ``$IMP_ID_LIST`` and ``$LAST_UPDATED``.

A template is the host's own SQL (``stored_requests.database.fetcher.query`` and ``amp_query``,
``poll_for_updates.query`` and ``amp_query``) whose rows are ``id, data, type``. Each parameter
becomes driver placeholders and its values arguments, never text in the query:

- PostgreSQL numbers its placeholders: a list is ``($1, $2)``, a value ``$3``; every occurrence of a
  parameter names the same numbers (PBS-Go's postgres provider).
- MySQL's are positional (``%s`` here, asyncmy's format): each occurrence takes its own arguments, in
  the order the occurrences stand in the query (PBS-Go's mysql provider). A ``%`` of the host's
  query is doubled so that the driver reads it as itself.

An empty list is ``(NULL)``: ``id IN ()`` is not SQL, ``id IN (NULL)`` matches nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

Style = Literal["numbered", "positional"]
Param = tuple[str, "Sequence[str] | object"]

REQUEST_IDS = "REQUEST_ID_LIST"
IMP_IDS = "IMP_ID_LIST"
LAST_UPDATED = "LAST_UPDATED"

# The ``type`` column's words (PBS-Go's) and the kinds they name.
ROW_TYPES = {"request": "requests", "imp": "imps", "response": "responses"}


def prepare(template: str, params: Sequence[Param], style: Style) -> tuple[str, list[object]]:
    """The query with placeholders for ``params`` (``(name, list)`` or ``(name, value)``), and its arguments."""
    if style == "numbered":
        return _numbered(template, params)
    return _positional(template.replace("%", "%%"), params)


def _is_list(value: object) -> bool:
    return isinstance(value, (list, tuple))


def _numbered(query: str, params: Sequence[Param]) -> tuple[str, list[object]]:
    args: list[object] = []
    for name, value in params:
        if _is_list(value):
            values = list(value)  # type: ignore[call-overload]
            first = len(args) + 1
            text = "(" + ", ".join(f"${n}" for n in range(first, first + len(values))) + ")" if values else "(NULL)"
            args.extend(values)
        else:
            args.append(value)
            text = f"${len(args)}"
        query = query.replace("$" + name, text)
    return query, args


def _positional(query: str, params: Sequence[Param]) -> tuple[str, list[object]]:
    by_name = dict(params)
    if not by_name:
        return query, []
    pattern = re.compile("|".join(re.escape("$" + name) for name in sorted(by_name, key=len, reverse=True)))
    args: list[object] = []

    def placeholder(match: re.Match[str]) -> str:
        value = by_name[match.group(0)[1:]]
        if not _is_list(value):
            args.append(value)
            return "%s"
        values = list(value)  # type: ignore[call-overload]
        args.extend(values)
        return "(" + ", ".join(["%s"] * len(values)) + ")" if values else "(NULL)"

    return pattern.sub(placeholder, query), args
