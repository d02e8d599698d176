#!/usr/bin/env python3
"""Build a Prebid.js bundle holding only the named modules from the npm package's prebuilt chunks.

This is what Prebid.js's own ``gulp bundle --modules=...`` does (``gulpfile.js#bundle()`` and
``#wrapWithHeaderAndFooter()``), without npm install, gulp or webpack ("Route A" in
shared/reference/real-clients-and-performance.md §1.2):

1. read ``dist/chunks/dependencies.json`` from the unpacked package;
2. the entries are, de-duplicated in this order: ``prebid-core.js``; the dependencies of
   ``prebid-core.js`` and of every requested module chunk; the requested module chunks
   (a requested module without a chunk is an error);
3. render ``bundle-template.txt`` (a lodash template) with ``package.json``'s name, version and
   ``globalVarName``, put the sources inside ``(function(){ ... })()`` at ``$$PREBID_SOURCE$$``,
   and join header, chunks and footer with newlines (gulp-concat's separator).

Only the standard library is used, so any ``python3`` can run it::

    python3 scripts/build_prebid_bundle.py --package .cache/npm/prebid.js-11.36.0/package \\
        --out .cache/npm/prebid-11.36.0-pbs.js prebidServerBidAdapter
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

PLACEHOLDER = "$$PREBID_SOURCE$$"
CORE = "prebid-core.js"
# gulpfile.js#MODULES_REQUIRING_METADATA: these also pull in "<module>.metadata.js" chunks.
MODULES_REQUIRING_METADATA = ("storageControl",)
_TAG = re.compile(r"<%(=?)(.*?)%>", re.DOTALL)


class BundleError(Exception):
    """The package cannot produce the requested bundle."""


def bundle_entries(chunks: Path, modules: Sequence[str], package: Path) -> list[str]:
    """The chunk file names to concatenate, in gulp's order."""
    if not modules:
        raise BundleError("no modules requested")
    try:
        graph: dict[str, list[str]] = json.loads((chunks / "dependencies.json").read_text())
    except (OSError, ValueError) as exc:
        raise BundleError(f"cannot read {chunks / 'dependencies.json'}: {exc}") from exc
    missing = [m for m in modules if not (chunks / f"{m}.js").is_file()]
    if missing:
        raise BundleError(f"no chunk for module(s) {', '.join(missing)} in {chunks}")
    module_files = [f"{m}.js" for m in modules]
    if any(m in MODULES_REQUIRING_METADATA for m in modules):
        for name in [*modules, "prebid-core"]:
            if (package / "metadata" / "modules" / f"{name}.json").is_file():
                module_files.append(f"{name}.metadata.js")
    dependencies: list[str] = []
    for name in [CORE, *module_files]:
        dependencies.extend(graph.get(name, []))
    entries = list(dict.fromkeys([CORE, *dependencies, *module_files]))
    absent = [name for name in entries if not (chunks / name).is_file()]
    if absent:
        raise BundleError(f"chunk file(s) listed but missing in {chunks}: {', '.join(absent)}")
    return entries


def render_template(template: str, values: dict[str, str], enable: bool) -> str:
    """Render the few lodash constructs ``bundle-template.txt`` uses: ``<%= expr %>`` for the known
    expressions in ``values`` and ``<% if(enable) {%> ... <% } %>``; anything else is an error."""
    out: list[str] = []
    keep = [True]
    position = 0
    for match in _TAG.finditer(template):
        if all(keep):
            out.append(template[position : match.start()])
        position = match.end()
        is_output, code = match.group(1) == "=", " ".join(match.group(2).split())
        if is_output:
            if code not in values:
                raise BundleError(f"unknown expression in bundle template: <%= {code} %>")
            if all(keep):
                out.append(values[code])
        elif re.fullmatch(r"if\s*\(\s*enable\s*\)\s*\{", code):
            keep.append(enable)
        elif code == "}":
            if len(keep) == 1:
                raise BundleError("unbalanced '}' in bundle template")
            keep.pop()
        else:
            raise BundleError(f"unknown statement in bundle template: <% {code} %>")
    if len(keep) != 1:
        raise BundleError("unclosed 'if' in bundle template")
    out.append(template[position:])
    return "".join(out)


def build_bundle(
    package: Path, modules: Sequence[str], today: Callable[[], datetime.date] | None = None
) -> tuple[str, list[str]]:
    """The bundle's source text for ``modules`` from the unpacked npm package directory ``package``,
    and the chunk files it holds."""
    try:
        meta = json.loads((package / "package.json").read_text())
        template = (package / "bundle-template.txt").read_text()
    except (OSError, ValueError) as exc:
        raise BundleError(f"{package} is not an unpacked prebid.js package: {exc}") from exc
    chunks = package / "dist" / "chunks"
    entries = bundle_entries(chunks, modules, package)
    date = (today or (lambda: datetime.datetime.now(datetime.UTC).date()))()
    global_name = str(meta.get("globalVarName") or "pbjs")
    values = {
        "prebid.name": str(meta["name"]),
        "prebid.version": str(meta["version"]),
        "prebid.globalVarName": global_name,
        "modules": ", ".join(modules),
        "(new Date()).toISOString().substring(0, 10)": date.isoformat(),
    }
    rendered = render_template(template, values, enable=True)
    parts = rendered.replace(PLACEHOLDER, "(function(){" + PLACEHOLDER + "})()").split(PLACEHOLDER)
    if len(parts) != 2:
        raise BundleError(f"bundle template must contain exactly one {PLACEHOLDER}")
    header, footer = parts
    sources = [(chunks / name).read_text(encoding="utf-8") for name in entries]
    return "\n".join([header, *sources, footer]), entries


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--package", type=Path, required=True, help="the unpacked npm package (its package/ folder)")
    parser.add_argument("--out", type=Path, required=True, help="where to write the bundle")
    parser.add_argument("modules", nargs="+", help="module names, e.g. prebidServerBidAdapter")
    args = parser.parse_args(argv)
    try:
        source, entries = build_bundle(args.package, args.modules)
    except BundleError as exc:
        sys.stderr.write(f"build_prebid_bundle: {exc}\n")
        return 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    partial = args.out.with_name(args.out.name + ".tmp")
    partial.write_text(source, encoding="utf-8")
    os.replace(partial, args.out)
    sys.stderr.write(f"build_prebid_bundle: {args.out} ({len(source.encode())} bytes): {' '.join(entries)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
