"""Is this installation whole? The files the server reads from its own package at run time.

A wheel built without its package data (bidder definitions, parameter schemas, helper pages)
still imports, and would answer every auction with "unknown bidder" while /status said healthy.
So start-up refuses such an installation (exit 2, one line per problem), and an application
built from one answers 503 on /status. This module imports nothing that loads
prometheus-client: the CLI calls it before the supervisor picks the metrics mode.
"""

from __future__ import annotations

from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

from hbserver.adapters import adapter_module, has_adapter
from hbserver.adapters.params import SCHEMALESS_ADAPTERS, SCHEMAS
from hbserver.bidders import DEFINITIONS, alias_codes

# The helper pages served under /static/ (hbserver/endpoints/static.py).
STATIC_FILES = ("load-cookie.html", "load-cookie-with-consent.html", "usersync.js", "optout.html")
REINSTALL = "the installation is incomplete; reinstall hbserver"


def installation_problems(
    definitions: Path = DEFINITIONS, schemas: Path = SCHEMAS, static: Traversable | None = None
) -> list[str]:
    """One line per missing piece of the package, or [] when every piece is in place."""
    codes = sorted(path.stem for path in definitions.glob("*.yaml"))
    if not codes:
        return [f"no bidder definitions found in {definitions}: {REINSTALL}"]
    problems = []
    aliases = alias_codes(definitions)
    for code in codes:
        if code in aliases:
            continue  # runs its parent's adapter
        if not has_adapter(code):
            problems.append(f"bidder definition {code!r} has no adapter module {adapter_module(code)} nor recipe "
                            f"recipes/{code}.yaml: {REINSTALL}")
        if code not in SCHEMALESS_ADAPTERS and not (schemas / f"{code}.json").is_file():
            problems.append(f"no parameter schema for bidder {code!r} in {schemas}: {REINSTALL}")
    if static is None:
        static = resources.files("hbserver") / "static"
    for name in STATIC_FILES:
        if not (static / name).is_file():
            problems.append(f"helper page static/{name} is missing from the package: {REINSTALL}")
    return problems
