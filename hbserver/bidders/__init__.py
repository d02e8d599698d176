"""Bidder definitions (``definitions/<code>.yaml``) and the registry built from them."""

from pathlib import Path

DEFINITIONS = Path(__file__).resolve().parent / "definitions"

# Adapter codes hbserver has built in (one definition file each); any other code in `adapters:`
# must be an alias of one.
BUILTIN_ADAPTERS: frozenset[str] = frozenset(path.stem for path in DEFINITIONS.glob("*.yaml"))
