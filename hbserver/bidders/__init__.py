"""Bidder definitions (``definitions/<code>.yaml``) and the registry built from them."""

from collections.abc import Mapping
from pathlib import Path

DEFINITIONS = Path(__file__).resolve().parent / "definitions"


def alias_codes(directory: Path) -> frozenset[str]:
    """Definitions that are aliases (an ``alias_of:`` line), found without parsing YAML at import."""
    return frozenset(
        path.stem
        for path in directory.glob("*.yaml")
        if any(line.startswith("alias_of:") for line in path.read_text(encoding="utf-8").splitlines())
    )


# PBS-Java's names for bidders PBS-Go names otherwise (PBS-Java's bidder-config/*.yaml), each served as an
# alias of PBS-Go's code: a request or account written for PBS-Java works unchanged, its bids under the
# name it used. Names that differ only in case (adkerneladn, audiencenetwork, sspbc, stroeercore) need
# no entry: bidder names are matched case-insensitively. Read by registry.read_definitions.
PBS_JAVA_SPELLINGS: Mapping[str, str] = {
    "thirtythreeacross": "33across",
    "ttx": "33across",
    "emxdigital": "emx_digital",
    "alliancegravity": "alliance_gravity",
    "colossusssp": "colossus",
}
# Every bidder code hbserver has built in (one definition file each, and PBS-Java's spellings), aliases included.
BUILTIN_CODES: frozenset[str] = frozenset(path.stem for path in DEFINITIONS.glob("*.yaml")) | set(PBS_JAVA_SPELLINGS)
# The built-in codes that are an alias of another (PBS's catalogue aliases, e.g. adform of adf; PBS-Java's spellings).
BUILTIN_ALIASES: frozenset[str] = alias_codes(DEFINITIONS) | set(PBS_JAVA_SPELLINGS)
# The built-in adapters: codes with an implementation of their own; a host's `adapters:` code that
# is not built in must be an alias of one of these.
BUILTIN_ADAPTERS: frozenset[str] = BUILTIN_CODES - BUILTIN_ALIASES
