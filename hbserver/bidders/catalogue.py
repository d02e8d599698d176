"""The README's table of built-in bidder codes, generated from the definitions so it cannot drift:
``python -m hbserver.bidders.catalogue README.md`` rewrites the table between its markers
(``tests/bidders/test_catalogue.py`` fails when the README is stale)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from hbserver.bidders import DEFINITIONS
from hbserver.bidders.registry import read_definitions

START = "<!-- bidders-table:start (python -m hbserver.bidders.catalogue README.md) -->"
END = "<!-- bidders-table:end -->"
_CHANNELS = ("site", "app", "dooh")


def _media(definition: dict[str, Any]) -> str:
    media = definition.get("media_types") or {}
    parts = [f"{channel}: {', '.join(media[channel])}" for channel in _CHANNELS if media.get(channel)]
    return "; ".join(parts) or "—"


def table(directory: Path = DEFINITIONS) -> str:
    """One row per built-in adapter (``generic`` aside), its catalogue aliases in the same row."""
    definitions = read_definitions(directory)
    aliases: dict[str, list[str]] = {}
    for code, definition in definitions.items():
        parent = definition.get("alias_of")
        if parent:
            aliases.setdefault(parent, []).append(code)
    lines = [
        "| bidder | catalogue aliases (bidder codes served by its adapter) | GVL id | media types | starts |",
        "|---|---|---|---|---|",
    ]
    for code in sorted((c for c, d in definitions.items() if not d.get("alias_of") and c != "generic"), key=str.lower):
        definition = definitions[code]
        names = ", ".join(f"`{alias}`" for alias in sorted(aliases.get(code, ()), key=str.lower)) or "—"
        state = "disabled" if definition.get("disabled") else "enabled"
        vendor = definition.get("gvl_vendor_id") or "—"
        lines.append(f"| `{code}` | {names} | {vendor} | {_media(definition)} | {state} |")
    total = sum(1 for code in definitions if code != "generic")
    lines.append(f"\n{total} bidder codes: {len(lines) - 2} adapters and {total - (len(lines) - 2)} catalogue aliases.")
    return "\n".join(lines)


def replace_table(text: str, new_table: str) -> str:
    head, start, rest = text.partition(START)
    _old, end, tail = rest.partition(END)
    if not start or not end:
        raise ValueError("the README has no bidders table markers")
    return f"{head}{START}\n{new_table}\n{END}{tail}"


def main(argv: list[str]) -> int:
    path = Path(argv[0] if argv else "README.md")
    path.write_text(replace_table(path.read_text(), table()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
