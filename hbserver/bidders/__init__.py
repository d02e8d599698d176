"""Bidder definitions (``definitions/<code>.yaml``) and the registry built from them."""

from pathlib import Path

DEFINITIONS = Path(__file__).resolve().parent / "definitions"


def alias_codes(directory: Path) -> frozenset[str]:
    """Definitions that are aliases (an ``alias_of:`` line), found without parsing YAML at import."""
    return frozenset(
        path.stem
        for path in directory.glob("*.yaml")
        if any(line.startswith("alias_of:") for line in path.read_text(encoding="utf-8").splitlines())
    )


# Every bidder code hbserver has built in (one definition file each), aliases included.
BUILTIN_CODES: frozenset[str] = frozenset(path.stem for path in DEFINITIONS.glob("*.yaml"))
# The built-in codes that are an alias of another (PBS's catalogue aliases, e.g. adform of adf).
BUILTIN_ALIASES: frozenset[str] = alias_codes(DEFINITIONS)
# The built-in adapters: codes with an implementation of their own; a host's `adapters:` code that
# is not built in must be an alias of one of these.
BUILTIN_ADAPTERS: frozenset[str] = BUILTIN_CODES - BUILTIN_ALIASES
