"""Reads EXCEPTIONS.md: fixtures whose expected error texts are Go wording we do not reproduce.

Each row of its table is ``| `<bidder>/<folder>/<file>.json` | reason |``. A listed fixture is still
run in full; only the wording of its errors goes unchecked (their number still counts).
"""

from __future__ import annotations

import re
from pathlib import Path

EXCEPTIONS_FILE = Path(__file__).with_name("EXCEPTIONS.md")
_ROW = re.compile(r"^\|\s*`(?P<key>[^`]+\.json)`\s*\|\s*(?P<reason>.*?)\s*\|\s*$")


def read_exceptions(path: Path = EXCEPTIONS_FILE) -> dict[str, str]:
    """Fixture key -> reason."""
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        match = _ROW.match(line)
        if match:
            found[match["key"]] = match["reason"]
    return found
