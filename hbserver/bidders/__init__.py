"""Bidder definitions. The full registry (sync endpoints, GVL ids, media types) lives here."""

# Adapter codes hbserver has built in; any other code in `adapters:` must be an alias of one.
BUILTIN_ADAPTERS: frozenset[str] = frozenset(
    {"generic", "appnexus", "rubicon", "pubmatic", "ix", "openx", "triplelift"}
)
